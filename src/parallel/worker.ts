/** A worker thread: runs the named job on each message and posts the result back. */
import { parentPort } from 'node:worker_threads';
import { runJob, type JobName } from './jobs.js';

parentPort!.on('message', async (message: { id: number; job: JobName; payload: unknown }) => {
  try {
    const result = await runJob(message.job, message.payload as never);
    parentPort!.postMessage({ id: message.id, result });
  } catch (error) {
    const e = error instanceof Error ? error : new Error(String(error));
    parentPort!.postMessage({ id: message.id, error: { message: e.message, stack: e.stack } });
  }
});
