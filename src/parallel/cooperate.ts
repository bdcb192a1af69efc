/**
 * This thread runs shares too (pool.ts, `inOrder`), and while one of its shares runs nothing
 * else in the thread does: a worker's finished result waits unread and the worker gets no
 * next share. On the 200 MB bench tree the export's worker sat idle for 2.6 of its 8.5 s
 * that way. A long share here therefore lets the event loop turn every few milliseconds.
 * Worker threads have nothing else to do, so they never pause.
 */
import { isMainThread } from 'node:worker_threads';

/** Longest stretch this thread works on a share without letting a worker be served. */
const SLICE_MS = 4;

let sliceStart = performance.now();

/** Whether a share's loop on this thread should `pause()` now; cheap enough to ask per record. */
export function pauseDue(): boolean {
  return isMainThread && performance.now() - sliceStart >= SLICE_MS;
}

/** Lets pending messages and the other lanes run, then starts a new slice. */
export function pause(): Promise<void> {
  return new Promise((resolve) =>
    setImmediate(() => {
      sliceStart = performance.now();
      resolve();
    }),
  );
}
