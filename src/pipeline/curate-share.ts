/** The per-record half of curation over one share of the files, in a worker thread. */
import type { DamagedLine } from '../record.js';
import type { WorkShare } from '../parallel/units.js';
import type { TraceFile } from '../sources/discover.js';
import { readFileRange } from '../sources/read.js';
import { candidateOf, type Candidate, type CandidateOptions } from './candidate.js';

export interface CurateSharePayload {
  files: TraceFile[];
  share: WorkShare;
  options: CandidateOptions;
}

export interface CurateShareResult {
  /** Records and damaged lines in line order, so drops are listed the same however files are shared out. */
  items: ({ damaged: DamagedLine } | Candidate)[];
  records: number;
  bytes: number;
}

export async function curateShare({ files, share, options }: CurateSharePayload): Promise<CurateShareResult> {
  const result: CurateShareResult = { items: [], records: 0, bytes: 0 };
  for (const range of share.ranges) {
    for await (const batch of readFileRange(files[range.fileIndex], { start: range.start, end: range.end })) {
      result.bytes += batch.bytes;
      result.records += batch.records.length;
      let d = 0;
      for (const record of batch.records) {
        while (d < batch.damaged.length && batch.damaged[d].line < record.ref.line) result.items.push({ damaged: batch.damaged[d++] });
        result.items.push(candidateOf(record, range.fileIndex, options));
      }
      while (d < batch.damaged.length) result.items.push({ damaged: batch.damaged[d++] });
    }
  }
  return result;
}
