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
  candidates: Candidate[];
  damaged: DamagedLine[];
  bytes: number;
}

export async function curateShare({ files, share, options }: CurateSharePayload): Promise<CurateShareResult> {
  const result: CurateShareResult = { candidates: [], damaged: [], bytes: 0 };
  for (const range of share.ranges) {
    for await (const batch of readFileRange(files[range.fileIndex], { start: range.start, end: range.end })) {
      result.bytes += batch.bytes;
      for (const record of batch.records) result.candidates.push(candidateOf(record, range.fileIndex, options));
      result.damaged.push(...batch.damaged);
    }
  }
  return result;
}
