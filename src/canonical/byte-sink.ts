/** A growable byte buffer, reused across records so canonical output costs no allocation per call. */
export class ByteSink {
  buffer: Buffer;
  length = 0;

  constructor(initialSize = 1 << 16) {
    this.buffer = Buffer.allocUnsafe(initialSize);
  }

  reset(): void {
    this.length = 0;
  }

  /** Makes room for `extra` more bytes past `length`. */
  reserve(extra: number): void {
    const needed = this.length + extra;
    if (needed <= this.buffer.length) return;
    let size = this.buffer.length * 2;
    while (size < needed) size *= 2;
    const grown = Buffer.allocUnsafe(size);
    this.buffer.copy(grown, 0, 0, this.length);
    this.buffer = grown;
  }

  byte(c: number): void {
    if (this.length >= this.buffer.length) this.reserve(1);
    this.buffer[this.length++] = c;
  }

  copy(source: Buffer, start: number, end: number): void {
    const n = end - start;
    this.reserve(n);
    // Short runs (keys, punctuation) are cheaper to copy in JavaScript than through a native call.
    if (n < 24) {
      const target = this.buffer;
      let at = this.length;
      for (let i = start; i < end; i++) target[at++] = source[i];
    } else {
      source.copy(this.buffer, this.length, start, end);
    }
    this.length += n;
  }

  text(s: string): void {
    this.reserve(s.length * 3);
    this.length += this.buffer.write(s, this.length, 'utf8');
  }

  view(): Buffer {
    return this.buffer.subarray(0, this.length);
  }

  /**
   * Exactly the bytes written, in a buffer of their own. Buffer#slice is a view, and a view
   * carries its whole backing store: into a structured clone (a worker's result), or kept
   * alive by whoever holds it. Allocated outside Node's shared pool for the same reason.
   */
  detachedCopy(): Buffer {
    const copy = Buffer.allocUnsafeSlow(this.length);
    this.buffer.copy(copy, 0, 0, this.length);
    return copy;
  }
}
