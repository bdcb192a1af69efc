/**
 * Fixed-width rows of 32-bit words appended to a temporary file and read back in order:
 * facts that are only resolved at the end of a run (a duplicate's final winner) stay on
 * disk rather than growing memory with the number of records.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, createReadStream, mkdtempSync, openSync, readdirSync, readSync, renameSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { isDead, pidOf, whileRunning } from '../output/cleanup.js';
import { holderOf, RunLock } from '../output/run-lock.js';
import { checkTempFolder } from '../output/output-path.js';
import { writeAll } from '../output/write-all.js';
import { RUN_TEMP_PREFIX } from '../errors.js';

const BUFFER_ROWS = 8192;

/** A run's folder while it is given its lock, before it takes its `traces-spill-` name. */
const STARTING_PREFIX = 'traces-spill.starting-';
/** A starting folder lives for the few milliseconds its lock takes: one this old was left by a kill. */
const STARTING_LEFT_AFTER_MS = 60 * 60 * 1000;

/**
 * Spill folders of runs killed outright (nothing ran to remove them), judged by the lock
 * output folders use (`holderOf`, run-lock.ts): a folder whose run still holds its FIFO is
 * live, whatever its pid says. A pid says nothing across pid namespaces (two containers
 * sharing /tmp: the other's live run has a pid this one does not see), and traces run as a
 * container's entrypoint is pid 1 every time, a pid that always lives on the host. A folder
 * without a FIFO (an earlier traces, a file system without FIFOs) is judged by its pid, as before.
 */
function removeStaleSpills(): void {
  let entries: string[];
  try {
    entries = readdirSync(tmpdir());
  } catch {
    return;
  }
  for (const entry of entries) {
    const folder = path.join(tmpdir(), entry);
    let stale = false;
    if (entry.startsWith(STARTING_PREFIX)) {
      try {
        stale = Date.now() - statSync(folder).mtimeMs > STARTING_LEFT_AFTER_MS;
      } catch {
        stale = false;
      }
    } else if (entry.startsWith(RUN_TEMP_PREFIX)) {
      const pid = pidOf(entry, RUN_TEMP_PREFIX);
      stale = pid !== null && holderOf(folder, pid, (p) => !isDead(p)) === 'dead';
    }
    if (stale) rmSync(folder, { recursive: true, force: true });
  }
}

/**
 * This thread's run folder in the system's temp folder, named for its process and locked as a
 * staging folder is (a FIFO held open while the run lives), so a later run can remove it if
 * this one is killed outright and never removes it while this one lives. Every `RunTempDir`
 * alive at once shares it: one lock (one descriptor, one FIFO made) for all, where a lock each
 * took a descriptor per table and ran out under a low open-file limit. It goes with the last
 * of them, or on a signal or an exit that skips `remove` (an error, a crash).
 */
let runFolder: { path: string; lock: RunLock | null; users: number; release: () => void } | null = null;

function takeRunFolder(): string {
  if (runFolder === null) {
    checkTempFolder(tmpdir());
    removeStaleSpills();
    // Locked before it takes its name: under its final name a folder always has its lock
    // (where locks can be made), so no other run takes this one, starting, for a dead one's.
    const starting = mkdtempSync(path.join(tmpdir(), `${STARTING_PREFIX}${process.pid}-`));
    let lock: RunLock | null = null;
    let folder: string;
    try {
      lock = RunLock.take(starting);
      folder = path.join(tmpdir(), `${RUN_TEMP_PREFIX}${process.pid}-${path.basename(starting).slice(-6)}${randomBytes(3).toString('hex')}`);
      renameSync(starting, folder);
    } catch (error) {
      lock?.release();
      rmSync(starting, { recursive: true, force: true });
      throw error;
    }
    const taken = lock;
    const release = whileRunning(() => {
      taken?.release();
      rmSync(folder, { recursive: true, force: true });
    });
    runFolder = { path: folder, lock: taken, users: 0, release };
  }
  runFolder.users++;
  return runFolder.path;
}

function leaveRunFolder(): void {
  if (runFolder === null || --runFolder.users > 0) return;
  const { path: folder, lock, release } = runFolder;
  runFolder = null;
  lock?.release();
  rmSync(folder, { recursive: true, force: true });
  release();
}

/** A temporary folder of this run's own, inside the thread's locked run folder. */
export class RunTempDir {
  readonly path: string;
  private removed = false;

  constructor() {
    const folder = takeRunFolder();
    try {
      this.path = mkdtempSync(path.join(folder, 'tmp-'));
    } catch (error) {
      leaveRunFolder();
      throw error;
    }
  }

  remove(): void {
    if (this.removed) return;
    this.removed = true;
    rmSync(this.path, { recursive: true, force: true });
    leaveRunFolder();
  }
}

export class SpillFile {
  private readonly dir: RunTempDir;
  /** Whether this file made `dir` (and removes it). */
  private readonly ownsDir: boolean;
  private readonly file: string;
  /** The file held open, or -1 when it is opened for each write and read (see `holdOpen`). */
  private fd: number;
  private readonly buffer: Uint32Array;
  private buffered = 0;
  rows = 0;

  /**
   * `shared`: a folder of the caller's, holding several files (the partitions of one table).
   * `bufferRows`: rows gathered before a write, and read at a time (many files open at once want few).
   * `holdOpen`: false for the many files of partitioned tables, which take a descriptor only
   * while a buffer is written or the file read: held open, five tables of eight partitions
   * took 40 descriptors at once, and an export ran out of them under `ulimit -n 64`.
   */
  constructor(
    readonly width: number,
    shared?: { dir: RunTempDir; name: string },
    private readonly bufferRows = BUFFER_ROWS,
    holdOpen = true,
  ) {
    this.dir = shared?.dir ?? new RunTempDir();
    this.ownsDir = shared === undefined;
    this.file = path.join(this.dir.path, shared?.name ?? 'rows.bin');
    this.fd = openSync(this.file, 'wx+');
    if (!holdOpen) {
      closeSync(this.fd);
      this.fd = -1;
    }
    this.buffer = new Uint32Array(width * bufferRows);
  }

  /** `use` with a descriptor of the file: the one held, or one opened (`flags`) for this call. */
  private withFile<T>(flags: string, use: (fd: number) => T): T {
    if (this.fd !== -1) return use(this.fd);
    const fd = openSync(this.file, flags);
    try {
      return use(fd);
    } finally {
      closeSync(fd);
    }
  }

  append(row: ArrayLike<number>): void {
    this.buffer.set(row, this.buffered * this.width);
    this.buffered++;
    this.rows++;
    if (this.buffered === this.bufferRows) this.flush();
  }

  private flush(): void {
    if (this.buffered === 0) return;
    const bytes = new Uint8Array(this.buffer.buffer, 0, this.buffered * this.width * 4);
    this.withFile('a', (fd) => writeAll(fd, bytes, this.file));
    this.buffered = 0;
  }

  /** Row `index` (appended before), copied into `into`: from the buffer, or read back from the file. */
  rowAt(index: number, into: Uint32Array): void {
    const firstBuffered = this.rows - this.buffered;
    if (index >= firstBuffered) {
      const at = (index - firstBuffered) * this.width;
      into.set(this.buffer.subarray(at, at + this.width));
      return;
    }
    this.withFile('r', (fd) => readSync(fd, new Uint8Array(into.buffer, into.byteOffset, this.width * 4), 0, this.width * 4, index * this.width * 4));
  }

  /** Every row in the order appended; the view is reused between rows. */
  *read(): Generator<Uint32Array> {
    this.flush();
    const chunk = new Uint32Array(this.width * this.bufferRows);
    const bytes = new Uint8Array(chunk.buffer);
    const opened = this.fd === -1;
    const fd = opened ? openSync(this.file, 'r') : this.fd;
    try {
      let position = 0;
      for (;;) {
        const read = readSync(fd, bytes, 0, bytes.length, position);
        if (read === 0) break;
        position += read;
        for (let row = 0; row < read / 4 / this.width; row++) yield chunk.subarray(row * this.width, (row + 1) * this.width);
      }
    } finally {
      if (opened) closeSync(fd);
    }
  }

  dispose(): void {
    if (this.fd !== -1) closeSync(this.fd);
    this.fd = -1;
    // A shared folder outlives its files: each goes as soon as it is done with.
    if (this.ownsDir) this.dir.remove();
    else rmSync(this.file, { force: true });
  }
}

/** Bytes each partition of a `PartitionedSpill` buffers, writing or reading: 64 partitions hold 2 MB. */
const PARTITION_BUFFER_BYTES = 1 << 15;

/**
 * Files of one table, one a partition: a partition is read back alone, then closed (its file
 * goes at once). Small buffers: many are open.
 */
abstract class Partitions<F extends { dispose(): void }> {
  protected readonly files: (F | null)[];

  constructor(
    readonly partitions: number,
    open: (partition: number) => F,
  ) {
    this.files = Array.from({ length: partitions }, (_, p) => open(p));
  }

  /** Closes a partition read for the last time (its file goes with the run folder). */
  close(partition: number): void {
    this.files[partition]?.dispose();
    this.files[partition] = null;
  }

  dispose(): void {
    for (let p = 0; p < this.partitions; p++) this.close(p);
  }
}

/**
 * One table of fixed-width rows spread over files by a partition number the caller computes
 * (a hash of a key, a range of arrival numbers): each partition is then read back alone, so
 * what is resolved in memory at once is one partition's rows.
 */
export class PartitionedSpill extends Partitions<SpillFile> {
  constructor(
    dir: RunTempDir,
    name: string,
    readonly width: number,
    partitions: number,
  ) {
    const bufferRows = Math.max(16, Math.floor(PARTITION_BUFFER_BYTES / (width * 4)));
    super(partitions, (p) => new SpillFile(width, { dir, name: `${name}-${p}.bin` }, bufferRows, false));
  }

  append(partition: number, row: ArrayLike<number>): void {
    this.files[partition]!.append(row);
  }

  /** Rows in partition `partition`. */
  rows(partition: number): number {
    return this.files[partition]?.rows ?? 0;
  }

  /** The partition's rows in the order appended; the view is reused between rows. */
  read(partition: number): Generator<Uint32Array> {
    return this.files[partition]!.read();
  }
}

/** Bytes of JSON lines gathered before they are written out. */
const PENDING_BYTES = 1 << 16;

/**
 * Values as JSON lines in a temporary file, read back in the order added: a list that grows
 * with the tree (every drop of a dry run, every finding of a scan) stays on disk until printed.
 * Nothing is written until the first value comes.
 */
export class JsonLinesSpill {
  private spill: { dir: RunTempDir; file: string; fd: number } | null = null;
  private pending = '';

  add(value: unknown): void {
    if (this.spill === null) {
      const dir = new RunTempDir();
      const file = path.join(dir.path, 'items.jsonl');
      this.spill = { dir, file, fd: openSync(file, 'wx') };
    }
    // JSON.stringify escapes every line break a string holds: one value, one line.
    this.pending += `${JSON.stringify(value)}\n`;
    if (this.pending.length >= PENDING_BYTES) this.flush();
  }

  private flush(): void {
    if (this.spill === null || this.pending === '') return;
    writeAll(this.spill.fd, this.pending, this.spill.file);
    this.pending = '';
  }

  /** Every value's line, in the order added; the file goes once read through. */
  async *lines(): AsyncGenerator<string> {
    if (this.spill === null) return;
    this.flush();
    closeSync(this.spill.fd);
    this.spill.fd = -1;
    try {
      yield* createInterface({ input: createReadStream(this.spill.file), crlfDelay: Infinity });
    } finally {
      this.dispose();
    }
  }

  /** Removes the file (a run that failed before printing, or after). */
  dispose(): void {
    if (this.spill === null) return;
    if (this.spill.fd !== -1) closeSync(this.spill.fd);
    this.spill.dir.remove();
    this.spill = null;
  }
}

/** Bytes of texts a `TextSpillFile` gathers before a write, and reads at a time. */
const TEXT_BUFFER_BYTES = 1 << 14;

/** The rows of a `TextSpillFile` as read back: the row's words, and its text or null. */
export interface TextRow {
  row: Uint32Array;
  text: string | null;
}

/**
 * A `SpillFile` whose rows may each carry a text (a call_id that is not a uuid, which 16 bytes
 * cannot hold): the text's UTF-16 code units go to a second file (any string comes back as it
 * was, a lone surrogate included, which UTF-8 would replace), read back in step with the rows,
 * so a text is on disk with its row and not in a Map beside it. The second file is made only
 * when the first text comes (most trees have none).
 */
export class TextSpillFile {
  private readonly rows: SpillFile;
  private readonly wide: Uint32Array;
  private texts: { file: string; fd: number } | null = null;
  /** Made with the texts' file: many partitions are open at once, few with texts. */
  private pending = Buffer.alloc(0);
  private pendingBytes = 0;

  constructor(
    readonly width: number,
    private readonly shared: { dir: RunTempDir; name: string },
    bufferRows = BUFFER_ROWS,
  ) {
    // The last word: the text's length in bytes plus one, 0 for a row without one.
    this.rows = new SpillFile(width + 1, { dir: shared.dir, name: `${shared.name}.bin` }, bufferRows);
    this.wide = new Uint32Array(width + 1);
  }

  get count(): number {
    return this.rows.rows;
  }

  append(row: ArrayLike<number>, text: string | null): void {
    this.wide.set(row);
    this.wide[this.width] = text === null ? 0 : this.addText(text) + 1;
    this.rows.append(this.wide);
  }

  private addText(text: string): number {
    if (this.texts === null) {
      const file = path.join(this.shared.dir.path, `${this.shared.name}.text`);
      this.texts = { file, fd: openSync(file, 'wx+') };
      this.pending = Buffer.allocUnsafe(TEXT_BUFFER_BYTES);
    }
    const bytes = text.length * 2;
    if (this.pendingBytes + bytes > this.pending.length) this.flushTexts();
    if (bytes > this.pending.length) writeAll(this.texts.fd, Buffer.from(text, 'utf16le'), this.texts.file);
    else this.pendingBytes += this.pending.write(text, this.pendingBytes, 'utf16le');
    return bytes;
  }

  private flushTexts(): void {
    if (this.texts === null || this.pendingBytes === 0) return;
    writeAll(this.texts.fd, this.pending, this.texts.file, this.pendingBytes);
    this.pendingBytes = 0;
  }

  /** Every row in the order appended, with its text; the row view and the object are reused. */
  *read(): Generator<TextRow> {
    this.flushTexts();
    const at: TextRow = { row: new Uint32Array(0), text: null };
    let chunk = Buffer.allocUnsafe(this.texts === null ? 0 : TEXT_BUFFER_BYTES);
    let start = 0;
    let end = 0;
    let position = 0;
    for (const wide of this.rows.read()) {
      at.row = wide.subarray(0, this.width);
      const length = wide[this.width] - 1;
      at.text = null;
      if (length >= 0) {
        if (end - start < length) {
          // Keep what is left of the chunk, then read on from the file.
          const grown = length > chunk.length ? Buffer.allocUnsafe(Math.max(length, TEXT_BUFFER_BYTES)) : chunk;
          chunk.copy(grown, 0, start, end);
          chunk = grown;
          end -= start;
          start = 0;
          while (end < length) {
            const read = readSync(this.texts!.fd, chunk, end, chunk.length - end, position);
            if (read === 0) throw new Error(`${this.texts!.file}: ended before its rows`);
            position += read;
            end += read;
          }
        }
        at.text = chunk.toString('utf16le', start, start + length);
        start += length;
      }
      yield at;
    }
  }

  dispose(): void {
    this.rows.dispose();
    if (this.texts !== null) {
      closeSync(this.texts.fd);
      rmSync(this.texts.file, { force: true });
      this.texts = null;
    }
  }
}

/** `PartitionedSpill` for rows that may carry a text (`TextSpillFile`). */
export class PartitionedTextSpill extends Partitions<TextSpillFile> {
  constructor(
    dir: RunTempDir,
    name: string,
    readonly width: number,
    partitions: number,
  ) {
    const bufferRows = Math.max(16, Math.floor(PARTITION_BUFFER_BYTES / ((width + 1) * 4)));
    super(partitions, (p) => new TextSpillFile(width, { dir, name: `${name}-${p}` }, bufferRows));
  }

  append(partition: number, row: ArrayLike<number>, text: string | null): void {
    this.files[partition]!.append(row, text);
  }

  rows(partition: number): number {
    return this.files[partition]?.count ?? 0;
  }

  read(partition: number): Generator<TextRow> {
    return this.files[partition]!.read();
  }
}
