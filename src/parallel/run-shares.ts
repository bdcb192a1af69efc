/**
 * Runs a job over the trace files: in worker threads when the files are big enough to
 * repay starting them, else in this thread. Either way results come in file order.
 */
import { defaultRoot, type Discovery } from '../sources/discover.js';
import { Progress } from '../progress.js';
import { runJob, youngGenerationMb, type Job, type JobPayload, type JobResult } from './job.js';
import { defaultWorkerCount, inOrder, WorkerPool } from './pool.js';
import { namesAtLeast } from './size-probe.js';
import { fileSizes, planShares, type WorkShare } from './units.js';

/** Below this, starting worker threads costs more than it saves. */
const PARALLEL_MIN_BYTES = 32 << 20;

/**
 * One pool for the whole process: a command that reads the tree twice (export's plan, then
 * its projection) pays for starting the workers and compiling their modules once.
 */
let sharedPool: WorkerPool | null = null;

/** What the command will hand the workers (see `startWorkersEarly`), whenever its pool is made. */
let commandJobs: readonly Job[] = [];

/** The run's pool of `size` workers; `jobs`, and the command's, set their heap when the pool is made here. */
function poolOf(size: number, jobs: readonly Job[]): WorkerPool {
  if (sharedPool !== null && (sharedPool.size !== size || sharedPool.broken)) {
    void sharedPool.close();
    sharedPool = null;
  }
  sharedPool ??= new WorkerPool(size, youngGenerationMb([...commandJobs, ...jobs]));
  return sharedPool;
}

/**
 * Starts the worker threads for a run that will read `paths` (or the default root), before the
 * command has loaded and found its files: a worker takes about as long to boot and load its
 * job as this thread takes to get there, so both begin together. Measured on the 200 MB bench
 * tree, the second thread otherwise began its first share 120 to 450 ms after this one.
 * Only for trees big enough for threads: a worker still booting delays the exit of a short run
 * by about 50 ms. `jobs` are what the command hands the workers, in order: the first is
 * loaded now, and all of them choose the workers' heap (see `youngGenerationMb`).
 */
export function startWorkersEarly(jobs: readonly Job[], paths: readonly string[]): void {
  commandJobs = jobs;
  const threads = defaultWorkerCount();
  if (threads <= 1) return;
  // Forced shares (tests, tuning) use workers however small the tree: start them here too.
  const forced = Number(process.env.TRACES_SHARE_BYTES) > 0;
  if (!forced && !namesAtLeast(paths.length > 0 ? paths : [defaultRoot()], PARALLEL_MIN_BYTES)) return;
  poolOf(threads - 1, jobs).preload(jobs[0]);
}

/**
 * Has the running workers prepare a job a run will hand them next, while they would wait:
 * export's workers load the tokenizer while this thread finishes the curation plan, where the
 * first projection share on a worker took seconds longer than the rest.
 */
export function preloadJob(job: Job, warm?: unknown): void {
  sharedPool?.preload(job, warm);
}

/**
 * Ends the worker threads now, not at exit: their heaps go back to the system, for a command
 * whose last step (index's Parquet writing) needs memory and no workers.
 */
export async function releaseWorkers(): Promise<void> {
  const pool = sharedPool;
  sharedPool = null;
  await pool?.close();
}

/** How many worker threads this run has running and able to take a job (0: none, work stays in this thread). */
export function workerCount(): number {
  return sharedPool === null || sharedPool.broken ? 0 : sharedPool.size;
}

/** Runs one job on a worker thread of this run; null when it has none (see `workerCount`). */
export function runOnWorker<J extends Job>(job: J, payload: JobPayload<J>): Promise<JobResult<J>> | null {
  if (sharedPool === null || sharedPool.broken) return null;
  return sharedPool.run<JobResult<J>>(job, payload);
}

function discardPool(): void {
  void sharedPool?.close();
  sharedPool = null;
}

/**
 * A run started now and read later: its lanes take their first payloads at once, so the workers
 * work while this thread finishes something else (export's last drops). A failure meanwhile is
 * thrown where the results are read. To stop it before it is read, abort its `signal` (see
 * `runOverFiles`): `return` would wait for the result its first `next` awaits.
 */
export function startedNow<T>(results: AsyncGenerator<T>): AsyncGenerator<T> {
  let first: Promise<IteratorResult<T>> | null = results.next();
  first.catch(() => undefined);
  const started: AsyncGenerator<T> = {
    next: () => {
      const head = first;
      first = null;
      return head ?? results.next();
    },
    return: (value) => results.return(value),
    throw: (error) => results.throw(error),
    [Symbol.asyncIterator]: () => started,
  };
  return started;
}

/** At most this many shares, whatever TRACES_SHARE_BYTES asks: each is a payload and a result in memory. */
const MAX_FORCED_SHARES = 10_000;
const MIN_FORCED_SHARE_BYTES = 1024;

/**
 * The share size TRACES_SHARE_BYTES (tests, tuning) asks for, for a tree of `total` bytes, or
 * null when unset: shares of that size, and workers however small the tree. It is raised to
 * 1 KB and to a 10,000th of the tree: 1-byte shares of the 200 MB bench tree took 4.6 GB and
 * 41 s before the engine ran out of memory.
 */
function shareBytesAsked(total: number): number | null {
  const asked = Number(process.env.TRACES_SHARE_BYTES);
  return asked > 0 ? Math.max(asked, MIN_FORCED_SHARE_BYTES, Math.ceil(total / MAX_FORCED_SHARES)) : null;
}

export async function* runOverFiles<J extends Job>(
  job: J,
  discovery: Discovery,
  payloadFor: (share: WorkShare) => JobPayload<J>,
  progressOf: (result: JobResult<J>) => { records: number; bytes: number },
  options: {
    /**
     * The shares, when not cut by input bytes (`planShares`): given the file sizes, the threads,
     * and the share size in bytes TRACES_SHARE_BYTES asks for (null when unset).
     */
    planShares?: (sizes: readonly number[], threads: number, forcedShareBytes: number | null) => WorkShare[];
    /** No progress line: the terminal belongs to someone else (the browser). */
    quiet?: boolean;
    /** What the progress line says the run is doing (default `reading`). */
    label?: string;
    /** Stops the run: no share is started after, and the result awaited is rejected. */
    signal?: AbortSignal;
  } = {},
): AsyncGenerator<JobResult<J>> {
  const sizes = fileSizes(discovery.files);
  const total = sizes.reduce((a, b) => a + b, 0);
  const threads = defaultWorkerCount();
  const progress = new Progress(discovery.files.length, options.quiet ? false : undefined, { label: options.label, totalBytes: total });
  const forcedShareBytes = shareBytesAsked(total);
  const parallel = threads > 1 && (forcedShareBytes !== null || total >= PARALLEL_MIN_BYTES);
  // Shares bound what one result holds, in this thread too.
  const shares = options.planShares?.(sizes, Math.max(1, threads), forcedShareBytes) ?? planShares(sizes, Math.max(1, threads), undefined, forcedShareBytes ?? undefined);
  // This thread works too (it would only wait), so one worker fewer than threads.
  const pool = parallel ? poolOf(threads - 1, [job]) : null;
  // Started early for a tree that turned out small: not needed.
  if (!parallel && sharedPool !== null) discardPool();
  let failed = true;
  try {
    const results: AsyncIterable<JobResult<J>> =
      pool !== null
        ? pool.map<JobResult<J>, WorkShare>(job, shares, payloadFor, (payload) => runJob(job, payload as JobPayload<J>) as Promise<JobResult<J>>, options.signal)
        : inOrder(shares, [], (share) => runJob(job, payloadFor(share as WorkShare)) as Promise<JobResult<J>>, options.signal);
    let shareIndex = 0;
    for await (const result of results) {
      const share = shares[shareIndex++];
      const last = share.ranges[share.ranges.length - 1];
      progress.files = last.end === Infinity ? last.fileIndex + 1 : last.fileIndex;
      // The share's input bytes, whatever the job reports: the rate and ETA are of reading.
      progress.advance({ records: progressOf(result).records, bytes: share.bytes });
      yield result;
    }
    failed = false;
  } finally {
    progress.done();
    // A run that stopped early may leave jobs running in the workers: their results must not reach the next run.
    if (pool !== null && failed) discardPool();
  }
}
