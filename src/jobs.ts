/**
 * The jobs the commands hand to worker threads, named here, above every layer they come
 * from: the parallel layer runs whatever job it is given and knows none of them. Type
 * imports only, so naming a job loads none of its modules (a worker loads them when it is
 * handed the job).
 */
import type { projectShare } from './export/project-share.js';
import type { runsShare } from './runs/runs-share.js';
import type { curateShare } from './pipeline/curate-share.js';
import type { scanShare } from './privacy/scan-share.js';
import type { statsShare } from './stats/share.js';
import type { verifyShare } from './canonical/verify-share.js';
import type { indexShare } from './index/share.js';
import type { copyShare } from './output/line-copy.js';
import { defineJob } from './parallel/job.js';

const at = (module: string) => new URL(module, import.meta.url);

export const JOBS = {
  stats: defineJob<typeof statsShare>(at('./stats/share.js'), 'statsShare'),
  curate: defineJob<typeof curateShare>(at('./pipeline/curate-share.js'), 'curateShare'),
  verify: defineJob<typeof verifyShare>(at('./canonical/verify-share.js'), 'verifyShare'),
  /**
   * A projection builds and drops objects for every message: its worker spent 1.2 s of 6.7 in
   * scavenges with a young generation of 4 MB and 0.6 s with 32 on the 200 MB bench tree.
   * With the old generation collected more often (src/v8-tuning.ts), 16 MB costs the worker
   * 17% more scavenging than 32 (1.21 s against 1.03 s, under load; 8 MB: 2.03 s) and holds
   * 16 MB less resident. It loads its tokenizer ahead of its first share (hundreds of ms, once
   * per thread).
   */
  project: defineJob<typeof projectShare>(at('./export/project-share.js'), 'projectShare', { warm: 'warmProjection', youngGenerationMb: 16 }),
  scan: defineJob<typeof scanShare>(at('./privacy/scan-share.js'), 'scanShare'),
  runs: defineJob<typeof runsShare>(at('./runs/runs-share.js'), 'runsShare'),
  index: defineJob<typeof indexShare>(at('./index/share.js'), 'indexShare'),
  copy: defineJob<typeof copyShare>(at('./output/line-copy.js'), 'copyShare'),
};
