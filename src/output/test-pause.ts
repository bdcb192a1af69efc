/**
 * `TRACES_TEST_PAUSE=<point>`: the run stops at that point, says so on stderr, and waits to
 * be signalled. Tests of interruption use it to signal a run in a known state, instead of
 * guessing with a delay. Unset, it costs one comparison.
 */
export function pauseLine(point: string): string {
  return `traces: test pause at ${point} (pid ${process.pid})`;
}

/**
 * Waits, with the event loop running (so SIGINT and SIGTERM are handled), when asked to pause
 * here; SIGUSR2 resumes the run, after the test has changed something under it.
 */
export async function pauseForTest(point: string): Promise<void> {
  if (process.env.TRACES_TEST_PAUSE !== point) return;
  await new Promise<void>((resolve) => {
    // The timer keeps the process alive until the test's signal arrives; a minute bounds a forgotten run.
    const timer = setTimeout(() => process.exit(3), 60_000);
    process.once('SIGUSR2', () => {
      clearTimeout(timer);
      resolve();
    });
    // Said once the handler is there: a test that signals as soon as it reads this line,
    // while this thread was not scheduled, killed the run (SIGUSR2's default action).
    process.stderr.write(`${pauseLine(point)}\n`);
  });
}

/** Blocks the thread (no signal handler can run: only SIGKILL ends it) when asked to pause here. */
export function pauseForTestSync(point: string): void {
  if (process.env.TRACES_TEST_PAUSE !== point) return;
  process.stderr.write(`${pauseLine(point)}\n`);
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60_000);
}
