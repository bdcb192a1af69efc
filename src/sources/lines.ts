/**
 * Splits a file into lines on bytes, never decoding the file as one string: trace files can
 * exceed V8's string limit, and a single line can hold tens of MB of base64 image.
 */
import { closeSync, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import { letEventLoopRun } from '../cooperate.js';
import { listedFileGone, UserError } from '../errors.js';
import { formatBytes } from '../format.js';

const NEWLINE = 0x0a;
const EMPTY = Buffer.alloc(0);
/**
 * Small enough that a chunk is still in the core's own cache when the line scanner walks it
 * after the read copied it in: with 4 MB chunks, `stats` took 12% longer on one thread and
 * 15% on two, where both threads share the last-level cache.
 */
const CHUNK_SIZE = 256 << 10;

/**
 * The longest line read as a record: 128 MiB. A longer one is damaged (`line_too_long`) and
 * skipped as it is read, never held: a crash can leave gigabytes of zero bytes with no newline,
 * and a line of 2 GiB or more cannot even be one Buffer the scanner walks with 32-bit indexes.
 * Every text of such a line fits in a JavaScript string (2^29 - 24 units, about 536 MB), and
 * the bound keeps what a line costs bounded: about 1.3 GB to export a 120 MB line, 0.2 GB for
 * stats. A record of images as data URLs holds nine at OpenAI's 10 MB limit (13.3 MB of base64
 * each), or dozens of usual ones.
 */
export const MAX_LINE_BYTES = Number(process.env.TRACES_TEST_MAX_LINE ?? 128 * 2 ** 20);

/** A line longer than this is measured before it is read (see `measuring`); shorter ones are joined from their reads. */
const LONG_LINE = Math.min(8 << 20, MAX_LINE_BYTES / 2);

/** What is wrong with a line longer than MAX_LINE_BYTES. */
export function lineTooLongDetail(length: number): string {
  return `the line is ${formatBytes(length)}, more than the ${formatBytes(MAX_LINE_BYTES)} a record may be; skipped without being read (a crash can leave a long run of zero bytes with no newline)`;
}

/** Why a line longer than MAX_LINE_BYTES is damaged, for every command. */
export function lineTooLongReason(length: number): string {
  return `line_too_long: ${lineTooLongDetail(length)}`;
}

export interface Line {
  /** The line's bytes without the line ending (LF or CRLF); a leading BOM stays (see trimLine). Empty when `tooLong`. */
  bytes: Buffer;
  /** Bytes of the line in the file, without its newline. */
  length: number;
  /** Longer than MAX_LINE_BYTES: skipped, its bytes not read into memory (see `lineTooLongReason`). */
  tooLong: boolean;
  /** 1-based. */
  number: number;
  /** Byte offset of the line's first byte in the file. */
  offset: number;
  /** False for a last line with no newline after it: a crash mid-write leaves one. */
  terminated: boolean;
}

/** A part of a file: the lines that start in [start, end). */
export interface ByteRange {
  start: number;
  end: number;
}

/**
 * The line without its CR (JSON whitespace, which a strict parser accepts too). A byte order
 * mark stays: orjson refuses a line that starts with one, so for every command it is damaged.
 */
function trimLine(bytes: Buffer): Buffer {
  return bytes.length > 0 && bytes[bytes.length - 1] === 0x0d ? bytes.subarray(0, bytes.length - 1) : bytes;
}

function isBlank(bytes: Buffer): boolean {
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i];
    if (c !== 0x20 && c !== 0x09 && c !== 0x0d) return false;
  }
  return true;
}

/**
 * Newline counts at the range starts this thread has met, by file: a later range of the same
 * file counts on from the nearest one before it, not from byte 0. A big file is cut into many
 * ranges, and counting each from the start read the file again per range (quadratic); each
 * thread now reads it about once. A file that changed (size, mtime, inode) starts over.
 */
interface Checkpoints {
  identity: string;
  /** Offsets, ascending, and the newlines before each. */
  at: number[];
  newlines: number[];
}
const checkpoints = new Map<string, Checkpoints>();
/** Files remembered at most per thread: a run reads files one after another. */
const CHECKPOINT_FILES = 64;

/** Newlines in [0, end) of an open file: the line number a range starts after. */
function countNewlines(path: string, fd: number, stat: Stats, end: number): number {
  const identity = `${stat.size}:${stat.mtimeMs}:${stat.ino}`;
  let known = checkpoints.get(path);
  if (known === undefined || known.identity !== identity) {
    if (checkpoints.size >= CHECKPOINT_FILES) checkpoints.clear();
    known = { identity, at: [], newlines: [] };
    checkpoints.set(path, known);
  }
  let from = 0;
  let count = 0;
  let k = known.at.length - 1;
  while (k >= 0 && known.at[k] > end) k--;
  if (k >= 0) {
    from = known.at[k];
    count = known.newlines[k];
  }
  count += newlinesBetween(fd, from, end);
  if (k < 0 || known.at[k] !== end) {
    known.at.splice(k + 1, 0, end);
    known.newlines.splice(k + 1, 0, count);
  }
  return count;
}

function newlinesBetween(fd: number, start: number, end: number): number {
  const chunk = Buffer.allocUnsafe(Math.min(CHUNK_SIZE, Math.max(1, end - start)));
  let count = 0;
  for (let position = start; position < end; ) {
    const read = readSync(fd, chunk, 0, Math.min(chunk.length, end - position), position);
    if (read === 0) break;
    for (let at = chunk.indexOf(NEWLINE, 0); at !== -1 && at < read; at = chunk.indexOf(NEWLINE, at + 1)) count++;
    position += read;
  }
  return count;
}

/** Why the run stops when a file it planned on is another now: one line, naming it. */
export function fileChanged(path: string, why: string): UserError {
  return new UserError(`${path}: changed while traces was reading it (${why}): rerun once nothing rewrites it`);
}

/** Opens a trace file the run listed; one gone since says so (see `listedFileGone`). */
export function openListedFile(path: string): number {
  try {
    return openSync(path, 'r');
  } catch (error) {
    throw listedFileGone(error, path);
  }
}

/**
 * What a trace file was when the run listed it, the plan's reads being of that file: a second
 * read (the copy of dedupe and filter, the examples of export) checks the file is still it.
 */
export interface FileStamp {
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
}

export function fileStamp(info: Stats): FileStamp {
  return { dev: info.dev, ino: info.ino, size: info.size, mtimeMs: info.mtimeMs };
}

/**
 * Why the open file is no longer the one `stamp` describes, or null when it still is. Another
 * file at its path (an editor's save writes a new one and renames it over) has another inode;
 * one rewritten in place at the same size keeps its size but not its modification time. A
 * recorder appending changes both size and time, and its appended lines are beyond the plan:
 * that file is still the one planned on. (Cut short, it is caught line by line.)
 */
export function changedSince(fd: number, stamp: FileStamp | undefined): string | null {
  if (stamp === undefined) return null;
  const now = fstatSync(fd);
  if (now.ino !== stamp.ino || now.dev !== stamp.dev) return 'another file is at its path now, as an editor saves one';
  if (now.size === stamp.size && now.mtimeMs !== stamp.mtimeMs) return 'rewritten in place: the same size, modified again';
  return null;
}

export interface LineReadOptions {
  /** Only the lines that start in this range. */
  range?: ByteRange;
  /** The file as the run listed it: a read of another file (see `changedSince`) stops the run. */
  stamp?: FileStamp;
  chunkSize?: number;
  /** Reuse one read buffer: each batch's lines are valid only until the next batch is asked for. */
  transient?: boolean;
  /** Yield blank lines too (a trainer refuses them, so `validate` reports them). */
  blank?: boolean;
}

/**
 * Yields the non-blank lines (every line, with `blank`) of a file (or of the lines starting in `range`) in batches,
 * one per chunk read, so callers pay one await per few MB rather than per line. Each
 * chunk is a fresh buffer: lines handed out stay valid after the next read.
 */
export async function* readLineBatches(path: string, options: LineReadOptions = {}): AsyncGenerator<Line[]> {
  const { range, chunkSize = CHUNK_SIZE, transient = false, blank = false, stamp } = options;
  // Synchronous reads: a reader works through one file at a time and gains nothing from
  // the thread pool, while paying a round trip per call for it.
  const fd = openListedFile(path);
  try {
    const changed = changedSince(fd, stamp);
    if (changed !== null) throw fileChanged(path, changed);
    const stat = fstatSync(fd);
    const size = stat.size;
    const end = Math.min(range?.end ?? size, size);
    let position = range?.start ?? 0;
    let lineNumber = 0;
    let skipPartialLine = false;
    if (position > 0) {
      // The range starts mid-file: its first line is the first one that starts in it.
      lineNumber = countNewlines(path, fd, stat, position);
      const before = Buffer.alloc(1);
      readSync(fd, before, 0, 1, position - 1);
      skipPartialLine = before[0] !== NEWLINE;
    }
    let fileOffset = position; // offset of the first byte of `pending`
    let pending: Buffer[] = [];
    let pendingLength = 0;
    /**
     * The line being read is longer than LONG_LINE: it is measured first, reading on without
     * keeping anything, then read whole into one buffer of its size if it may be a record. A
     * line too long to be one is never held, and a long one is not held twice (parts, then joined).
     */
    let measuring = false;
    let done = false;
    let reused: Buffer | null = transient ? leaseBuffer(chunkSize) : null;
    /** Whether part of the partial line lives in `reused`, which the next read would overwrite. */
    let pendingInReused = false;
    let scratch: Buffer | null = null;
    const longLine = (length: number, terminated: boolean): Line[] => {
      lineNumber++;
      if (length > MAX_LINE_BYTES) return [{ bytes: EMPTY, length, tooLong: true, number: lineNumber, offset: fileOffset, terminated }];
      const raw = Buffer.allocUnsafe(length);
      let got = 0;
      while (got < length) {
        const n = readSync(fd, raw, got, length - got, fileOffset + got);
        if (n === 0) break;
        got += n;
      }
      const bytes = trimLine(raw.subarray(0, got));
      return blank || !isBlank(bytes) ? [{ bytes, length: got, tooLong: false, number: lineNumber, offset: fileOffset, terminated }] : [];
    };
    while (!done) {
      if (measuring) {
        scratch ??= reused ?? Buffer.allocUnsafe(chunkSize);
        const read = readSync(fd, scratch, 0, scratch.length, position);
        if (read === 0) break;
        const nl = scratch.subarray(0, read).indexOf(NEWLINE);
        if (nl === -1) {
          position += read;
          await letEventLoopRun();
          continue;
        }
        const length = position + nl - fileOffset;
        const lines = longLine(length, true);
        fileOffset += length + 1;
        position = fileOffset;
        measuring = false;
        if (lines.length > 0) yield lines;
        continue;
      }
      // Most trace files are far smaller than a chunk: size the buffers to what is left.
      const want = Math.max(1, Math.min(chunkSize, size - position + 1));
      let chunk: Buffer;
      if (reused === null) chunk = Buffer.allocUnsafe(want);
      else if (!pendingInReused) chunk = reused;
      else if (pendingLength <= chunkSize >> 2) {
        // A short partial line is copied out of the buffer about to be reused. A long one stays
        // where it is and the reads go to fresh buffers until it ends: a line of many MB is
        // then copied once, not once per read.
        pending = [Buffer.concat(pending, pendingLength)];
        pendingInReused = false;
        chunk = reused;
      } else chunk = Buffer.allocUnsafe(want);
      const bytesRead = readSync(fd, chunk, 0, want, position);
      if (bytesRead === 0) break;
      position += bytesRead;
      const data = chunk.subarray(0, bytesRead);
      const batch: Line[] = [];
      let p = 0;
      if (skipPartialLine) {
        const nl = data.indexOf(NEWLINE);
        if (nl === -1) {
          fileOffset += bytesRead;
          // No newline before the range's end: no line starts in the range (the line that
          // covers it, as long as it may be, is the earlier range's to read).
          if (position >= end) break;
          continue;
        }
        lineNumber++;
        fileOffset += nl + 1;
        p = nl + 1;
        skipPartialLine = false;
      }
      let nl: number;
      while ((nl = data.indexOf(NEWLINE, p)) !== -1) {
        if (pendingLength === 0 && fileOffset >= end) {
          done = true;
          break;
        }
        if (pendingLength + nl - p > MAX_LINE_BYTES) {
          const length = pendingLength + nl - p;
          pending = [];
          pendingLength = 0;
          pendingInReused = false;
          lineNumber++;
          batch.push({ bytes: EMPTY, length, tooLong: true, number: lineNumber, offset: fileOffset, terminated: true });
          fileOffset += length + 1;
          p = nl + 1;
          continue;
        }
        let raw: Buffer;
        if (pendingLength > 0) {
          pending.push(data.subarray(p, nl));
          raw = Buffer.concat(pending, pendingLength + nl - p);
          pending = [];
          pendingLength = 0;
          pendingInReused = false;
        } else {
          raw = data.subarray(p, nl);
        }
        lineNumber++;
        const bytes = trimLine(raw);
        if (blank || !isBlank(bytes)) batch.push({ bytes, length: raw.length, tooLong: false, number: lineNumber, offset: fileOffset, terminated: true });
        fileOffset += raw.length + 1;
        p = nl + 1;
      }
      if (!done && p < data.length) {
        if (pendingLength === 0 && fileOffset >= end) done = true;
        else if (pendingLength + data.length - p > LONG_LINE) {
          // What was kept of it goes: the line is measured, then read once whole (or skipped).
          pending = [];
          pendingLength = 0;
          pendingInReused = false;
          measuring = true;
        } else {
          pending.push(data.subarray(p));
          pendingLength += data.length - p;
          if (chunk === reused) pendingInReused = true;
        }
      }
      if (batch.length > 0) yield batch;
      await letEventLoopRun();
    }
    if (measuring && position > fileOffset) {
      const lines = longLine(position - fileOffset, false);
      if (lines.length > 0) yield lines;
    } else if (pendingLength > 0 && fileOffset < end) {
      lineNumber++;
      const raw = Buffer.concat(pending, pendingLength);
      const bytes = trimLine(raw);
      if (blank || !isBlank(bytes)) yield [{ bytes, length: raw.length, tooLong: false, number: lineNumber, offset: fileOffset, terminated: false }];
    }
    if (reused !== null) {
      returnBuffer(reused);
      reused = null;
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * One spare read buffer per thread. A fresh buffer per read makes external memory churn
 * faster than the collector returns it, and resident memory climbs with the bytes read.
 */
let spareBuffer: Buffer | null = null;

function leaseBuffer(size: number): Buffer {
  if (spareBuffer !== null && spareBuffer.length === size) {
    const buffer = spareBuffer;
    spareBuffer = null;
    return buffer;
  }
  return Buffer.allocUnsafe(size);
}

function returnBuffer(buffer: Buffer): void {
  spareBuffer = buffer;
}
