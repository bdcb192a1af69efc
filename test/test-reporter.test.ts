/**
 * Issue 15, item 13: `npm test` prints a short report: nothing per passing test when piped,
 * every failure in full, node's closing counts and a last `N passed, N failed` line; the
 * exit code stays node's.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { FIXTURES, REPO, tempDir } from './helpers.js';

const REPORTER = path.join(REPO, 'tools', 'test-reporter.mjs');

function runTests(files: string[], extraEnv: NodeJS.ProcessEnv = {}, runner: string[] = ['--test', `--test-reporter=${REPORTER}`]): { status: number; stdout: string } {
  // A test runs inside node's runner, which marks its children: a nested run must not inherit that.
  const { NODE_TEST_CONTEXT: _, ...env } = process.env;
  const result = spawnSync(process.execPath, [...runner, ...files.map((f) => path.join(FIXTURES, 'reporter', f))], {
    cwd: REPO,
    env: { ...env, ...extraEnv },
    encoding: 'utf8',
  });
  return { status: result.status ?? -1, stdout: result.stdout };
}

describe('the short test reporter', () => {
  it('a passing run: a few lines, skips named, node counts and "N passed, 0 failed" last; exit 0', () => {
    const { status, stdout } = runTests(['passing.test.mjs']);
    assert.equal(status, 0, stdout);
    const lines = stdout.trim().split('\n');
    assert.ok(lines.length <= 14, stdout);
    assert.match(stdout, /skipped skipped for a reason \(.*passing\.test\.mjs:\d+\): needs a tool this machine lacks/);
    for (const [label, n] of [['tests', 31], ['pass', 30], ['fail', 0], ['skipped', 1]] as const) assert.ok(lines.includes(`# ${label} ${n}`), `# ${label} ${n} in\n${stdout}`);
    assert.equal(lines.at(-1), '30 passed, 0 failed');
  });

  it('a failing run: the failure in full with its file and line and what the file printed; exit 1', () => {
    const { status, stdout } = runTests(['passing.test.mjs', 'failing.test.mjs']);
    assert.equal(status, 1, stdout);
    const source = readFileSync(path.join(FIXTURES, 'reporter', 'failing.test.mjs'), 'utf8').split('\n');
    const line = source.findIndex((l) => l.includes("it('compares two objects'")) + 1;
    assert.match(stdout, new RegExp(`✖ compares two objects\\n  at test/fixtures/reporter/failing\\.test\\.mjs:${line}\\n`));
    assert.match(stdout, /Expected values to be strictly deep-equal/);
    assert.match(stdout, /\+ {3}kept: 15/);
    assert.match(stdout, /- {3}kept: 16/);
    assert.match(stdout, /what the failing file printed/);
    assert.doesNotMatch(stdout, /a suite with one failure\n/, 'the suite is not reported as a second failure');
    assert.ok(stdout.split('\n').includes('# fail 1'));
    assert.equal(stdout.trim().split('\n').at(-1), '31 passed, 1 failed');
  });

  it('a failing todo test: named in one line with its reason, not counted as failed; exit 0', () => {
    const { status, stdout } = runTests(['todo.test.mjs']);
    assert.equal(status, 0, stdout);
    assert.match(stdout, /todo waits for another change \(.*todo\.test\.mjs:\d+\) still fails: issue 99: lands with the other change/);
    assert.doesNotMatch(stdout, /✖/);
    assert.ok(stdout.split('\n').includes('# todo 1'), stdout);
    assert.equal(stdout.trim().split('\n').at(-1), '1 passed, 0 failed');
  });
  it('off a terminal, a long quiet test still gets progress lines: time, counts, and the test running', { timeout: 120_000 }, async () => {
    // The quiet test ends when this one has seen a progress line about it: it waits for that, not for time.
    const release = path.join(tempDir('traces-reporter-'), 'release');
    const { NODE_TEST_CONTEXT: _, ...env } = process.env;
    const child = spawn(process.execPath, ['--test', `--test-reporter=${REPORTER}`, path.join(FIXTURES, 'reporter', 'slow.test.mjs')], {
      cwd: REPO,
      env: { ...env, TRACES_TEST_PROGRESS_MS: '200', SLOW_TEST_RELEASE: release },
    });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.includes('running test/fixtures/reporter/slow.test.mjs › a long quiet test') && !existsSync(release)) writeFileSync(release, '');
    });
    const status = await new Promise<number>((resolve) => child.on('exit', (code) => resolve(code ?? -1)));
    assert.equal(status, 0, stdout);
    assert.match(stdout, /^… \d+s: 0 passed, 0 failed; running test\/fixtures\/reporter\/slow\.test\.mjs › a long quiet test$/m, stdout);
    assert.equal(stdout.trim().split('\n').at(-1), '1 passed, 0 failed');
  });
});

describe('npm test (tools/run-tests.mjs)', () => {
  it('fails a run whose tests leave anything in the temp folder, names it, and leaves no temp folder itself', () => {
    // The run's own temp folder goes inside this one, which nothing else on the machine uses.
    const outer = tempDir('traces-reporter-');
    const { status, stdout } = runTests(['passing.test.mjs', 'leaky.test.mjs'], { TMPDIR: outer }, [path.join(REPO, 'tools', 'run-tests.mjs')]);
    assert.equal(status, 1, stdout);
    assert.match(stdout, /31 passed, 0 failed/);
    assert.match(stdout, /✖ the tests left 1 entry in the temp folder \(removed now\): traces-forgotten-\w+/);
    assert.deepEqual(readdirSync(outer), [], 'the run removes its own temp folder');
  });

  it('passes a run that leaves the temp folder as it found it', () => {
    const outer = tempDir('traces-reporter-');
    const { status, stdout } = runTests(['passing.test.mjs'], { TMPDIR: outer }, [path.join(REPO, 'tools', 'run-tests.mjs')]);
    assert.equal(status, 0, stdout);
    assert.doesNotMatch(stdout, /temp folder/);
    assert.deepEqual(readdirSync(outer), []);
  });
});
