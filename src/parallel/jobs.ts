/** The jobs worker threads can run, by name. Each takes plain data and returns plain data. */
import { projectShare } from '../export/project-share.js';
import { curateShare } from '../pipeline/curate-share.js';
import { scanShare } from '../privacy/scan-share.js';
import { statsShare } from '../stats/share.js';
import { verifyShare } from '../canonical/verify-share.js';

export const JOBS = {
  stats: statsShare,
  curate: curateShare,
  verify: verifyShare,
  project: projectShare,
  scan: scanShare,
};

export type JobName = keyof typeof JOBS;
