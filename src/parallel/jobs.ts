/**
 * The jobs worker threads can run, by name. Each takes plain data and returns plain data.
 * Modules load on first use, so a worker (or a command) only pays for the job it runs.
 */
import type { projectShare, warmProjection } from '../export/project-share.js';
import type { runsShare } from '../runs/runs-share.js';
import type { curateShare } from '../pipeline/curate-share.js';
import type { scanShare } from '../privacy/scan-share.js';
import type { statsShare } from '../stats/share.js';
import type { verifyShare } from '../canonical/verify-share.js';
import type { indexShare } from '../index/share.js';
import type { copyShare } from '../output/line-copy.js';

interface Jobs {
  stats: typeof statsShare;
  curate: typeof curateShare;
  verify: typeof verifyShare;
  project: typeof projectShare;
  scan: typeof scanShare;
  runs: typeof runsShare;
  index: typeof indexShare;
  copy: typeof copyShare;
}

export type JobName = keyof Jobs;
export type JobPayload<J extends JobName> = Parameters<Jobs[J]>[0];
export type JobResult<J extends JobName> = Awaited<ReturnType<Jobs[J]>>;

const LOADERS: { [J in JobName]: () => Promise<Jobs[J]> } = {
  stats: async () => (await import('../stats/share.js')).statsShare,
  curate: async () => (await import('../pipeline/curate-share.js')).curateShare,
  verify: async () => (await import('../canonical/verify-share.js')).verifyShare,
  project: async () => (await import('../export/project-share.js')).projectShare,
  scan: async () => (await import('../privacy/scan-share.js')).scanShare,
  runs: async () => (await import('../runs/runs-share.js')).runsShare,
  index: async () => (await import('../index/share.js')).indexShare,
  copy: async () => (await import('../output/line-copy.js')).copyShare,
};

/**
 * What a job can prepare before its first payload beyond loading its modules, given what it
 * needs to know: a projection loads its tokenizer (hundreds of ms, once per thread).
 */
const WARMERS: Partial<Record<JobName, (data: unknown) => Promise<void>>> = {
  project: async (data) => (await import('../export/project-share.js')).warmProjection(data as Parameters<typeof warmProjection>[0]),
};

/**
 * The young generation of a worker (MB), by the jobs its run hands it. A projection builds and
 * drops objects for every message: its worker spent 1.2 s of 6.7 in scavenges at 4 MB and 0.6 s
 * at 32 on the 200 MB bench tree, and the export ran about 3% faster at the same peak memory.
 * The reading jobs gained nothing from it, so they keep 4 MB, 11 MB less resident per worker.
 */
export function youngGenerationMb(jobs: readonly JobName[]): number {
  return jobs.includes('project') ? 32 : 4;
}

/** Loads a job's modules, and prepares it with `warm` when given, ahead of its first payload. */
export async function loadJob(job: JobName, warm?: unknown): Promise<void> {
  await LOADERS[job]();
  if (warm !== undefined) await WARMERS[job]?.(warm);
}

export async function runJob<J extends JobName>(job: J, payload: JobPayload<J>): Promise<JobResult<J>> {
  const run = (await LOADERS[job]()) as (payload: JobPayload<J>) => Promise<JobResult<J>>;
  return run(payload);
}
