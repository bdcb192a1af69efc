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

export class PieceCounts {
  private readonly hashes = new Int32Array(SLOTS);
  private readonly offsets = new Int32Array(SLOTS);
  /** 0 marks an empty slot: pieces are never empty. */
  private readonly lengths = new Uint8Array(SLOTS);
  private readonly counts = new Int32Array(SLOTS);
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
    const mask = SLOTS - 1;
    let slot = hash & mask;
    for (;;) {
      const storedLength = this.lengths[slot]!;
      if (storedLength === 0) break;
      if (storedLength === length && this.hashes[slot] === hash && this.sameChars(text, start, length, this.offsets[slot]!)) {
        return this.counts[slot]!;
      }
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
    this.hashes[slot] = hash;
    this.offsets[slot] = offset;
    this.lengths[slot] = length;
    this.counts[slot] = tokens;
    return tokens;
  }

  private sameChars(text: string, start: number, length: number, offset: number): boolean {
    const pool = this.pool;
    for (let i = 0; i < length; i++) if (pool[offset + i] !== text.charCodeAt(start + i)) return false;
    return true;
  }

  private clear(): void {
    this.lengths.fill(0);
    this.poolUsed = 0;
    this.entries = 0;
  }
}
