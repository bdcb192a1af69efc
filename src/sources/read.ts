/** Turns trace files into batches of records and damaged lines. */
import type { DamagedLine, TraceRecord } from '../record.js';
import { JsonSyntaxError } from '../canonical/scan.js';
import type { TraceFile } from './discover.js';
import { readLineBatches, type ByteRange } from './lines.js';
import { DamagedRecordError, SynalinksRecord } from './synalinks-record.js';

export interface RecordBatch {
  file: TraceFile;
  records: TraceRecord[];
  damaged: DamagedLine[];
  /** Bytes of the file this batch covers, for progress. */
  bytes: number;
}

function damageReason(error: unknown, terminated: boolean): string {
  const detail = error instanceof JsonSyntaxError || error instanceof DamagedRecordError ? error.message : String(error);
  return terminated ? detail : `truncated last line, no newline at end of file (${detail})`;
}

/** Records of a Synalinks trace file, or of the lines that start in `range`. */
export async function* readSynalinksFile(file: TraceFile, range?: ByteRange): AsyncGenerator<RecordBatch> {
  for await (const lines of readLineBatches(file.path, range)) {
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

export async function* readFiles(files: readonly TraceFile[]): AsyncGenerator<RecordBatch> {
  for (const file of files) yield* readSynalinksFile(file);
}

/**
 * Records of the chosen lines only (per file index, sorted line numbers): a second pass
 * that skips the scan of every line it does not need.
 */
export async function* readSelectedRecords(
  files: readonly TraceFile[],
  lines: ReadonlyMap<number, Int32Array>,
): AsyncGenerator<{ fileIndex: number; records: TraceRecord[] }> {
  for (let fileIndex = 0; fileIndex < files.length; fileIndex++) {
    const wanted = lines.get(fileIndex);
    if (wanted === undefined || wanted.length === 0) continue;
    const file = files[fileIndex];
    let next = 0;
    for await (const batch of readLineBatches(file.path)) {
      const records: TraceRecord[] = [];
      for (const line of batch) {
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
