/**
 * The examples an export has written, by digest of their dataset and line, to drop one identical
 * to an earlier one (`duplicate_example`). In memory, 8 bytes a slot: one word of the digest and
 * the example's number. The whole digest and the record's call_id wait on disk, by example
 * number, and are read back only when that word meets another example's: for every repeat, and
 * for one other example in 2^32. A table of whole digests and call_ids (56-80 bytes an example)
 * was the largest thing export held that grows with the examples.
 */
import { uuidText, uuidWords } from '../uuid-words.js';
import { SpillFile } from '../pipeline/spill.js';

const EMPTY = -1;

/** A word of sha256 is uniform already; the mix spreads the words of callers' tests and of other digests alike. */
function slotOf(word: number, capacity: number): number {
  const h = Math.imul(word ^ (word >>> 16), 0x45d9f3b);
  return (h ^ (h >>> 16)) & (capacity - 1);
}
/** A row on disk: the digest (4 words), then the call_id as a uuid (4 words; zeros when it is none). */
const ROW_WORDS = 8;

export class WrittenExamples {
  private capacity = 1 << 12;
  /** The digest's first word, per slot. */
  private firstWords = new Uint32Array(this.capacity);
  /** The example's number, per slot, or EMPTY. */
  private numbers = new Int32Array(this.capacity).fill(EMPTY);
  private readonly rows = new SpillFile(ROW_WORDS);
  private readonly row = new Uint32Array(ROW_WORDS);
  private readonly earlierRow = new Uint32Array(ROW_WORDS);
  /** call_ids that are no uuid, by example number. */
  private readonly otherIds = new Map<number, string>();
  size = 0;

  /**
   * Notes the example of `digest` (4 words of sha256), written from the record `callId`; when
   * an identical example was written before, notes nothing and returns that one's call_id.
   */
  addOrEarlier(digest: ArrayLike<number>, callId: string): string | null {
    const mask = this.capacity - 1;
    let slot = slotOf(digest[0], this.capacity);
    for (let number = this.numbers[slot]; number !== EMPTY; number = this.numbers[slot]) {
      if (this.firstWords[slot] === digest[0]) {
        const earlier = this.earlierRow;
        this.rows.rowAt(number, earlier);
        if (earlier[1] === digest[1] && earlier[2] === digest[2] && earlier[3] === digest[3]) {
          return this.otherIds.get(number) ?? uuidText(earlier, 4);
        }
      }
      slot = (slot + 1) & mask;
    }
    const number = this.size++;
    this.firstWords[slot] = digest[0];
    this.numbers[slot] = number;
    const row = this.row;
    for (let i = 0; i < 4; i++) row[i] = digest[i];
    if (!uuidWords(callId, row, 4)) {
      row.fill(0, 4);
      this.otherIds.set(number, callId);
    }
    this.rows.append(row);
    // Past 70% load, probe chains grow quickly.
    if (this.size * 10 > this.capacity * 7) this.grow();
    return null;
  }

  private grow(): void {
    const { firstWords, numbers } = this;
    this.capacity *= 2;
    this.firstWords = new Uint32Array(this.capacity);
    this.numbers = new Int32Array(this.capacity).fill(EMPTY);
    for (let old = 0; old < numbers.length; old++) {
      if (numbers[old] === EMPTY) continue;
      const slot = this.freeSlotFor(firstWords[old]);
      this.firstWords[slot] = firstWords[old];
      this.numbers[slot] = numbers[old];
    }
  }

  /** The first free slot of a first word's probe chain. */
  private freeSlotFor(firstWord: number): number {
    let slot = slotOf(firstWord, this.capacity);
    while (this.numbers[slot] !== EMPTY) slot = (slot + 1) & (this.capacity - 1);
    return slot;
  }

  dispose(): void {
    this.rows.dispose();
  }
}
