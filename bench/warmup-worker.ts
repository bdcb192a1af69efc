/** A worker of bench/warmup.ts: runs the `stats` job over its shares and times each. */
import { parentPort, workerData } from 'node:worker_threads';
import { runJob } from '../src/parallel/jobs.js';
import type { TraceFile } from '../src/sources/discover.js';
import type { WorkShare } from '../src/parallel/units.js';

const { files, shares } = workerData as { files: TraceFile[]; shares: WorkShare[] };
const times: number[] = [];
for (const share of shares) {
  const started = performance.now();
  await runJob('stats', { files, share, prices: null });
  times.push(performance.now() - started);
}
parentPort!.postMessage(times);
