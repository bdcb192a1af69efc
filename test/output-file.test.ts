/**
 * Output files: buffered writes give exactly the bytes written, and a file handed to another
 * thread (`OutputFile.reopen`, the tree copy's line copies) is written there in place, never
 * through a link and never created anew.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { copyClaimed, type LineCopyTask } from '../src/pipeline/line-copy.js';
import { OutputFile } from '../src/output/output-dir.js';
import { WorkerPool } from '../src/parallel/pool.js';
import { generatedTree, GOLDEN, REPO, tempDir } from './helpers.js';
import { JOBS } from '../src/parallel/jobs.js';

const MB = 1 << 20;

/** A trace-shaped file of `count` lines, and the byte offset of each. */
function linesFile(dir: string, count: number, width = 300): { file: string; lines: string[]; offsets: number[] } {
  const lines = Array.from({ length: count }, (_, i) => JSON.stringify({ call_id: `id-${i}`, text: 'é€😀'.repeat(i % 7) + 'x'.repeat(width) }));
  const offsets: number[] = [];
  let at = 0;
  for (const line of lines) {
    offsets.push(at);
    at += Buffer.byteLength(line) + 1;
  }
  const file = path.join(dir, 'calls.jsonl');
  writeFileSync(file, lines.join('\n') + '\n');
  return { file, lines, offsets };
}

describe('buffered writes', () => {
  it('write strings and bytes as given, across the buffer boundary and past its size', () => {
    const dir = tempDir();
    const out = new OutputFile(path.join(dir, 'final'), path.join(dir, 'temp'));
    const pieces: (string | Buffer)[] = [
      'plain ascii',
      'é€😀 multi-byte',
      // A lone surrogate is written as U+FFFD by either path, as Buffer.from writes it.
      'lone \ud800 surrogate',
      'x'.repeat(MB / 3 - 5),
      Buffer.from('bytes in between'),
      'é'.repeat(MB / 3),
      'y'.repeat(2 * MB),
      Buffer.alloc(MB + 7, 0x61),
      '',
      'end',
    ];
    for (const piece of pieces) out.writeLine(Buffer.from(piece));
    out.close();
    const expected = Buffer.concat(pieces.flatMap((p) => [typeof p === 'string' ? Buffer.from(p, 'utf8') : p, Buffer.from('\n')]));
    assert.ok(readFileSync(path.join(dir, 'temp')).equals(expected));
    assert.equal(out.bytes, expected.length);
  });

  it('name the file when a write fails (a full disk: /dev/full)', (t) => {
    if (!existsSync('/dev/full')) return t.skip('no /dev/full here');
    const full = OutputFile.reopen('/dev/full');
    full.writeLine(Buffer.from('a line the disk has no room for'));
    assert.throws(() => full.close(), { code: 'ENOSPC', path: '/dev/full' });
    // Closed all the same: the next file's writes are its own.
    const dir = tempDir();
    const next = new OutputFile(path.join(dir, 'next'), path.join(dir, 'next.tmp'));
    next.writeLine(Buffer.from('fine'));
    next.close();
    assert.equal(readFileSync(next.tempPath, 'utf8'), 'fine\n');
  });

  it('keep the bytes of two files apart while they take turns', () => {
    const dir = tempDir();
    const a = new OutputFile(path.join(dir, 'a'), path.join(dir, 'a.tmp'));
    const b = new OutputFile(path.join(dir, 'b'), path.join(dir, 'b.tmp'));
    for (let i = 0; i < 1000; i++) (i % 3 === 0 ? b : a).writeLine(Buffer.from(`line ${i} ${'z'.repeat(i)}`));
    a.close();
    b.close();
    const expect = (keep: (i: number) => boolean) =>
      Array.from({ length: 1000 }, (_, i) => i)
        .filter(keep)
        .map((i) => `line ${i} ${'z'.repeat(i)}\n`)
        .join('');
    assert.equal(readFileSync(path.join(dir, 'a.tmp'), 'utf8'), expect((i) => i % 3 !== 0));
    assert.equal(readFileSync(path.join(dir, 'b.tmp'), 'utf8'), expect((i) => i % 3 === 0));
  });
});

describe('many files written at once', () => {
  /** Descriptors this process holds (Linux: /proc), or null where that cannot be read. */
  const openDescriptors = (): number | null => (existsSync('/proc/self/fd') ? readdirSync('/proc/self/fd').length : null);

  it('hold a bounded number of descriptors, each file getting all its lines in order', () => {
    const dir = tempDir();
    const before = openDescriptors();
    const files = Array.from({ length: 300 }, (_, i) => new OutputFile(path.join(dir, `f${i}`), path.join(dir, `f${i}.tmp`)));
    let most = 0;
    for (let round = 0; round < 3; round++) {
      files.forEach((file, i) => {
        // Big writes too, which go past the shared buffer straight to the descriptor.
        file.writeLine(Buffer.from(i % 50 === 0 ? 'b'.repeat(1 << 21) : `file ${i} round ${round}`));
        if (before !== null && i % 25 === 0) most = Math.max(most, openDescriptors()! - before);
      });
    }
    for (const file of files) file.close();
    if (before !== null) assert.ok(most <= 64 + 2, `at most 64 files open at once, saw ${most}`);
    files.forEach((file, i) => {
      const line = (round: number) => (i % 50 === 0 ? 'b'.repeat(1 << 21) : `file ${i} round ${round}`);
      assert.equal(readFileSync(file.tempPath, 'utf8'), [0, 1, 2].map((r) => `${line(r)}\n`).join(''), file.tempPath);
    });
  });

  it('never write through a link planted while a file was closed to make room', () => {
    const dir = tempDir();
    const victim = path.join(dir, 'victim');
    writeFileSync(victim, 'keep me\n');
    const first = new OutputFile(path.join(dir, 'first'), path.join(dir, 'first.tmp'));
    first.writeLine(Buffer.from('before'));
    // Enough other files to close `first`'s descriptor.
    const others = Array.from({ length: 70 }, (_, i) => new OutputFile(path.join(dir, `o${i}`), path.join(dir, `o${i}.tmp`)));
    for (const other of others) other.writeLine(Buffer.from('x'));
    unlinkSync(first.tempPath);
    symlinkSync(victim, first.tempPath);
    first.writeLine(Buffer.from('after'));
    assert.throws(() => first.close(), { code: 'ELOOP' });
    for (const other of others) other.close();
    assert.equal(readFileSync(victim, 'utf8'), 'keep me\n');
  });
});

describe('a file reopened for another thread', () => {
  it('is refused when a link took its place, and nothing is written through the link', () => {
    const dir = tempDir();
    const target = path.join(dir, 'victim');
    writeFileSync(target, 'keep me\n');
    const temp = path.join(dir, 'temp');
    symlinkSync(target, temp);
    assert.throws(() => OutputFile.reopen(temp), { code: 'ELOOP' });
    assert.equal(readFileSync(target, 'utf8'), 'keep me\n');
  });

  it('is refused, not created, when the run removed it (an aborted run)', () => {
    const dir = tempDir();
    const out = new OutputFile(path.join(dir, 'final'), path.join(dir, 'temp'));
    out.close();
    unlinkSync(out.tempPath);
    assert.throws(() => OutputFile.reopen(out.tempPath), { code: 'ENOENT' });
    assert.equal(existsSync(out.tempPath), false);
  });
});

describe('line copies shared out by claims', () => {
  it('copy exactly the chosen lines of each task, whoever claims them', async () => {
    const dir = tempDir();
    const { file, lines, offsets } = linesFile(dir, 5000);
    // Every third line, and two files fed from the same source (as two roots with one relative path are).
    const chosen = offsets.filter((_, i) => i % 3 === 0);
    const tasks: LineCopyTask[] = ['one', 'two', 'three'].map((name) => ({
      tempPath: new OutputFile(path.join(dir, name), path.join(dir, `${name}.tmp`)).tempPath,
      sources: name === 'three' ? [{ path: file, offsets: Float64Array.from(chosen) }, { path: file, offsets: Float64Array.from(offsets.slice(0, 2)) }] : [{ path: file, offsets: Float64Array.from(chosen) }],
    }));
    const claims = new Int32Array(new SharedArrayBuffer(4));
    // Another claimant took the first task already: this thread copies the rest.
    claims[0] = 1;
    const totals = await copyClaimed(tasks, claims);
    const kept = lines.filter((_, i) => i % 3 === 0).map((l) => `${l}\n`).join('');
    assert.equal(readFileSync(tasks[0].tempPath, 'utf8'), '');
    assert.equal(readFileSync(tasks[1].tempPath, 'utf8'), kept);
    assert.equal(readFileSync(tasks[2].tempPath, 'utf8'), kept + `${lines[0]}\n${lines[1]}\n`);
    assert.equal(totals.records, 2 * chosen.length + 2);
    assert.equal(totals.files, 3);
    assert.ok(claims[0] >= tasks.length);
  });

  it('a free worker starts its job at once, while this thread goes on without awaiting', async () => {
    const dir = tempDir();
    const { file, lines, offsets } = linesFile(dir, 2000);
    const tasks: LineCopyTask[] = [{ tempPath: new OutputFile(path.join(dir, 'out'), path.join(dir, 'out.tmp')).tempPath, sources: [{ path: file, offsets: Float64Array.from(offsets) }] }];
    const pool = new WorkerPool(1);
    try {
      const claims = new Int32Array(new SharedArrayBuffer(4));
      const copied = pool.run(JOBS.copy, { tasks, claims });
      // This thread stays busy, as curation is while it reports its drops: the worker claims the task meanwhile.
      // The deadline only keeps a broken pool from hanging the suite.
      const pause = new Int32Array(new SharedArrayBuffer(4));
      const deadline = Date.now() + 60_000;
      while (Atomics.load(claims, 0) === 0 && Date.now() < deadline) Atomics.wait(pause, 0, 0, 5);
      assert.ok(Atomics.load(claims, 0) > 0, 'the worker had not started while this thread was busy');
      await copied;
      assert.equal(readFileSync(tasks[0].tempPath, 'utf8'), lines.map((l) => `${l}\n`).join(''));
    } finally {
      await pool.close();
    }
  });

  it("a worker's failed copy comes back as the file-system error it was, naming the file", async () => {
    const dir = tempDir();
    // Its folder is a file: ENOTDIR (a file gone since it was listed is said otherwise, as a user's error).
    writeFileSync(path.join(dir, 'gone'), '');
    const missing = path.join(dir, 'gone', 'gone.jsonl');
    const tasks: LineCopyTask[] = [{ tempPath: new OutputFile(path.join(dir, 'out'), path.join(dir, 'out.tmp')).tempPath, sources: [{ path: missing, offsets: Float64Array.from([0]) }] }];
    const pool = new WorkerPool(1);
    try {
      await assert.rejects(pool.run(JOBS.copy, { tasks, claims: new Int32Array(new SharedArrayBuffer(4)) }), { code: 'ENOTDIR', path: missing });
    } finally {
      await pool.close();
    }
  });
});

describe('the open-file limit', () => {
  /** A tree of `modules` modules, one trace file each, with two distinct ok records (from the golden record). */
  function wideTree(modules: number): string {
    const root = path.join(tempDir(), 'tree');
    const golden = readdirSync(path.join(GOLDEN, 'my_program', 'first_generator'))[0]!;
    const records = readFileSync(path.join(GOLDEN, 'my_program', 'first_generator', golden), 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const record = records.find((r) => r.outputs != null && !('exception' in r))!;
    for (let i = 0; i < modules; i++) {
      const folder = path.join(root, 'wide', `mod${i}`);
      mkdirSync(folder, { recursive: true });
      const lines = [0, 1].map((j) =>
        JSON.stringify({ ...record, module: `mod${i}`, call_id: `00000000-0000-4000-8000-${String(i).padStart(6, '0')}${String(j).padStart(6, '0')}`, inputs_hash: createHash('sha256').update(`${i}-${j}`).digest('hex') }),
      );
      writeFileSync(path.join(folder, `mod${i}_20260101-000000.jsonl`), `${lines.join('\n')}\n`);
    }
    return root;
  }

  /** The CLI with at most `limit` open files (bash's ulimit), one thread or several. */
  function runLimited(limit: number, args: string[], env: NodeJS.ProcessEnv = {}): { status: number | null; stderr: string } {
    const result = spawnSync('bash', ['-c', `ulimit -n ${limit} && exec "$0" "$@"`, process.execPath, path.join(REPO, 'bin', 'traces.js'), ...args], {
      env: { ...process.env, ...env },
      encoding: 'utf8',
    });
    return { status: result.status, stderr: result.stderr };
  }

  it('filter and dedupe write more files than may be open at once', () => {
    const tree = wideTree(300);
    for (const [command, env] of [['filter', { TRACES_WORKERS: '1' }], ['dedupe', { TRACES_WORKERS: '2', TRACES_SHARE_BYTES: String(64 << 10) }]] as const) {
      const out = path.join(tempDir(), 'out');
      const run = runLimited(200, [command, tree, '--out', out], env);
      assert.equal(run.status, 0, run.stderr);
      assert.equal(readdirSync(path.join(out, 'wide')).length, 300);
      assert.equal(readFileSync(path.join(out, 'wide', 'mod7', 'mod7_20260101-000000.jsonl'), 'utf8'), readFileSync(path.join(tree, 'wide', 'mod7', 'mod7_20260101-000000.jsonl'), 'utf8'));
    }
  });

  it('export writes one dataset per module for more modules than files may be open', () => {
    const tree = wideTree(260);
    const out = path.join(tempDir(), 'out');
    const run = runLimited(200, ['export', tree, '--format', 'nemo', '--group-by', 'module', '--out', out]);
    assert.equal(run.status, 0, run.stderr);
    const program = readdirSync(out).find((name) => !name.startsWith('_') && !name.endsWith('.json'));
    assert.ok(program !== undefined, `${readdirSync(out).join(", ")}: ${run.stderr}`);
    assert.equal(readdirSync(path.join(out, program)).length, 260);
  });

  it('under a limit lower than the descriptors it keeps open (ulimit -n 64), output files close sooner instead of failing', () => {
    const tree = wideTree(150);
    // Where each command puts one folder per module: under the program, or (Ask recordings) at the top.
    for (const [args, modulesIn] of [
      [['export', tree, '--format', 'nemo', '--group-by', 'module'], 'my_program'],
      [['export', tree, '--format', 'ask-recording'], '.'],
      [['dedupe', tree], 'wide'],
    ] as const) {
      const out = path.join(tempDir(), 'out');
      const run = runLimited(64, [...args, '--out', out], { TRACES_WORKERS: '1' });
      assert.equal(run.status, 0, `${args.join(' ')}: ${run.stderr}`);
      const folders = readdirSync(path.join(out, modulesIn)).filter((name) => !name.startsWith('_') && !name.endsWith('.json'));
      assert.equal(folders.length, 150, args.join(' '));
    }
  });
});

describe('the file-size limit (ulimit -f)', () => {
  /** The CLI with files of at most `kb` KB (bash's ulimit -f counts 1024-byte blocks). */
  function runSizeLimited(kb: number, args: string[], env: NodeJS.ProcessEnv = {}): { status: number | null; stderr: string } {
    const result = spawnSync('bash', ['-c', `ulimit -f ${kb} && exec "$0" "$@"`, process.execPath, path.join(REPO, 'bin', 'traces.js'), ...args], {
      env: { ...process.env, ...env },
      encoding: 'utf8',
    });
    return { status: result.status, stderr: result.stderr };
  }

  const OURS = /^traces: \/\S+: file too large .*\(EFBIG in write\): raise the file-size limit \(ulimit -f\)/;
  // The Parquet file the engine (DuckDB) writes: the index's rows, in small shares, fit under the limit.
  const ENGINE = /^traces: writing the index: IO Error: Could not write file "\/\S+": File too large: .*raise the file-size limit \(ulimit -f\)/;
  // Output files, the drop spill in the temp folder, the index's rows and its Parquet file each hit it first in one of these.
  const runs: [string, string[], NodeJS.ProcessEnv, RegExp][] = [
    ['dedupe (one thread)', ['dedupe'], { TRACES_WORKERS: '1' }, OURS],
    ['dedupe (workers)', ['dedupe'], { TRACES_WORKERS: '2', TRACES_SHARE_BYTES: String(256 << 10) }, OURS],
    ['filter', ['filter', '--status', 'ok'], {}, OURS],
    ['export', ['export', '--format', 'nemo'], { TRACES_WORKERS: '2', TRACES_SHARE_BYTES: String(256 << 10) }, OURS],
    ['index (its rows)', ['index'], { TRACES_WORKERS: '1' }, OURS],
    ['index (its Parquet file)', ['index'], { TRACES_WORKERS: '2', TRACES_SHARE_BYTES: String(64 << 10) }, ENGINE],
  ];
  for (const [name, command, env, expected] of runs) {
    it(`${name} stops with one line naming the file, and leaves nothing`, () => {
      const tree = generatedTree({ mb: 3, seed: 29 }).tree;
      const out = path.join(tempDir(), command[0] === 'index' ? 'index.parquet' : 'out');
      const run = runSizeLimited(24, [...command, tree, '--out', out], env);
      assert.equal(run.status, 2, run.stderr);
      const lines = run.stderr.split('\n').filter((line) => line !== '' && !line.startsWith('\r'));
      assert.equal(lines.length, 1, run.stderr);
      assert.match(lines[0], expected);
      assert.ok(!existsSync(out), 'nothing was kept');
      assert.deepEqual(readdirSync(path.dirname(out)), [], 'no temporary file was left beside it');
    });
  }
});
