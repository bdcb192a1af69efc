/** Turns trace files into batches of records and damaged lines, whichever recorder wrote them. */
import { closeSync, readSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { UserError } from '../errors.js';
import type { DamagedLine, TraceRecord } from '../record.js';
import { JsonSyntaxError, withEncodingHint } from '../canonical/scan.js';
import type { TraceFile } from './trace-file.js';
import { changedSince, fileChanged, lineTooLongReason, MAX_LINE_BYTES, openListedFile, readLineBatches, type ByteRange, type FileStamp } from './lines.js';
import type { SourceRun } from './source-run.js';
import { sourceOf } from './registry.js';
import { DamagedRecordError, SynalinksRecord } from './synalinks-record.js';
import { damageReason } from './damage.js';

export interface RecordBatch {
  file: TraceFile;
  records: TraceRecord[];
  damaged: DamagedLine[];
  /** Bytes of the file this batch covers, for progress. */
  bytes: number;
  /** Runs as the recorder describes them (Ask recordings, klieo RunLogs); absent for Synalinks. */
  runs?: SourceRun[];
  /** Calls read but holding nothing to learn from (content capture off), by reason. */
  skippedCalls?: Record<string, number>;
}

/** Records of a Synalinks trace file, or of the lines that start in `range`. */
export async function* readSynalinksFile(file: TraceFile, range?: ByteRange, transient = false): AsyncGenerator<RecordBatch> {
  for await (const lines of readLineBatches(file.path, { range, transient })) {
    const batch: RecordBatch = { file, records: [], damaged: [], bytes: 0 };
    for (const line of lines) {
      batch.bytes += line.length + 1;
      const ref = { file: file.display, line: line.number, offset: line.offset };
      if (line.tooLong) {
        batch.damaged.push({ ...ref, reason: damageReason(lineTooLongReason(line.length), line.terminated) });
        continue;
      }
      try {
        batch.records.push(new SynalinksRecord(line.bytes, ref));
      } catch (error) {
        if (!(error instanceof JsonSyntaxError || error instanceof DamagedRecordError)) throw error;
        batch.damaged.push({ ...ref, reason: withEncodingHint(damageReason(error, line.terminated), line.bytes) });
      }
    }
    yield batch;
  }
}

/**
 * Records of another source's file (registry.ts), or of the lines that start in `range` when the
 * source reads the file by lines (`splits`); else the whole file's size is counted with its last batch.
 */
export async function* readOtherFile(file: TraceFile, range?: ByteRange): AsyncGenerator<RecordBatch> {
  const source = sourceOf(file.source);
  if (source === undefined) throw new Error(`no source named ${file.source}`);
  const byLines = source.splits?.(file) === true;
  let previous: RecordBatch | null = null;
  for await (const batch of source.read(file, byLines ? range : undefined)) {
    if (previous !== null) yield previous;
    previous = { file, records: batch.records, damaged: batch.damaged, bytes: byLines ? (batch.bytes ?? 0) : 0, runs: batch.runs ?? [], skippedCalls: batch.skippedCalls };
  }
  const last = previous ?? { file, records: [], damaged: [], bytes: 0, runs: [] };
  if (!byLines) last.bytes = await stat(file.path).then((s) => s.size, () => 0);
  yield last;
}

/** Whether a share reads only its own byte range of the file: Synalinks files, and files a source reads by lines. */
export function splitsByLines(file: TraceFile): boolean {
  return isSynalinks(file) || sourceOf(file.source)?.splits?.(file) === true;
}

export function isSynalinks(file: TraceFile): boolean {
  return file.source === 'synalinks' || file.source === undefined;
}

export function readFile(file: TraceFile): AsyncGenerator<RecordBatch> {
  return isSynalinks(file) ? readSynalinksFile(file) : readOtherFile(file);
}

/**
 * Records of the part of a file a work share covers. Synalinks files split on lines; a
 * file of another recorder is read whole by the share holding its start, and its other
 * ranges yield nothing.
 */
export async function* readFileRange(file: TraceFile, range?: ByteRange): AsyncGenerator<RecordBatch> {
  if (isSynalinks(file)) yield* readSynalinksFile(file, range, true);
  else if (splitsByLines(file)) yield* readOtherFile(file, range);
  else if (range === undefined || range.start === 0) yield* readOtherFile(file);
}

export async function* readFiles(files: readonly TraceFile[]): AsyncGenerator<RecordBatch> {
  for (const file of files) yield* readFile(file);
}

/**
 * Records of the chosen lines only (per file index, sorted line numbers): a second pass
 * that skips the scan of every line it does not need.
 */
export async function* readSelectedRecords(
  files: readonly TraceFile[],
  lines: ReadonlyMap<number, Int32Array>,
  range?: ByteRange,
): AsyncGenerator<{ fileIndex: number; records: TraceRecord[] }> {
  for (const [fileIndex, wanted] of [...lines].sort(([a], [b]) => a - b)) {
    if (wanted.length === 0) continue;
    const file = files[fileIndex];
    // Kept lines are sorted: a range that starts mid-file begins with its first line past the cut.
    let next = 0;
    if (!isSynalinks(file)) {
      // Records of other sources are rebuilt, not re-read at an offset: the share holding the
      // file's start (or, for a source reading by lines, each share its own lines) reads it
      // again and keeps the wanted ordinals (`ref.line`).
      const byLines = splitsByLines(file);
      if (!byLines && range !== undefined && range.start !== 0) continue;
      const fd = openListedFile(file.path);
      try {
        const changed = changedSince(fd, file.stamp);
        if (changed !== null) throw fileChanged(file.path, changed);
      } finally {
        closeSync(fd);
      }
      for await (const batch of readOtherFile(file, byLines ? range : undefined)) {
        const records = batch.records.filter((r) => {
          while (next < wanted.length && wanted[next] < r.ref.line) next++;
          if (next >= wanted.length || wanted[next] !== r.ref.line) return false;
          next++;
          return true;
        });
        if (records.length > 0) yield { fileIndex, records };
        if (next >= wanted.length) break;
      }
      continue;
    }
    for await (const batch of readLineBatches(file.path, { range, transient: true, stamp: file.stamp })) {
      const records: TraceRecord[] = [];
      for (const line of batch) {
        while (next < wanted.length && wanted[next] < line.number) next++;
        if (next < wanted.length && wanted[next] === line.number) {
          // The first pass found a record on this line: a line too long now is another file.
          if (line.tooLong) throw lineChanged(file.path, line.offset);
          records.push(new SynalinksRecord(line.bytes, { file: file.display, line: line.number, offset: line.offset }));
          next++;
        }
      }
      if (records.length > 0) yield { fileIndex, records };
      if (next >= wanted.length) break;
    }
  }
}

const READ_AT_CHUNK = 4 << 20;

/** Fills `buffer` from `position` of the file as far as the file goes; returns the bytes read. */
export function readFull(fd: number, buffer: Uint8Array, position: number): number {
  let done = 0;
  while (done < buffer.length) {
    const n = readSync(fd, buffer, done, buffer.length - done, position + done);
    if (n === 0) break;
    done += n;
  }
  return done;
}

function lineChanged(path: string, offset: number): UserError {
  return fileChanged(path, `no record starts at byte ${offset} any more`);
}

/** A chosen line: its place in the offsets asked for, and its bytes without the line ending. */
export interface LineAt {
  index: number;
  /** The line without its line end. */
  bytes: Buffer;
  /** Whether the line ends with CR LF (a copy writes the line end it had). */
  crlf: boolean;
}

/**
 * The chosen lines of a file, found by their byte offsets (sorted), those in `range` only: a
 * second pass that neither splits the unwanted lines nor counts the lines before a range that
 * starts mid-file. Each batch is one chunk read; its lines point into a buffer the next read
 * reuses, so the caller finishes a batch before asking for the next.
 *
 * The offsets come from an earlier pass. A file rewritten or cut short since then would put
 * other bytes there, copied or exported as if they were the record: each chosen line must
 * still start a line (the byte before it a newline) and hold something, or the run stops.
 */
export function* readLinesAt(path: string, offsets: Float64Array, range?: ByteRange, chunkSize = READ_AT_CHUNK, stamp?: FileStamp): Generator<LineAt[]> {
  const start = range?.start ?? 0;
  const end = range?.end ?? Infinity;
  let i = 0;
  while (i < offsets.length && offsets[i] < start) i++;
  let last = i - 1;
  while (last + 1 < offsets.length && offsets[last + 1] < end) last++;
  if (last < i) return;
  const fd = openListedFile(path);
  let chunk = leaseChunk(chunkSize);
  try {
    const changed = changedSince(fd, stamp);
    if (changed !== null) throw fileChanged(path, changed);
    let data = chunk.subarray(0, 0);
    let dataStart = 0;
    let lines: LineAt[] = [];
    for (; i <= last; i++) {
      const offset = offsets[i];
      // The byte before the line is read too, to check that a line still starts there.
      const from = offset > 0 ? offset - 1 : 0;
      let at = offset - dataStart;
      let newline = from >= dataStart && at < data.length ? data.indexOf(0x0a, at) : -1;
      if (newline === -1) {
        // The line is not whole in what is read: hand over the lines of the chunk, then read on from the line.
        if (lines.length > 0) yield lines;
        lines = [];
        // As far as the last chosen line and a little of it: reading beyond costs as much as not needing it.
        let want = Math.min(chunkSize, offsets[last] - from + LINE_SLACK);
        at = offset - from;
        for (;;) {
          if (chunk.length < want) chunk = Buffer.allocUnsafe(want);
          data = chunk.subarray(0, readFull(fd, chunk.subarray(0, want), from));
          dataStart = from;
          newline = data.indexOf(0x0a, at);
          // A line longer than what was read (and not cut by the end of the file): read more of it.
          if (newline !== -1 || data.length < want) break;
          // No record the first pass read is this long: the file changed.
          if (want - at > MAX_LINE_BYTES + 2) throw lineChanged(path, offset);
          want *= 2;
        }
      }
      let lineEnd = newline === -1 ? data.length : newline;
      const crlf = lineEnd > at && data[lineEnd - 1] === 0x0d;
      if (crlf) lineEnd--;
      if (lineEnd <= at || (offset > 0 && data[at - 1] !== 0x0a)) {
        throw lineChanged(path, offset);
      }
      lines.push({ index: i, bytes: data.subarray(at, lineEnd), crlf });
    }
    if (lines.length > 0) yield lines;
  } finally {
    closeSync(fd);
    if (chunk.length <= 2 * chunkSize) spareChunk = chunk;
  }
}

/**
 * Records of a Synalinks file's chosen lines (`readLinesAt`), with their line numbers beside the
 * offsets, for a caller that reads their messages: each record is made, its messages built as
 * its line is validated, only when the caller comes to it (a batch's lists are not all held at once).
 */
export function* readSynalinksLinesAt(
  file: TraceFile,
  lines: Int32Array,
  offsets: Float64Array,
  range?: ByteRange,
  chunkSize = READ_AT_CHUNK,
): Generator<Iterable<TraceRecord>> {
  for (const batch of readLinesAt(file.path, offsets, range, chunkSize, file.stamp)) yield recordsAt(file, lines, offsets, batch);
}

function* recordsAt(file: TraceFile, lines: Int32Array, offsets: Float64Array, batch: LineAt[]): Generator<TraceRecord> {
  for (const { index, bytes } of batch) {
    let record: SynalinksRecord;
    try {
      record = new SynalinksRecord(bytes, { file: file.display, line: lines[index], offset: offsets[index] }, true);
    } catch (error) {
      // The first pass read a record here: what is there now is another line.
      if (error instanceof DamagedRecordError || error instanceof JsonSyntaxError) throw lineChanged(file.path, offsets[index]);
      throw error;
    }
    yield record;
  }
}

/** Read past the start of the last chosen line of a range, so most lines need no second read. */
const LINE_SLACK = 64 << 10;

/**
 * One spare read buffer per thread, reused: a fresh 4 MB buffer per share costs page faults
 * and external memory the collector returns late. A batch's records point into it, so each
 * batch is finished with before the next is asked for.
 */
let spareChunk: Buffer | null = null;

function leaseChunk(size: number): Buffer {
  const spare = spareChunk;
  spareChunk = null;
  return spare !== null && spare.length >= size ? spare : Buffer.allocUnsafe(size);
}
