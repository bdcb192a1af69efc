/** `index` over one share of the files, in a worker thread: the rows, and the damaged lines to report. */
import type { DamagedLine } from '../record.js';
import type { WorkShare } from '../parallel/units.js';
import type { TraceFile } from '../sources/discover.js';
import { readFileRange } from '../sources/read.js';
import { PriceTable, type PriceTableData } from '../pricing/table.js';
import { IndexBatchWriter, type IndexBatch } from './columns.js';
import { addRow, placeOf } from './row.js';

export interface IndexSharePayload {
  files: TraceFile[];
  share: WorkShare;
  prices: { data: PriceTableData; origin: string };
}

export interface IndexShareResult {
  batch: IndexBatch;
  damaged: DamagedLine[];
  bytes: number;
}

export async function indexShare({ files, share, prices }: IndexSharePayload): Promise<IndexShareResult> {
  const table = new PriceTable(prices.data, prices.origin);
  const rows = new IndexBatchWriter();
  const damaged: DamagedLine[] = [];
  let bytes = 0;
  for (const range of share.ranges) {
    const file = files[range.fileIndex];
    const place = placeOf(file);
    for await (const batch of readFileRange(file, { start: range.start, end: range.end })) {
      bytes += batch.bytes;
      for (const record of batch.records) addRow(rows, record, place, table);
      for (const line of batch.damaged) damaged.push(line);
    }
  }
  return { batch: rows.finish(), damaged, bytes };
}
