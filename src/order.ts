/**
 * One order for text in every output: by code point, the same on every machine.
 * `localeCompare` follows the machine's locale (sv_SE sorts `ä` after `z`, tr_TR puts `ı`
 * before `I`), so a report or a stats table came out in another order elsewhere.
 */
export function compareText(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(i)!;
    if (x !== y) return x - y;
    // Equal astral characters take two units in both strings.
    if (x > 0xffff) i++;
  }
  return a.length - b.length;
}
