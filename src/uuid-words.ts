/** Lowercase uuids (call_ids) as 4 32-bit words and back: 16 bytes where a string would take 36 characters. */

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

function hexOfWord(w: number): string {
  return HEX[w >>> 24] + HEX[(w >>> 16) & 255] + HEX[(w >>> 8) & 255] + HEX[w & 255];
}

/** Lowercase hex digits' values by character code, -1 for any other character below 128. */
const LOWER_HEX = new Int8Array(128).fill(-1);
for (let i = 0; i < 16; i++) LOWER_HEX['0123456789abcdef'.charCodeAt(i)] = i;

/** The 4 lowercase hex digits at `at` of `text` as a number, or -1. */
function lowerHex4(text: string, at: number): number {
  let value = 0;
  for (let i = at; i < at + 4; i++) {
    const c = text.charCodeAt(i);
    const digit = c < 128 ? LOWER_HEX[c] : -1;
    if (digit < 0) return -1;
    value = (value << 4) | digit;
  }
  return value;
}

/** The 4 lowercase hex digits at `a` and the 4 at `b` of `text` as one word, or -1. */
function lowerHexWord(text: string, a: number, b: number): number {
  const high = lowerHex4(text, a);
  const low = lowerHex4(text, b);
  return high < 0 || low < 0 ? -1 : ((high << 16) | low) >>> 0;
}

/**
 * A lowercase uuid's 16 bytes as 4 big-endian words, written at `at` of `into`; false (and
 * nothing written) for any other text. Called for every call_id, twice: no regular
 * expression, no intermediate strings, each word read in two runs between the dashes.
 */
export function uuidWords(text: string, into: Uint32Array, at = 0): boolean {
  if (text.length !== 36) return false;
  if (text.charCodeAt(8) !== 0x2d || text.charCodeAt(13) !== 0x2d || text.charCodeAt(18) !== 0x2d || text.charCodeAt(23) !== 0x2d) return false;
  const w0 = lowerHexWord(text, 0, 4);
  const w1 = lowerHexWord(text, 9, 14);
  const w2 = lowerHexWord(text, 19, 24);
  const w3 = lowerHexWord(text, 28, 32);
  if (w0 < 0 || w1 < 0 || w2 < 0 || w3 < 0) return false;
  into[at] = w0;
  into[at + 1] = w1;
  into[at + 2] = w2;
  into[at + 3] = w3;
  return true;
}

/** The uuid text of the 4 words at `at` (the inverse of uuidWords). */
export function uuidText(words: ArrayLike<number>, at = 0): string {
  const b = hexOfWord(words[at + 1]);
  const c = hexOfWord(words[at + 2]);
  return `${hexOfWord(words[at])}-${b.slice(0, 4)}-${b.slice(4)}-${c.slice(0, 4)}-${c.slice(4)}${hexOfWord(words[at + 3])}`;
}
