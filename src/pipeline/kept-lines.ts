/**
 * What a plan keeps, per file: the kept records' line numbers and byte offsets, on disk. A file's
 * are read back when asked for (`lines.get`, `offsets.get`): export's projection asks one share
 * at a time, so memory holds one file's kept lines, not the tree's (12 bytes a kept record:
 * 11 MB for the 4 GB bench tree, and more with every gigabyte).
 */
import { closeSync, openSync, rmSync } from 'node:fs';
import path from 'node:path';
import { writeAll } from '../output/write-all.js';
import { rowFloat, setRowFloat } from './dedupe.js';
import { RunTempDir } from './spill.js';
import { readFull } from '../sources/read.js';

/** A kept record's row: its line, and its byte offset as two words (offsets pass 2^32). */
const ROW_WORDS = 3;
const ROW_BYTES = ROW_WORDS * 4;
/** Rows gathered before a write: 48 KB. */
const BUFFER_ROWS = 4096;

/** One file's kept lines and offsets, as the plan's maps give them. */
interface FileKept {
  lines: Int32Array;
  offsets: Float64Array;
}

/** A read-only map by file index whose values are read from the file when asked for (no value is held). */
class ReadBackMap<V> implements ReadonlyMap<number, V> {
  constructor(
    private readonly indexes: () => number[],
    private readonly valueOf: (fileIndex: number) => V | undefined,
    private readonly holds: (fileIndex: number) => boolean,
  ) {}

  get size(): number {
    return this.indexes().length;
  }

  get(fileIndex: number): V | undefined {
    return this.valueOf(fileIndex);
  }

  has(fileIndex: number): boolean {
    return this.holds(fileIndex);
  }

  forEach(callback: (value: V, key: number, map: ReadonlyMap<number, V>) => void): void {
    for (const [key, value] of this) callback(value, key, this);
  }

  *entries(): MapIterator<[number, V]> {
    for (const fileIndex of this.indexes()) yield [fileIndex, this.valueOf(fileIndex)!];
  }

  *keys(): MapIterator<number> {
    yield* this.indexes();
  }

  *values(): MapIterator<V> {
    for (const fileIndex of this.indexes()) yield this.valueOf(fileIndex)!;
  }

  [Symbol.iterator](): MapIterator<[number, V]> {
    return this.entries();
  }
}

export class KeptLinesFile {
  private readonly dir = new RunTempDir();
  private readonly file: string;
  private readonly fd: number;
  /** Per file index: its first row (each file has room for all its winners), and the rows kept. */
  private readonly starts: Float64Array;
  private readonly counts: Int32Array;
  private readonly buffer = new Uint32Array(BUFFER_ROWS * ROW_WORDS);
  private buffered = 0;
  /** The file the buffered rows are of. */
  private bufferFile = -1;
  /** The file indexes with a kept record, ascending; made once every record is added. */
  private indexes: number[] | null = null;
  /** The last file read back: the lines and the offsets of a file are asked for together. */
  private last: { fileIndex: number; kept: FileKept } | null = null;
  private disposed = false;
  readonly lines: ReadonlyMap<number, Int32Array>;
  readonly offsets: ReadonlyMap<number, Float64Array>;

  /** `winnersByFile`: for each file, at least the records that may be kept. */
  constructor(winnersByFile: ArrayLike<number>) {
    this.file = path.join(this.dir.path, 'kept-lines.bin');
    this.fd = openSync(this.file, 'wx+');
    this.starts = new Float64Array(winnersByFile.length);
    this.counts = new Int32Array(winnersByFile.length);
    let start = 0;
    for (let i = 0; i < winnersByFile.length; i++) {
      this.starts[i] = start;
      start += winnersByFile[i];
    }
    const indexes = () => this.fileIndexes();
    const holds = (fileIndex: number) => (this.counts[fileIndex] ?? 0) > 0;
    this.lines = new ReadBackMap(indexes, (fileIndex) => this.read(fileIndex)?.lines, holds);
    this.offsets = new ReadBackMap(indexes, (fileIndex) => this.read(fileIndex)?.offsets, holds);
  }

  /** A kept record of `fileIndex`, at `line` and byte `offset`. */
  add(fileIndex: number, line: number, offset: number): void {
    if (fileIndex !== this.bufferFile || this.buffered === BUFFER_ROWS) this.flush();
    this.bufferFile = fileIndex;
    const at = this.buffered++ * ROW_WORDS;
    this.buffer[at] = line;
    setRowFloat(this.buffer, at + 1, offset);
    this.counts[fileIndex]++;
  }

  /** Kept records in all. */
  get kept(): number {
    return this.counts.reduce((sum, n) => sum + n, 0);
  }

  private flush(): void {
    if (this.buffered === 0) return;
    const row = this.starts[this.bufferFile] + this.counts[this.bufferFile] - this.buffered;
    writeAll(this.fd, new Uint8Array(this.buffer.buffer, 0, this.buffered * ROW_BYTES), this.file, undefined, row * ROW_BYTES);
    this.buffered = 0;
  }

  private fileIndexes(): number[] {
    if (this.indexes === null) {
      this.flush();
      this.indexes = [];
      this.counts.forEach((count, fileIndex) => {
        if (count > 0) this.indexes!.push(fileIndex);
      });
    }
    return this.indexes;
  }

  /** A file's kept lines and offsets, sorted (in step: a file's offsets grow with its lines), each in a store of its own. */
  private read(fileIndex: number): FileKept | undefined {
    if (this.last?.fileIndex === fileIndex) return this.last.kept;
    const count = this.counts[fileIndex] ?? 0;
    if (count === 0) return undefined;
    this.fileIndexes();
    const rows = new Uint32Array(count * ROW_WORDS);
    const bytes = new Uint8Array(rows.buffer);
    if (readFull(this.fd, bytes, this.starts[fileIndex] * ROW_BYTES) < bytes.length) throw new Error(`${this.file}: ended before its rows`);
    const lines = new Int32Array(count);
    const offsets = new Float64Array(count);
    for (let i = 0; i < count; i++) {
      lines[i] = rows[i * ROW_WORDS];
      offsets[i] = rowFloat(rows, i * ROW_WORDS + 1);
    }
    // Winners come in arrival order, which is line order within a file; sorted all the same (cheap when sorted).
    const kept = { lines: lines.sort(), offsets: offsets.sort() };
    this.last = { fileIndex, kept };
    return kept;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.last = null;
    closeSync(this.fd);
    rmSync(this.file, { force: true });
    this.dir.remove();
  }
}
