/**
 * Token counts of pre-tokenizer pieces, remembered by their characters.
 *
 * Text repeats its words, so nearly every piece has been counted before. The table is keyed by
 * the characters in place (a hash over the text's own char codes, compared against a character
 * pool), so a hit allocates nothing: no substring, no Map lookup over 200,000 vocabulary
 * strings. Misses, and pieces too long to be worth remembering, go to `countPiece`.
 * When the table or its pool fills up it starts over, which bounds its memory.
 */

const SLOT_BITS = 17;
const SLOTS = 1 << SLOT_BITS;
const MAX_ENTRIES = SLOTS >>> 1;
const POOL_CHARS = 1 << 21;
/** Longer pieces (base64, long identifiers) rarely repeat. */
const MAX_PIECE_CHARS = 32;

/** Words per slot, side by side so a probe touches one cache line: hash, pool offset, length (0: empty), count. */
const STRIDE = 4;

export class PieceCounts {
  private readonly slots = new Int32Array(SLOTS * STRIDE);
  private readonly pool = new Uint16Array(POOL_CHARS);
  private poolUsed = 0;
  private entries = 0;

  constructor(private readonly countPiece: (piece: string) => number) {}

  /** Tokens of `text.slice(start, end)`. */
  count(text: string, start: number, end: number): number {
    const length = end - start;
    if (length > MAX_PIECE_CHARS) return this.countPiece(text.slice(start, end));
    let hash = 0x811c9dc5;
    for (let i = start; i < end; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
    hash ^= hash >>> 15;
    const slots = this.slots;
    const mask = SLOTS - 1;
    let slot = hash & mask;
    for (;;) {
      const at = slot * STRIDE;
      const storedLength = slots[at + 2]!;
      if (storedLength === 0) break;
      if (storedLength === length && slots[at] === hash && this.sameChars(text, start, length, slots[at + 1]!)) return slots[at + 3]!;
      slot = (slot + 1) & mask;
    }
    const tokens = this.countPiece(text.slice(start, end));
    if (this.entries >= MAX_ENTRIES || this.poolUsed + length > POOL_CHARS) {
      this.clear();
      slot = hash & mask;
    }
    const offset = this.poolUsed;
    for (let i = 0; i < length; i++) this.pool[offset + i] = text.charCodeAt(start + i);
    this.poolUsed += length;
    this.entries++;
    const at = slot * STRIDE;
    slots[at] = hash;
    slots[at + 1] = offset;
    slots[at + 2] = length;
    slots[at + 3] = tokens;
    return tokens;
  }

  private sameChars(text: string, start: number, length: number, offset: number): boolean {
    const pool = this.pool;
    for (let i = 0; i < length; i++) if (pool[offset + i] !== text.charCodeAt(start + i)) return false;
    return true;
  }

  private clear(): void {
    this.slots.fill(0);
    this.poolUsed = 0;
    this.entries = 0;
  }
}
