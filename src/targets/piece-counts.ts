/**
 * Token counts of pre-tokenizer pieces, remembered by their characters.
 *
 * Text repeats its words, so nearly every piece has been counted before. The table is keyed by
 * the characters in place (a hash over the text's own char codes, compared against a character
 * pool), so a hit allocates nothing: no substring, no Map lookup over 200,000 vocabulary
 * strings. Misses, and pieces too long to be worth remembering, go to `countPiece`.
 * When the table or its pool fills up it starts over, which bounds its memory.
 *
 * The table starts small and doubles as it fills: text uses a few thousand distinct pieces
 * (5,300 over the 1 GB bench tree's 250 million characters), and a table sized for the most it
 * may hold (2 MB) spreads them over more memory than the nearest caches keep while an export
 * parses, redacts and writes between two texts counted: a miss on most probes.
 */

const MIN_SLOT_BITS = 12;
const MAX_SLOT_BITS = 17;
/** Most entries the largest table holds (half full); a smaller one doubles at half full. */
const MAX_ENTRIES = (1 << MAX_SLOT_BITS) >>> 1;
const POOL_CHARS = 1 << 21;
/** Longer pieces (base64, long identifiers) rarely repeat. */
const MAX_PIECE_CHARS = 32;

/** Words per slot, side by side so a probe touches one cache line: hash, pool offset, length (0: empty), count. */
const STRIDE = 4;

export class PieceCounts {
  private slots = new Int32Array((1 << MIN_SLOT_BITS) * STRIDE);
  private mask = (1 << MIN_SLOT_BITS) - 1;
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
    let slots = this.slots;
    let mask = this.mask;
    let slot = hash & mask;
    for (;;) {
      const at = slot * STRIDE;
      const storedLength = slots[at + 2]!;
      if (storedLength === 0) break;
      if (storedLength === length && slots[at] === hash && this.sameChars(text, start, length, slots[at + 1]!)) return slots[at + 3]!;
      slot = (slot + 1) & mask;
    }
    const tokens = this.countPiece(text.slice(start, end));
    if (this.entries >= MAX_ENTRIES || this.poolUsed + length > POOL_CHARS) this.clear();
    else if (this.entries >= (mask + 1) >>> 1) this.grow();
    if (slots !== this.slots) {
      slots = this.slots;
      mask = this.mask;
      slot = hash & mask;
      while (slots[slot * STRIDE + 2] !== 0) slot = (slot + 1) & mask;
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
    this.slots = new Int32Array((1 << MIN_SLOT_BITS) * STRIDE);
    this.mask = (1 << MIN_SLOT_BITS) - 1;
    this.poolUsed = 0;
    this.entries = 0;
  }

  /** Twice the slots, every entry placed again by its hash. */
  private grow(): void {
    const old = this.slots;
    const mask = this.mask * 2 + 1;
    const slots = new Int32Array((mask + 1) * STRIDE);
    for (let at = 0; at < old.length; at += STRIDE) {
      if (old[at + 2] === 0) continue;
      let slot = old[at]! & mask;
      while (slots[slot * STRIDE + 2] !== 0) slot = (slot + 1) & mask;
      slots.set(old.subarray(at, at + STRIDE), slot * STRIDE);
    }
    this.slots = slots;
    this.mask = mask;
  }
}
