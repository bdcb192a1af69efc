/** Growable typed-array columns: per-group facts without an object per group. */

type TypedArray = Int32Array | Uint32Array | Float64Array;
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
    let length = this.data.length;
    while (length < rows * this.width) length *= 2;
    const grown = new this.kind(length);
    grown.set(this.data);
    this.data = grown;
  }

  get byteSize(): number {
    return this.data.byteLength;
  }
}

const UUID = /^([0-9a-f]{8})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{12})$/;

/** call_ids are uuid4 strings: kept as 16 bytes, with the rare other id kept as text. */
export class CallIdColumn {
  private readonly words = new Column(Uint32Array, 4);
  private readonly others = new Map<number, string>();

  set(row: number, callId: string): void {
    this.words.ensure(row + 1);
    const match = UUID.exec(callId);
    const base = row * 4;
    if (match === null) {
      this.others.set(row, callId);
      this.words.data.fill(0, base, base + 4);
      return;
    }
    this.others.delete(row);
    const hex = match.slice(1).join('');
    for (let i = 0; i < 4; i++) this.words.data[base + i] = parseInt(hex.slice(i * 8, i * 8 + 8), 16);
  }

  get(row: number): string {
    const other = this.others.get(row);
    if (other !== undefined) return other;
    const base = row * 4;
    const hex = Array.from(this.words.data.subarray(base, base + 4), (w) => w.toString(16).padStart(8, '0')).join('');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }

  get byteSize(): number {
    return this.words.byteSize;
  }
}
