/**
 * Output files: buffered writes give exactly the bytes written, and a file handed to another
 * thread (`OutputFile.reopen`, the tree copy's line copies) is written there in place, never
 * through a link and never created anew.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { copyClaimed, type LineCopyTask } from '../src/output/line-copy.js';
import { OutputFile } from '../src/output/output-dir.js';
import { WorkerPool } from '../src/parallel/pool.js';
import { tempDir } from './helpers.js';

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
    for (const piece of pieces) out.writeLine(piece);
    out.close();
    const expected = Buffer.concat(pieces.flatMap((p) => [typeof p === 'string' ? Buffer.from(p, 'utf8') : p, Buffer.from('\n')]));
    assert.ok(readFileSync(path.join(dir, 'temp')).equals(expected));
    assert.equal(out.bytes, expected.length);
  });

  it('keep the bytes of two files apart while they take turns', () => {
    const dir = tempDir();
    const a = new OutputFile(path.join(dir, 'a'), path.join(dir, 'a.tmp'));
    const b = new OutputFile(path.join(dir, 'b'), path.join(dir, 'b.tmp'));
    for (let i = 0; i < 1000; i++) (i % 3 === 0 ? b : a).writeLine(`line ${i} ${'z'.repeat(i)}`);
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
      const copied = pool.run('copy', { tasks, claims });
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
    const missing = path.join(dir, 'gone.jsonl');
    const tasks: LineCopyTask[] = [{ tempPath: new OutputFile(path.join(dir, 'out'), path.join(dir, 'out.tmp')).tempPath, sources: [{ path: missing, offsets: Float64Array.from([0]) }] }];
    const pool = new WorkerPool(1);
    try {
      await assert.rejects(pool.run('copy', { tasks, claims: new Int32Array(new SharedArrayBuffer(4)) }), { code: 'ENOENT', path: missing });
    } finally {
      await pool.close();
    }
  });
});
