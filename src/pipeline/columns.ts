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

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

function hexOfWord(w: number): string {
  return HEX[w >>> 24] + HEX[(w >>> 16) & 255] + HEX[(w >>> 8) & 255] + HEX[w & 255];
}

/**
 * A lowercase uuid's 16 bytes as 4 big-endian words, written at `at` of `into`; false (and
 * nothing written) for any other text. Called for every call_id: no regular expression, no
 * intermediate strings.
 */
export function uuidWords(text: string, into: Uint32Array, at = 0): boolean {
  if (text.length !== 36) return false;
  let w0 = 0;
  let w1 = 0;
  let w2 = 0;
  let w3 = 0;
  let digits = 0;
  for (let i = 0; i < 36; i++) {
    const c = text.charCodeAt(i);
    if (i === 8 || i === 13 || i === 18 || i === 23) {
      if (c !== 0x2d) return false;
      continue;
    }
    const v = c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : -1;
    if (v < 0) return false;
    if (digits < 8) w0 = (w0 << 4) | v;
    else if (digits < 16) w1 = (w1 << 4) | v;
    else if (digits < 24) w2 = (w2 << 4) | v;
    else w3 = (w3 << 4) | v;
    digits++;
  }
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
