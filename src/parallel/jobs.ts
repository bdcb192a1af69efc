/** The jobs worker threads can run, by name. Each takes plain data and returns plain data. */
import { statsShare } from '../stats/share.js';

export const JOBS = {
  stats: statsShare,
};

export type JobName = keyof typeof JOBS;
