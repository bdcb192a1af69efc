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

  private reserve(extra: number): void {
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

  copy(source: Uint8Array, start: number, end: number): void {
    this.reserve(end - start);
    this.buffer.set(source.subarray(start, end), this.length);
    this.length += end - start;
  }

  text(s: string): void {
    this.reserve(s.length * 3);
    this.length += this.buffer.write(s, this.length, 'utf8');
  }

  view(): Buffer {
    return this.buffer.subarray(0, this.length);
  }
}
