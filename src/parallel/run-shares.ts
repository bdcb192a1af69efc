/**
 * Runs a job over the trace files: in worker threads when the files are big enough to
 * repay starting them, else in this thread. Either way results come in file order.
 */
import type { Discovery } from '../sources/discover.js';
import { Progress } from '../progress.js';
import { JOBS, type JobName } from './jobs.js';
import { defaultWorkerCount, WorkerPool } from './pool.js';
import { fileSizes, planShares, type WorkShare } from './units.js';

/** Below this, starting worker threads costs more than it saves. */
const PARALLEL_MIN_BYTES = 32 << 20;

type JobResult<J extends JobName> = Awaited<ReturnType<(typeof JOBS)[J]>>;

export async function* runOverFiles<J extends JobName>(
  job: J,
  discovery: Discovery,
  payloadFor: (share: WorkShare) => Parameters<(typeof JOBS)[J]>[0],
  progressOf: (result: JobResult<J>) => { records: number; bytes: number },
): AsyncGenerator<JobResult<J>> {
  const sizes = fileSizes(discovery.files);
  const total = sizes.reduce((a, b) => a + b, 0);
  const workers = defaultWorkerCount();
  const progress = new Progress(discovery.files.length);
  const parallel = workers > 1 && total >= PARALLEL_MIN_BYTES;
  // Shares bound what one result holds, in this thread too.
  const shares = planShares(sizes, Math.max(1, workers));
  const pool = parallel ? new WorkerPool(workers) : null;
  try {
    const results: AsyncIterable<JobResult<J>> =
      pool !== null
        ? pool.map<JobResult<J>>(job, shares.map(payloadFor))
        : (async function* () {
            for (const share of shares) yield (await JOBS[job](payloadFor(share) as never)) as JobResult<J>;
          })();
    for await (const result of results) {
      const done = progressOf(result);
      progress.records += done.records;
      progress.bytes += done.bytes;
      progress.tick();
      yield result;
    }
  } finally {
    progress.done();
    await pool?.close();
  }
}
