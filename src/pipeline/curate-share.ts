/** The per-record half of curation over one share of the files, in a worker thread. */
import type { WorkShare } from '../parallel/units.js';
import type { TraceFile } from '../sources/discover.js';
import { readFileRange } from '../sources/read.js';
import { candidateOf, type CandidateOptions, type RecordVerdict, type TargetVerdictStage } from './candidate.js';
import { JOBS } from '../parallel/jobs.js';
import { runJob } from '../parallel/job.js';
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

/** The target's verdict of the run this thread serves: made once per run (it may load a tokenizer). */
let verdictOfRun: { run: string; verdict: RecordVerdict } | null = null;

async function targetVerdictOf(stage: TargetVerdictStage): Promise<RecordVerdict> {
  if (verdictOfRun?.run !== stage.run) verdictOfRun = { run: stage.run, verdict: await runJob(JOBS[stage.job], stage.settings as never) };
  return verdictOfRun.verdict;
}

export async function curateShare({ files, share, options }: CurateSharePayload): Promise<CurateShareResult> {
  const verdict = options.targetVerdict == null ? null : await targetVerdictOf(options.targetVerdict);
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
        candidates.add(candidateOf(record, range.fileIndex, options, verdict));
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
