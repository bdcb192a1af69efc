/**
 * A short report for `node --test`: a dot per passing test file's test on a terminal, every
 * failure in full (name, file:line, the assertion and its stack, and what the file printed),
 * skips and failing todo tests named in one line each, then node's own closing counts (`# tests N`, `# pass N`,
 * `# fail N`, as the default reporters end) and a last line `N passed, N failed`.
 *
 *   node --test --test-reporter=./tools/test-reporter.mjs dist/test/
 *
 * Off a terminal (CI, a pipe) it prints no dots but a progress line at least every
 * TRACES_TEST_PROGRESS_MS (20 s): how long the run has taken, the counts so far, and the test
 * started last, so a slow or stuck suite is never silent for long.
 *
 * The exit code stays node's: 1 when any test failed.
 */
import { relative } from 'node:path';
import { inspect } from 'node:util';

const tty = process.stdout.isTTY === true;
const here = process.cwd();

function where(data) {
  const file = data.file ? relative(here, data.file) : '?';
  return data.line ? `${file}:${data.line}` : file;
}

/** The error worth reading: the assertion inside node's wrapper, with its diff and stack. */
function describeError(error) {
  if (error === undefined || error === null) return '';
  const cause = error.code === 'ERR_TEST_FAILURE' && error.cause !== undefined ? error.cause : error;
  const text = cause instanceof Error ? inspect(cause, { depth: 6, colors: false }) : typeof cause === 'string' ? cause : inspect(cause, { depth: 6 });
  return text
    .split('\n')
    .map((line) => `    ${line}`)
    .join('\n');
}

const PROGRESS_MS = Number(process.env.TRACES_TEST_PROGRESS_MS) > 0 ? Number(process.env.TRACES_TEST_PROGRESS_MS) : 20_000;
const TICK = Symbol('tick');

function elapsed(ms) {
  const seconds = Math.floor(ms / 1000);
  return seconds < 60 ? `${seconds}s` : `${Math.floor(seconds / 60)}m ${String(seconds % 60).padStart(2, '0')}s`;
}

/**
 * The runner's events, with a TICK whenever PROGRESS_MS pass without a progress line: a
 * timer beside the events, so a long quiet test still gets its line.
 */
async function* withTicks(source, enabled) {
  const events = source[Symbol.asyncIterator]();
  let next = events.next();
  let timer;
  const sleep = () => new Promise((resolve) => {
    timer = setTimeout(() => resolve(TICK), PROGRESS_MS);
    timer.unref?.();
  });
  let tick = enabled ? sleep() : new Promise(() => {});
  for (;;) {
    const result = await Promise.race([next, tick]);
    if (result === TICK) {
      tick = sleep();
      yield TICK;
      continue;
    }
    if (result.done) break;
    next = events.next();
    yield result.value;
  }
  clearTimeout(timer);
}

export default async function* shortReporter(source) {
  const started = Date.now();
  /** The test started last, for the progress line: `file › name`. */
  let running = '';
  const failures = [];
  const skips = [];
  /** What each file printed outside its tests: shown for files that failed. */
  const output = new Map();
  const failedFiles = new Set();
  const summary = [];
  let passed = 0;
  let failed = 0;
  let dots = 0;

  for await (const event of withTicks(source, !tty)) {
    if (event === TICK) {
      yield `… ${elapsed(Date.now() - started)}: ${passed} passed, ${failed} failed${running ? `; running ${running}` : ''}\n`;
      continue;
    }
    const { type, data } = event;
    if (type === 'test:dequeue' && data.file) {
      // Dequeued is when a test starts running (test:start comes only once it has ended).
      const file = relative(here, data.file);
      running = data.name === data.file ? file : `${file} › ${data.name}`;
    } else if (type === 'test:pass') {
      if (data.details?.type === 'suite') continue;
      if (data.skip !== undefined && data.skip !== false) {
        skips.push(`skipped ${data.name} (${where(data)})${typeof data.skip === 'string' ? `: ${data.skip}` : ''}`);
        continue;
      }
      if (data.todo !== undefined && data.todo !== false) continue;
      passed++;
      if (tty) {
        dots++;
        yield dots % 80 === 0 ? '.\n' : '.';
      }
    } else if (type === 'test:fail') {
      // A todo test that fails is expected to (node counts it under `# todo`, not `# fail`, and
      // exits 0): named in one line like a skip, never counted as failed.
      if (data.todo !== undefined && data.todo !== false) {
        skips.push(`todo ${data.name} (${where(data)}) still fails${typeof data.todo === 'string' ? `: ${data.todo}` : ''}`);
        continue;
      }
      const error = data.details?.error;
      // A suite whose subtests failed: the subtests are reported themselves.
      if (error?.failureType === 'subtestsFailed') continue;
      failed++;
      if (data.file) failedFiles.add(data.file);
      failures.push(`✖ ${data.name}\n  at ${where(data)}\n${describeError(error)}`);
      if (tty) {
        dots++;
        yield dots % 80 === 0 ? 'x\n' : 'x';
      }
    } else if (type === 'test:stdout' || type === 'test:stderr') {
      if (!data.file) continue;
      const text = output.get(data.file) ?? [];
      if (text.length < 200) text.push(data.message);
      output.set(data.file, text);
    } else if (type === 'test:diagnostic') {
      // The runner's closing counts arrive as diagnostics at nesting 0: `tests 12`, `pass 12`, …
      if (data.nesting === 0 && /^(tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) /.test(data.message)) summary.push(`# ${data.message}`);
    }
  }

  if (tty && dots > 0) yield '\n';
  for (const failure of failures) yield `\n${failure}\n`;
  for (const file of failedFiles) {
    const text = output.get(file);
    if (text !== undefined && text.length > 0) yield `\n--- output of ${relative(here, file)} ---\n${text.join('')}\n`;
  }
  if (skips.length > 0) yield `\n${skips.join('\n')}\n`;
  yield `\n${summary.join('\n')}${summary.length > 0 ? '\n' : ''}${passed} passed, ${failed} failed\n`;
}
