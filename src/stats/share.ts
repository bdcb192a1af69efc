/** `stats` over one share of the files, in a worker thread. */
import type { WorkShare } from '../parallel/units.js';
import type { TraceFile } from '../sources/discover.js';
import { readFileRange } from '../sources/read.js';
import { StatsCollector, type StatsSnapshot } from './collect.js';

export interface StatsSharePayload {
  files: TraceFile[];
  share: WorkShare;
}

export async function statsShare({ files, share }: StatsSharePayload): Promise<StatsSnapshot> {
  const stats = new StatsCollector({ logKeys: true });
  for (const range of share.ranges) {
    for await (const batch of readFileRange(files[range.fileIndex], { start: range.start, end: range.end })) {
      stats.bytes += batch.bytes;
      for (const record of batch.records) stats.addRecord(record);
      for (const damaged of batch.damaged) stats.addDamaged(damaged);
    }
  }
  return stats.snapshot();
}
