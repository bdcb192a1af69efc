/** The per-record half of `runs` over one share of the files, in a worker thread. */
import type { WorkShare } from '../parallel/units.js';
import { PriceTable, type PriceTableData } from '../pricing/table.js';
import type { TraceFile } from '../sources/discover.js';
import { readFileRange } from '../sources/read.js';
import type { SourceRun } from '../sources/source-run.js';
import { CallTable, type CallColumns } from './call-facts.js';

export interface RunsSharePayload {
  files: TraceFile[];
  share: WorkShare;
  /** The price table for cost estimates, as plain data. */
  prices: { data: PriceTableData; origin: string } | null;
}

export interface RunsShareResult {
  calls: CallColumns;
  /** Runs the recorders describe (Ask, klieo), with the file they came from. */
  sourceRuns: { fileIndex: number; run: SourceRun }[];
  records: number;
  bytes: number;
}

export async function runsShare({ files, share, prices }: RunsSharePayload): Promise<RunsShareResult> {
  const table = prices === null ? null : new PriceTable(prices.data, prices.origin);
  const calls = new CallTable();
  const result: Omit<RunsShareResult, 'calls'> = { sourceRuns: [], records: 0, bytes: 0 };
  for (const range of share.ranges) {
    for await (const batch of readFileRange(files[range.fileIndex], { start: range.start, end: range.end })) {
      result.bytes += batch.bytes;
      result.records += batch.records.length;
      for (const record of batch.records) calls.add(record, range.fileIndex, table);
      for (const run of batch.runs ?? []) result.sourceRuns.push({ fileIndex: range.fileIndex, run });
    }
  }
  return { ...result, calls: calls.columns() };
}

declare module '../parallel/jobs.js' {
  interface JobFunctions {
    runs: typeof runsShare;
  }
}
