/**
 * A recorded hash (64 hex digits, sha256) folded to the 64 or 128 bits of a dedupe key
 * (pipeline/keys.ts, pipeline/key-index.ts): read straight from a line's bytes by the record
 * reader (sources/synalinks-record.ts), or from a string.
 */

/** The value of each ASCII hex digit, -1 for every other byte. */
const NIBBLES = new Int8Array(256).fill(-1);
for (let d = 0; d < 16; d++) {
  NIBBLES['0123456789abcdef'.charCodeAt(d)] = d;
  NIBBLES['0123456789ABCDEF'.charCodeAt(d)] = d;
}

/**
 * Odd multipliers (bijections of 32-bit words) that fold a 256-bit hash's lanes together. A
 * key of leading bits alone made hashes that differ only further on one key: zero-padded
 * counters (`f"{i:064x}"`), a common way to write distinct hashes by hand, were all duplicates
 * of one another. Folded, hashes that differ in any one 32-bit lane never share a key.
 */
const FOLD = [1, 0x9e3779b1, 0x85ebca77, 0xc2b2ae3d];
const lanes = new Uint32Array(8);

/** `lanes` folded to `count` words (2: lanes k, k+2, k+4, k+6; 4: lanes k, k+4) at `into[offset]`. */
function foldLanes(count: 2 | 4, into: Uint32Array, offset: number): void {
  const groups = 8 / count;
  for (let k = 0; k < count; k++) {
    let word = 0;
    for (let g = 0; g < groups; g++) word ^= Math.imul(lanes[k + g * count], FOLD[g]);
    into[offset + k] = word >>> 0;
  }
}

/** The 64 hex digits of `b` at `at`, a recorded hash, folded to `count` key words at `into[offset]`; false when they are not all hex. */
export function foldHexBytes(b: Uint8Array, at: number, count: 2 | 4, into: Uint32Array, offset: number): boolean {
  // A digit that is no hex digit is -1, which sets `bad`'s sign: one test at the end.
  let bad = 0;
  for (let lane = 0, p = at; lane < 8; lane++) {
    let word = 0;
    for (const end = p + 8; p < end; p++) {
      const nibble = NIBBLES[b[p]];
      bad |= nibble;
      word = (word << 4) | (nibble & 15);
    }
    lanes[lane] = word;
  }
  if (bad < 0) return false;
  foldLanes(count, into, offset);
  return true;
}

/** `foldHexBytes` over a string: false unless it is exactly 64 hex digits. */
export function foldHex(hex: string, count: 2 | 4, into: Uint32Array, offset: number): boolean {
  if (hex.length !== 64) return false;
  let bad = 0;
  for (let lane = 0, p = 0; lane < 8; lane++) {
    let word = 0;
    for (const end = p + 8; p < end; p++) {
      const c = hex.charCodeAt(p);
      const nibble = c < 256 ? NIBBLES[c] : -1;
      bad |= nibble;
      word = (word << 4) | (nibble & 15);
    }
    lanes[lane] = word;
  }
  if (bad < 0) return false;
  foldLanes(count, into, offset);
  return true;
}
