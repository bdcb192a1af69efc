/**
 * Where the time of a short `stats` goes besides reading: the cost of warming up. Fresh
 * worker threads each run the `stats` job over the same twenty-four 4 MB shares of the tree, one
 * thread alone, then two at once, and the time of each share is kept. A thread is warm once its
 * shares take their steady time (the median of its last eight); what it spent beyond that on
 * the shares before is its warm-up. Two threads warming up together take longer than one
 * alone: V8's compiler and collector threads then have no idle core.
 */
import { Worker } from 'node:worker_threads';
// The V8 settings traces runs with (bin/traces.js imports this first): they hold for the threads started here.
import '../src/v8-tuning.js';
import { discover, type TraceFile } from '../src/sources/discover.js';
import { fileSizes, planShares, type WorkShare } from '../src/parallel/units.js';

const SHARE = 4 << 20;
export const SHARES_PER_THREAD = 24;
/** The shares a thread's steady time is the median of: its last third, well past its warm-up (12 shares of 4 MB were too few: the stats job was still warming up). */
export const STEADY_SHARES = 8;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/**
 * `stats`: the whole job. On bytes already read: `check`, the strict JSON check of each line
 * alone; `parse`, `JSON.parse` of each line; `memchr`, the native search for every quote.
 */
export type WarmupJob = 'stats' | 'check' | 'parse' | 'memchr';

/** The tree's files and the whole 4 MB shares every thread runs, or null when the tree holds too few. */
async function warmupShares(tree: string): Promise<{ files: TraceFile[]; shares: WorkShare[] } | null> {
  const found = await discover([tree]);
  const shares = planShares(fileSizes(found.files), 1, 1, SHARE).filter((s) => s.bytes >= SHARE - 1024);
  return shares.length < SHARES_PER_THREAD ? null : { files: found.files, shares: shares.slice(0, SHARES_PER_THREAD) };
}

async function runThreads({ files, shares }: { files: TraceFile[]; shares: WorkShare[] }, threads: number, job: WarmupJob): Promise<number[][]> {
  const url = new URL('./warmup-worker.js', import.meta.url);
  return Promise.all(
    Array.from({ length: threads }, (_, k) =>
      new Promise<number[]>((resolve, reject) => {
        // Every thread the same shares: records differ in cost from one part of a tree to another.
        const worker = new Worker(url, { workerData: { files, shares, job } });
        worker.once('message', (times: number[]) => {
          resolve(times);
          void worker.terminate();
        });
        worker.once('error', reject);
      }),
    ),
  );
}

export interface WarmupRow {
  threads: number;
  /** Steady time of one 4 MB share, ms (median over threads and runs). */
  steadyMs: number;
  /** Time spent beyond the steady time on the shares before, ms per thread. */
  warmupMs: number;
  /** Steady MB/s of all threads together. */
  steadyMbps: number;
}

/** Null when the tree is smaller than the shares the threads run (SHARES_PER_THREAD of 4 MB). */
export async function measureWarmup(tree: string, runs: number, job: WarmupJob = 'stats'): Promise<WarmupRow[] | null> {
  const work = await warmupShares(tree);
  if (work === null) return null;
  const rows: WarmupRow[] = [];
  for (const threads of [1, 2]) {
    const steady: number[] = [];
    const warmup: number[] = [];
    for (let run = 0; run < runs; run++) {
      for (const times of await runThreads(work, threads, job)) {
        const settled = median(times.slice(-STEADY_SHARES));
        steady.push(settled);
        warmup.push(times.reduce((sum, t) => sum + Math.max(0, t - settled), 0));
      }
    }
    const steadyMs = median(steady);
    rows.push({ threads, steadyMs, warmupMs: median(warmup), steadyMbps: (threads * 4) / (steadyMs / 1000) });
  }
  return rows;
}
