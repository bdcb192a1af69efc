/**
 * `npm test`'s runner: node's test runner over dist/test/ (or the files named), with
 *
 * - a temp folder of the run's own (TMPDIR), which must be empty when the run ends: a test
 *   that leaves anything in the temp folder fails the run, naming what it left (the folder
 *   is removed either way, so no run leaves it behind);
 * - as many test files at once as keep the cores busy: most files wait on the CLI processes
 *   they start, so one file per core (node's default leaves one core for itself: a single
 *   file at a time on two cores) leaves the cores idle much of the time;
 * - the longest files first, so the run does not end waiting on one long file started last;
 * - the short reporter (tools/test-reporter.mjs), which prints a progress line at least
 *   every 20 seconds off a terminal.
 *
 *   node tools/run-tests.mjs [test files…]
 *
 * TRACES_TEST_CONCURRENCY overrides how many files run at once. The exit code is node's, or
 * 1 when the temp folder was left with something in it.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * The files that take longest (measured: a single process each, most of them one CLI run
 * after another), started first; the others follow in name order. A file missing here only
 * starts later.
 */
const LONGEST = ['wrong-types', 'genuine', 'fs-safety', 'index-sql', 'browse-app', 'curation', 'export', 'quality', 'adversarial-fuzz', 'export-privacy', 'parallel', 'damaged-lines', 'browse-runs', 'help', 'machine-independence', 'model-templates', 'quality-filters', 'giant-lines', 'docs-commands'];

function suiteFiles() {
  const dir = path.join('dist', 'test');
  const names = readdirSync(path.join(repo, dir)).filter((name) => name.endsWith('.test.js')).sort();
  const rank = (name) => {
    const k = LONGEST.indexOf(name.replace(/\.test\.js$/, ''));
    return k === -1 ? LONGEST.length : k;
  };
  return names.sort((a, b) => rank(a) - rank(b)).map((name) => path.join(dir, name));
}

const named = process.argv.slice(2);
const files = named.length > 0 ? named : suiteFiles();
const concurrency = Number(process.env.TRACES_TEST_CONCURRENCY) > 0 ? Math.floor(Number(process.env.TRACES_TEST_CONCURRENCY)) : availableParallelism() + 2;
const temp = realpathSync(mkdtempSync(path.join(tmpdir(), 'traces-suite-')));
// As open as /tmp (mkdtemp makes it 0700): tests that run the CLI as another user (fs-safety,
// as root, runs it as nobody) must reach the folders they make inside.
chmodSync(temp, 0o1777);

const child = spawn(
  process.execPath,
  ['--test', `--test-concurrency=${concurrency}`, `--test-reporter=${path.join(repo, 'tools', 'test-reporter.mjs')}`, ...files],
  { cwd: repo, stdio: 'inherit', env: { ...process.env, TMPDIR: temp, TMP: temp, TEMP: temp } },
);

// Ctrl-C reaches the runner too (same process group); wait for it, then clean up.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));

child.on('exit', (code, signal) => {
  let left = [];
  try {
    left = readdirSync(temp);
  } catch {
    // Gone already.
  }
  rmSync(temp, { recursive: true, force: true });
  if (left.length > 0) {
    process.stdout.write(`\n✖ the tests left ${left.length} entr${left.length === 1 ? 'y' : 'ies'} in the temp folder (removed now): ${left.sort().join(', ')}\n`);
    process.exitCode = 1;
  }
  if (signal !== null || code !== 0) process.exitCode = code || 1;
});
