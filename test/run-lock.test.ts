/**
 * Issue 28, defect 2: whether a run still writes into --out is told by a lock the kernel
 * releases when the process dies, not by its pid. traces as a container's entrypoint is pid 1
 * every time: a staging folder left by a SIGKILLed pid 1, or one named with this very
 * process's pid, must not lock --out; a live run must, whatever its folder is named.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { OutputDir } from '../src/output/output-dir.js';
import { REPO, SAMPLES, runCli, tempDir } from './helpers.js';

const BIN = path.join(REPO, 'bin', 'traces.js');

/** A run paused once it has made its staging folder (`TRACES_TEST_PAUSE=reading`). */
function pausedRun(args: string[]): { pid: number; paused: Promise<void>; exited: Promise<unknown>; kill: (signal: NodeJS.Signals) => void } {
  const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, TRACES_TEST_PAUSE: 'reading' }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  const paused = new Promise<void>((resolve, reject) => {
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.includes('test pause at reading')) resolve();
    });
    child.on('exit', () => reject(new Error(`the run ended before pausing: ${stderr}`)));
  });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  return { pid: child.pid!, paused, exited, kill: (signal) => child.kill(signal) };
}

const stagingOf = (out: string): string[] => readdirSync(out).filter((f) => f.startsWith('.traces-partial-'));

/** The staging folder a SIGKILLed run left in a new --out, renamed as if that run had had `pid`. */
async function killedRunLeaving(out: string, pid: number): Promise<string> {
  const run = pausedRun(['dedupe', SAMPLES, '--out', out]);
  await run.paused;
  run.kill('SIGKILL');
  await run.exited;
  const [left] = stagingOf(out);
  assert.ok(left !== undefined, 'a hard kill leaves the staging folder');
  const renamed = `.traces-partial-${pid}`;
  renameSync(path.join(out, left), path.join(out, renamed));
  return renamed;
}

describe('the staging folder lock', () => {
  it('a staging folder left by a SIGKILLed pid 1 no longer locks --out: the next run removes it', async () => {
    const out = path.join(tempDir(), 'out');
    await killedRunLeaving(out, 1);
    const rerun = runCli(['dedupe', SAMPLES, '--out', out]);
    assert.equal(rerun.status, 0, rerun.stderr);
    assert.match(rerun.stderr, /removed the temporary files of an interrupted run \(pid 1\)/);
    assert.deepEqual(stagingOf(out), []);
  });

  it("a staging folder left by a SIGKILLed run with this process's own pid no longer locks --out", async () => {
    const out = path.join(tempDir(), 'out');
    const left = await killedRunLeaving(out, process.pid);
    const output = OutputDir.open(out, { force: false, roots: [] });
    try {
      assert.equal(existsSync(path.join(out, left)), true, "this run's own staging folder, made anew");
      assert.deepEqual(readdirSync(path.join(out, left)).filter((f) => !f.startsWith('.traces-partial-')), [], 'and empty: the dead run\'s files are gone');
    } finally {
      output.abort();
    }
    assert.deepEqual(stagingOf(out), []);
  });

  it('a live run refuses a second, even with --force and whatever its staging folder is named; killed, it no longer does', async () => {
    const out = path.join(tempDir(), 'out');
    const run = pausedRun(['dedupe', SAMPLES, '--out', out]);
    try {
      await run.paused;
      for (const force of [[], ['--force']]) {
        const second = runCli(['dedupe', SAMPLES, '--out', out, ...force]);
        assert.equal(second.status, 2, second.stderr);
        assert.match(second.stderr, new RegExp(`another traces run \\(pid ${run.pid}\\) is writing there`));
      }
      // Named as pid 1's (alive on any host) or this process's: the lock, not the name, tells.
      for (const pid of [1, process.pid]) {
        const [current] = stagingOf(out);
        renameSync(path.join(out, current!), path.join(out, `.traces-partial-${pid}`));
        const second = runCli(['dedupe', SAMPLES, '--out', out, '--force']);
        assert.equal(second.status, 2, second.stderr);
        assert.match(second.stderr, /is writing there/);
      }
      run.kill('SIGKILL');
      await run.exited;
      const after = runCli(['dedupe', SAMPLES, '--out', out]);
      assert.equal(after.status, 0, after.stderr);
      assert.deepEqual(stagingOf(out), []);
    } finally {
      run.kill('SIGKILL');
    }
  });

  it('a staging folder of an earlier traces (no lock) is judged by its pid: refused while that pid lives, removed by --force', () => {
    const out = path.join(tempDir(), 'out');
    mkdirSync(path.join(out, '.traces-partial-1', 'my_program'), { recursive: true });
    writeFileSync(path.join(out, '.traces-partial-1', 'my_program', 'part.jsonl'), '{}\n');
    const plain = runCli(['dedupe', SAMPLES, '--out', out]);
    assert.equal(plain.status, 2, plain.stderr);
    assert.match(plain.stderr, /\.traces-partial-1 may belong to a traces run still writing there \(pid 1.*pass --force to remove it/);
    assert.equal(plain.stderr.trim().split('\n').length, 1);
    const forced = runCli(['dedupe', SAMPLES, '--out', out, '--force']);
    assert.equal(forced.status, 0, forced.stderr);
    assert.deepEqual(stagingOf(out), []);
    // One of a pid that is gone needs no --force.
    const gone = path.join(tempDir(), 'gone');
    mkdirSync(path.join(gone, '.traces-partial-4194305'), { recursive: true });
    const rerun = runCli(['dedupe', SAMPLES, '--out', gone]);
    assert.equal(rerun.status, 0, rerun.stderr);
  });
});
