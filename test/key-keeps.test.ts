/**
 * Which record a key keeps (issue 52): a program that asks again after a refusal records the
 * refusal, then the good answer, under one key. The good answer is kept whatever --keep says,
 * on one machine and through `traces index` + `traces keep-list` alike; the refusal is its
 * `duplicate`, and the summary and the hf card say so.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { runCli, synalinksLine, tempDir } from './helpers.js';
import { Engine, sqlString } from '../src/engine/duckdb.js';

const REFUSAL = 'I’m sorry, but I can’t help with that request.';
const ANSWER = 'Turn the dial to 40 degrees and wait ten minutes before you open the door.';
const ID = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

/** One key asked three ways: `order` gives the answers in file (and time) order. */
function tree(order: string[], extra: string[] = []): string {
  const root = path.join(tempDir('traces-key-keeps-'), 'tree');
  const dir = path.join(root, 'oven', 'gen');
  mkdirSync(dir, { recursive: true });
  const user = { role: 'user', content: 'How do I set the oven for proofing bread?' };
  const lines = order.map((answer, index) => synalinksLine({ index, program: 'oven', module: 'gen', messages: [user, { role: 'assistant', content: answer }] }));
  // Another key whose only record is a refusal: kept, flagged.
  extra.forEach((answer, i) => {
    const index = order.length + i;
    lines.push(synalinksLine({ index, program: 'oven', module: 'gen', messages: [{ role: 'user', content: `Other question ${i}?` }, { role: 'assistant', content: answer }] }));
  });
  writeFileSync(path.join(dir, 'gen_20260101-000000.jsonl'), `${lines.join('\n')}\n`);
  return root;
}

function exported(root: string, args: string[] = [], format = 'openai'): { out: string; stderr: string; training: string; manifest: Record<string, unknown>[] } {
  const out = path.join(tempDir('traces-key-keeps-out-'), 'out');
  const result = runCli(['export', root, '--format', format, '--out', out, '--validation-fraction', '0', ...args]);
  assert.equal(result.status, 0, result.stderr);
  const manifest = readFileSync(path.join(out, '_traces', 'manifest.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { out, stderr: result.stderr, training: format === 'openai' ? readFileSync(path.join(out, 'training.jsonl'), 'utf8') : '', manifest };
}

describe('within a key, an answer no quality stage named beats a flagged one', () => {
  for (const keep of ['first', 'last']) {
    for (const order of [
      [REFUSAL, ANSWER],
      [ANSWER, REFUSAL],
      [REFUSAL, ANSWER, REFUSAL],
    ]) {
      it(`--keep ${keep}, answers in order ${order.map((a) => (a === REFUSAL ? 'refusal' : 'answer')).join(', ')}`, () => {
        const root = tree(order, [REFUSAL]);
        const { training, manifest, stderr } = exported(root, ['--keep', keep]);
        const good = ID(order.indexOf(ANSWER));
        assert.ok(training.includes('Turn the dial to 40 degrees'), training);
        // The other key's only record is a refusal: kept (flagged), as before.
        assert.equal(training.split('\n').filter((l) => l.includes('sorry')).length, 1, training);
        const duplicates = manifest.filter((d) => d.reason === 'duplicate');
        assert.deepEqual(
          duplicates.map((d) => d.kept),
          order.filter((a) => a === REFUSAL).map(() => good),
        );
        assert.match(stderr, new RegExp(`${order.length - 1} of them gave way to an unflagged answer of their key`));
      });
    }
  }

  it('keep-list over the index chooses as one machine does, and its SQL orders by the index\'s flagged column', async () => {
    const root = tree([REFUSAL, REFUSAL, ANSWER], [REFUSAL]);
    const work = tempDir('traces-key-keeps-index-');
    const index = path.join(work, 'index');
    const built = runCli(['index', root, '--format', 'openai', '--out', `${index}/`]);
    assert.equal(built.status, 0, built.stderr);
    const keep = path.join(work, 'keep.parquet');
    for (const keepRule of ['first', 'last']) {
      const listed = runCli(['keep-list', index, '--out', keep, '--force', '--keep', keepRule]);
      assert.equal(listed.status, 0, listed.stderr);
      const engine = await Engine.open(path.join(work, `spill-${keepRule}`));
      try {
        const ids = (await engine.query(`SELECT call_id FROM read_parquet(${sqlString(keep)}) ORDER BY call_id`)).rows.map((r) => String(r[0]));
        assert.deepEqual(ids, [ID(2), ID(3)]);
      } finally {
        engine.close();
      }
    }
    const sql = runCli(['keep-list', '--sql']);
    assert.match(sql.stdout, /WHEN flagged IS NOT NULL THEN 1/);
  });

  it('the hf card counts flagged records kept in training beside the drops', () => {
    const root = tree([REFUSAL, ANSWER], [REFUSAL]);
    const { out } = exported(root, [], 'hf');
    const card = readFileSync(path.join(out, 'README.md'), 'utf8');
    const dropped = card.slice(card.indexOf('## What was dropped'), card.indexOf('## Token counts'));
    assert.match(dropped, /Flagged and kept in training, not dropped: refusal 2/);
    assert.match(dropped, /1 of them gave way to an unflagged answer of their key/);
  });
});
