/**
 * A worker thread: runs the job each message names on its payload and posts the result back. Jobs run one
 * after another, in the order they came (the pool queues the next one ahead of time).
 */
import { parentPort } from 'node:worker_threads';
import { UserError } from '../errors.js';
import { loadJob, runJob, type Job } from './job.js';

interface JobMessage {
  id: number;
  job: Job;
  payload: unknown;
}

/** Load a job's modules now, and prepare it with `warm` when given; no answer. */
interface PreloadMessage {
  preload: Job;
  warm?: unknown;
}

async function handle(message: JobMessage): Promise<void> {
  try {
    const result = await runJob(message.job, message.payload);
    parentPort!.postMessage({ id: message.id, result });
  } catch (error) {
    const e = (error instanceof Error ? error : new Error(String(error))) as NodeJS.ErrnoException;
    // The file-system fields travel too, and whether it is a user's error: the main thread reports either as one line, not a stack.
    const { code, path, syscall, errno } = e;
    const userExitCode = error instanceof UserError ? error.exitCode : undefined;
    parentPort!.postMessage({ id: message.id, error: { message: e.message, stack: e.stack, code, path, syscall, errno, userExitCode } });
  }
}

let queue = Promise.resolve();
parentPort!.on('message', (message: JobMessage | PreloadMessage) => {
  queue = queue.then(() => ('preload' in message ? loadJob(message.preload, message.warm).catch(() => undefined) : handle(message)));
});
