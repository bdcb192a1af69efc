/**
 * The jobs worker threads can run, by name. Each takes plain data and returns plain data.
 * Modules load on first use, so a worker (or a command) only pays for the job it runs.
 */
import type { projectShare } from '../export/project-share.js';
import type { runsShare } from '../runs/runs-share.js';
import type { curateShare } from '../pipeline/curate-share.js';
import type { scanShare } from '../privacy/scan-share.js';
import type { statsShare } from '../stats/share.js';
import type { verifyShare } from '../canonical/verify-share.js';
import type { indexShare } from '../index/share.js';

interface Jobs {
  stats: typeof statsShare;
  curate: typeof curateShare;
  verify: typeof verifyShare;
  project: typeof projectShare;
  scan: typeof scanShare;
  runs: typeof runsShare;
  index: typeof indexShare;
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
};

/** Loads a job's modules ahead of its first payload (a worker does this while it would wait anyway). */
export async function loadJob(job: JobName): Promise<void> {
  await LOADERS[job]();
}

export async function runJob<J extends JobName>(job: J, payload: JobPayload<J>): Promise<JobResult<J>> {
  const run = (await LOADERS[job]()) as (payload: JobPayload<J>) => Promise<JobResult<J>>;
  return run(payload);
}
