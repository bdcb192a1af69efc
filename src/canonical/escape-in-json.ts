/**
 * Characters written as `\uXXXX` escapes in JSON text that holds them raw: the same strings to
 * a JSON parser. Outside strings JSON text holds only ASCII punctuation, digits, letters and
 * white space, and every escape before such a character is complete, so each one stands inside
 * a string and replacing it in place is exact. Used for JSONL lines (`jsonLine`) and for JSON
 * printed on a terminal (`printableJson`).
 */
export function escapeInJson(text: string, chars: RegExp): string {
  if (!chars.global) throw new Error('escapeInJson needs a global pattern');
  chars.lastIndex = 0;
  if (!chars.test(text)) return text;
  chars.lastIndex = 0;
  return text.replace(chars, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
