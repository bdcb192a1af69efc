/**
 * The jobs the commands hand to worker threads, by name: a module (its path under src/) and the
 * function it exports. This table imports none of them, so it sits in the parallel layer and
 * anything may name a job without loading the job's modules (a worker loads them when handed
 * the job). Each job's own module gives its function's type under the job's name, by adding to
 * `JobFunctions`:
 *
 *   declare module '../parallel/jobs.js' { interface JobFunctions { stats: typeof statsShare } }
 */
import { defineJob, type Job } from './job.js';

/** A job's name and the type of the function it runs, declared by the module that exports the function. */
// eslint-disable-next-line @typescript-eslint/no-empty-interface -- filled by declaration merging
export interface JobFunctions {}

type JobOf<F> = F extends (payload: infer Payload) => Promise<infer Result> ? Job<Payload, Result> : never;

export type JobTable = { readonly [Name in keyof JobFunctions]: JobOf<JobFunctions[Name]> };

const at = (module: string) => new URL(`../${module}`, import.meta.url);

const table = {
  /**
   * Reading an OTLP span file builds every line's objects (`JSON.parse`, then the attributes'
   * JSON texts) and drops them: with the reading jobs' 4 MB young generation its worker ran
   * 682 scavenges over 64 MB of spans, 101 with 32 (this thread's default size), and under
   * load (2 cores, load average 25) a scavenge waits for its helper threads: 8.8 s of pauses
   * against 2.0 s, and 3.5 s of CPU against 1.9 to 2.5 s per pass (docs/performance.md,
   * issue 54). A Synalinks tree's records are scanned lazily and allocate less: its peak RSS
   * grew by 2 to 3 MB at 64 MB, 10 to 12 MB at 256 MB (a span file's: 28 MB).
   */
  stats: defineJob(at('stats/share.js'), 'statsShare', { youngGenerationMb: 32 }),
  curate: defineJob(at('pipeline/curate-share.js'), 'curateShare'),
  verify: defineJob(at('verify/share.js'), 'verifyShare'),
  /**
   * A projection builds and drops objects for every message: its worker spent 1.2 s of 6.7 in
   * scavenges with a young generation of 4 MB and 0.6 s with 32 on the 200 MB bench tree.
   * With the old generation collected more often (src/v8-tuning.ts), 16 MB costs the worker
   * 17% more scavenging than 32 (1.21 s against 1.03 s, under load; 8 MB: 2.03 s) and holds
   * 16 MB less resident. It loads its tokenizer ahead of its first share (hundreds of ms, once
   * per thread).
   */
  project: defineJob(at('export/project-share.js'), 'projectShare', { warm: 'warmProjection', youngGenerationMb: 16 }),
  /** The export target's verdict on each record, made where the plan reads them (pipeline/candidate.ts). */
  targetVerdict: defineJob(at('export/project-share.js'), 'targetVerdict'),
  askRecordingVerdict: defineJob(at('export/ask-recording.js'), 'askRecordingVerdict'),
  scan: defineJob(at('privacy/scan-share.js'), 'scanShare'),
  runs: defineJob(at('runs/runs-share.js'), 'runsShare'),
  index: defineJob(at('index/share.js'), 'indexShare'),
  copy: defineJob(at('pipeline/line-copy.js'), 'copyShare'),
} satisfies Record<keyof JobFunctions, Job>;

export const JOBS = table as unknown as JobTable;
