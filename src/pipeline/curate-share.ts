/** The per-record half of curation over one share of the files, in a worker thread. */
import type { WorkShare } from '../parallel/units.js';
import type { TraceFile } from '../sources/discover.js';
import { readFileRange } from '../sources/read.js';
import { candidateOf, type CandidateOptions } from './candidate.js';
import { CandidateBatchWriter, type CandidateBatch } from './candidate-batch.js';

export interface CurateSharePayload {
  files: TraceFile[];
  share: WorkShare;
  options: CandidateOptions;
}

export interface CurateShareResult {
  /** Records and damaged lines in line order, so drops are listed the same however files are shared out. */
  batch: CandidateBatch;
  records: number;
  bytes: number;
}

export async function curateShare({ files, share, options }: CurateSharePayload): Promise<CurateShareResult> {
  // About one record per 1.5 KB: the columns rarely need to grow.
  const candidates = new CandidateBatchWriter(Math.ceil(share.bytes / 1536));
  let records = 0;
  let bytes = 0;
  for (const range of share.ranges) {
    for await (const batch of readFileRange(files[range.fileIndex], { start: range.start, end: range.end })) {
      bytes += batch.bytes;
      records += batch.records.length;
      let d = 0;
      for (const record of batch.records) {
        while (d < batch.damaged.length && batch.damaged[d].line < record.ref.line) candidates.addDamaged(batch.damaged[d++]);
        candidates.add(candidateOf(record, range.fileIndex, options));
      }
      while (d < batch.damaged.length) candidates.addDamaged(batch.damaged[d++]);
    }
  }
  return { batch: candidates.finish(), records, bytes };
}

declare module '../parallel/jobs.js' {
  interface JobFunctions {
    curate: typeof curateShare;
  }
}
