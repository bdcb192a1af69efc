/**
 * Reads are synchronous and a share's loop never waits, so a long run would never give its
 * thread's event loop a turn. On this (the main) thread that matters twice over: Ctrl-C and
 * SIGTERM would wait for the end of the run, and this thread runs shares too (parallel/pool.ts,
 * `inOrder`), so while one of them ran, a worker's finished result waited unread and the
 * worker got no next share (on the 200 MB bench tree the export's worker sat idle 2.6 s of
 * 8.5 s). Long loops therefore let the event loop run every few milliseconds here; workers
 * have nothing waiting on theirs, and turn rarely.
 */
import { isMainThread } from 'node:worker_threads';

const TURN_MS = isMainThread ? 4 : 20;

let lastTurn = performance.now();

/** Whether a loop should `letEventLoopRun` now; cheap enough to ask per record. */
export function turnDue(): boolean {
  return performance.now() - lastTurn >= TURN_MS;
}

/** Gives the event loop a turn (pending messages, signals, other lanes) when one is due. */
export async function letEventLoopRun(): Promise<void> {
  if (!turnDue()) return;
  await new Promise((resolve) => setImmediate(resolve));
  lastTurn = performance.now();
}
