/** Growable typed-array columns: per-group facts without an object per group. */
import { uuidText, uuidWords } from '../uuid-words.js';

type TypedArray = Int32Array | Uint32Array | Float64Array | Uint8Array;
type TypedArrayConstructor<T extends TypedArray> = { new (length: number): T };

export class Column<T extends TypedArray> {
  data: T;

  constructor(
    private readonly kind: TypedArrayConstructor<T>,
    /** Values per row (4 for a 16-byte digest in 32-bit words). */
    readonly width = 1,
    initialRows = 1024,
  ) {
    this.data = new kind(initialRows * width);
  }

  /** Makes room for `rows` rows. */
  ensure(rows: number): void {
    if (rows * this.width <= this.data.length) return;
    // By half again, not double: a column ends at most half again the size it needs (double
    // left up to 2x: 2,097,152 rows for the 1,464,762 keys of the 4 GB bench tree), and while
    // it grows the old and new arrays together are 2.5 times the old, not 3.
    let length = this.data.length;
    while (length < rows * this.width) length = Math.max(this.width, Math.ceil((length * 1.5) / this.width) * this.width);
    const grown = new this.kind(length);
    grown.set(this.data);
    this.data = grown;
  }

  get byteSize(): number {
    return this.data.byteLength;
  }
}

/** call_ids are uuid4 strings: kept as 16 bytes, with the rare other id kept as text. */
export class CallIdColumn {
  private readonly words = new Column(Uint32Array, 4);
  private readonly others = new Map<number, string>();

  set(row: number, callId: string): void {
    this.words.ensure(row + 1);
    const base = row * 4;
    if (!uuidWords(callId, this.words.data, base)) {
      this.others.set(row, callId);
      this.words.data.fill(0, base, base + 4);
      return;
    }
    if (this.others.size > 0) this.others.delete(row);
  }

  /** `set` for a uuid already in words. */
  setWords(row: number, words: Uint32Array): void {
    this.words.ensure(row + 1);
    this.words.data.set(words, row * 4);
    if (this.others.size > 0) this.others.delete(row);
  }

  get(row: number): string {
    const other = this.others.size > 0 ? this.others.get(row) : undefined;
    if (other !== undefined) return other;
    return uuidText(this.words.data, row * 4);
  }

  get byteSize(): number {
    return this.words.byteSize;
  }
}
