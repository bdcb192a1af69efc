/**
 * Masked previews for reports. Reveals at most two characters at each end (one for
 * short values, none below 8 characters), so a report identifies a value without leaking it.
 */
export function maskPreview(value: string): string {
  // Code points, so a preview never splits a surrogate pair in a user name.
  const chars = Array.from(value);
  const shown = chars.length >= 16 ? 2 : chars.length >= 8 ? 1 : 0;
  if (shown === 0) return '…';
  return chars.slice(0, shown).join('') + '…' + chars.slice(-shown).join('');
}
