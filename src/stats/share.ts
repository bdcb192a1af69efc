/** `stats` over one share of the files, in a worker thread. */
import type { WorkShare } from '../parallel/units.js';
import type { TraceFile } from '../sources/discover.js';
import { readFileRange } from '../sources/read.js';
import { PriceTable, type PriceTableData } from '../pricing/table.js';
import { StatsCollector, type StatsSnapshot } from './collect.js';
import type { KeyKind } from '../pipeline/keys.js';
import type { ScrubSettings } from '../privacy/scrub.js';

export interface StatsSharePayload {
  files: TraceFile[];
  share: WorkShare;
  /** The price table for cost estimates, as plain data. */
  prices?: { data: PriceTableData; origin: string } | null;
  /** The dedupe key duplicates are counted by (default: `DEFAULT_KEY`). */
  key?: KeyKind;
  /** How the names the report shows are scrubbed (null: as recorded). */
  scrub?: ScrubSettings | null;
}

export async function statsShare({ files, share, prices, key, scrub }: StatsSharePayload): Promise<StatsSnapshot> {
  const stats = new StatsCollector({ logKeys: true, key, scrub, prices: prices ? new PriceTable(prices.data, prices.origin) : null, bytes: share.bytes });
  for (const range of share.ranges) {
    for await (const batch of readFileRange(files[range.fileIndex], { start: range.start, end: range.end })) {
      stats.bytes += batch.bytes;
      for (const record of batch.records) stats.addRecord(record);
      for (const damaged of batch.damaged) stats.addDamaged(damaged);
      stats.addSkipped(batch.skippedCalls);
    }
  }
  return stats.snapshot();
}

declare module '../parallel/jobs.js' {
  interface JobFunctions {
    stats: typeof statsShare;
  }
}
