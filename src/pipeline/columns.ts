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

/** Value of each lower-case hex digit's char code, -1 for every other code below 128. */
const HEX_VALUE = new Int8Array(128).fill(-1);
for (let i = 0; i < 16; i++) HEX_VALUE['0123456789abcdef'.charCodeAt(i)] = i;

/**
 * Writes the 128 bits of a lower-case uuid (`8-4-4-4-12` hex digits) into `into[at..at+4]` and
 * returns true; false, leaving `into` as it was, for any other text. Every record's call_id
 * goes through this on the thread that compares records, so no regex and no substrings.
 */
export function uuidWords(text: string, into: Uint32Array, at = 0): boolean {
  if (text.length !== 36) return false;
  let word = 0;
  let digits = 0;
  const words = [0, 0, 0, 0];
  for (let i = 0; i < 36; i++) {
    const code = text.charCodeAt(i);
    if (i === 8 || i === 13 || i === 18 || i === 23) {
      if (code !== 0x2d) return false;
      continue;
    }
    const value = code < 128 ? HEX_VALUE[code] : -1;
    if (value < 0) return false;
    word = word * 16 + value;
    if (++digits % 8 === 0) {
      words[digits / 8 - 1] = word >>> 0;
      word = 0;
    }
  }
  into[at] = words[0];
  into[at + 1] = words[1];
  into[at + 2] = words[2];
  into[at + 3] = words[3];
  return true;
}

/** Two hex digits of each byte value. */
const HEX_PAIRS = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** The uuid text of the 4 words at `into[at..at+4]`. */
export function uuidText(words: Uint32Array, at = 0): string {
  let text = '';
  for (let i = 0; i < 4; i++) {
    const w = words[at + i];
    const high = HEX_PAIRS[w >>> 24] + HEX_PAIRS[(w >>> 16) & 255];
    const low = HEX_PAIRS[(w >>> 8) & 255] + HEX_PAIRS[w & 255];
    // 8-4-4-4-12 digits: a dash after word 0, inside word 1, after word 1 and inside word 2.
    if (i === 0) text += `${high}${low}-`;
    else if (i === 1) text += `${high}-${low}`;
    else if (i === 2) text += `-${high}-${low}`;
    else text += high + low;
  }
  return text;
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
    const other = this.others.get(row);
    if (other !== undefined) return other;
    return uuidText(this.words.data, row * 4);
  }

  get byteSize(): number {
    return this.words.byteSize;
  }
}
