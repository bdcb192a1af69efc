/** Turns trace files into batches of records and damaged lines, whichever recorder wrote them. */
import { stat } from 'node:fs/promises';
import type { DamagedLine, TraceRecord } from '../record.js';
import { JsonSyntaxError } from '../canonical/scan.js';
import type { TraceFile } from './discover.js';
import { readLineBatches, type ByteRange } from './lines.js';
import type { SourceRun } from './source-run.js';
import { DamagedRecordError, SynalinksRecord } from './synalinks-record.js';

export interface RecordBatch {
  file: TraceFile;
  records: TraceRecord[];
  damaged: DamagedLine[];
  /** Bytes of the file this batch covers, for progress. */
  bytes: number;
  /** Runs as the recorder describes them (Ask recordings, klieo RunLogs); absent for Synalinks. */
  runs?: SourceRun[];
}

/** Why a line is not a record; a last line with no newline is a crash mid-write. */
export function damageReason(error: unknown, terminated: boolean): string {
  const detail = error instanceof JsonSyntaxError || error instanceof DamagedRecordError ? error.message : String(error);
  return terminated ? detail : `truncated last line, no newline at end of file (${detail})`;
}

/** Records of a Synalinks trace file, or of the lines that start in `range`. */
export async function* readSynalinksFile(file: TraceFile, range?: ByteRange, transient = false): AsyncGenerator<RecordBatch> {
  for await (const lines of readLineBatches(file.path, range, undefined, transient)) {
    const batch: RecordBatch = { file, records: [], damaged: [], bytes: 0 };
    for (const line of lines) {
      batch.bytes += line.bytes.length + 1;
      const ref = { file: file.display, line: line.number, offset: line.offset };
      try {
        batch.records.push(new SynalinksRecord(line.bytes, ref));
      } catch (error) {
        if (!(error instanceof JsonSyntaxError || error instanceof DamagedRecordError)) throw error;
        batch.damaged.push({ ...ref, reason: damageReason(error, line.terminated) });
      }
    }
    yield batch;
  }
}

/** Records of an Ask or klieo file; the whole file's size is counted with its last batch. */
export async function* readOtherFile(file: TraceFile): AsyncGenerator<RecordBatch> {
  // Loaded on demand: most runs read only Synalinks files, and every worker thread would pay for these.
  const batches = file.source === 'ask' ? (await import('./ask.js')).readAskFile(file) : (await import('./klieo.js')).readKlieoFile(file);
  let previous: RecordBatch | null = null;
  for await (const batch of batches) {
    if (previous !== null) yield previous;
    previous = { file, records: batch.records, damaged: batch.damaged, bytes: 0, runs: batch.runs };
  }
  const last = previous ?? { file, records: [], damaged: [], bytes: 0, runs: [] };
  last.bytes = await stat(file.path).then((s) => s.size, () => 0);
  yield last;
}

function isSynalinks(file: TraceFile): boolean {
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
      // Ask and klieo records are rebuilt from the whole file: the share holding its start
      // reads it again and keeps the wanted ordinals (`ref.line`).
      if (range !== undefined && range.start !== 0) continue;
      for await (const batch of readOtherFile(file)) {
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
    for await (const batch of readLineBatches(file.path, range, undefined, true)) {
      const records: TraceRecord[] = [];
      for (const line of batch) {
        while (next < wanted.length && wanted[next] < line.number) next++;
        if (next < wanted.length && wanted[next] === line.number) {
          records.push(new SynalinksRecord(line.bytes, { file: file.display, line: line.number, offset: line.offset }));
          next++;
        }
      }
      if (records.length > 0) yield { fileIndex, records };
      if (next >= wanted.length) break;
    }
  }
}
