/** End to end on a tree from the benchmark generator, whose counts are known. */
import assert from 'node:assert/strict';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import type { Expected } from '../bench/generate.js';
import { generatedTree, runCli, runCliJson, tempDir } from './helpers.js';

describe('a generated tree', () => {
  let tree = '';
  let expected: Expected;

  before(() => {
    ({ tree, expected } = generatedTree({ mb: 4, seed: 11, firstBigImageMb: 1, bigImageEveryMb: 2 }));
  });

  it('stats agrees exactly with the generator and lists every damaged line', () => {
    const stats = runCliJson<Record<string, any>>(['stats', tree]);
    for (const key of ['records', 'ok', 'exception', 'no_output', 'damaged_lines', 'unique_ok_keys', 'duplicate_ok_records'] as const) {
      assert.equal(stats[key], expected[key], key);
    }
    assert.equal(stats.totals.tokens.prompt, expected.tokens_ok.prompt);
    assert.equal(stats.totals.tokens.reasoning, expected.tokens_ok.reasoning);
    assert.ok(Math.abs(stats.totals.cost_usd - expected.cost_sum_ok) < 1e-6);
    const listed = stats.damaged.map((d: { file: string; line: number }) => `${path.relative(tree, path.resolve(d.file))}:${d.line}`);
    const want = expected.damaged.map((d) => `${d.file}:${d.line}`);
    assert.equal(stats.damaged.length + stats.damaged_not_listed, want.length);
    assert.deepEqual(listed, want.slice(0, listed.length));
  });

  it('verify finds every hash genuine', () => {
    const result = runCliJson<{ checked: number; mismatches: unknown[] }>(['verify', tree]);
    assert.equal(result.checked, expected.records);
    assert.deepEqual(result.mismatches, []);
  });

  it('dedupe --status ok keeps the distinct ok keys; a second run --against it keeps nothing', () => {
    const out = path.join(tempDir(), 'dedupe');
    const first = runCliJson<{ kept: number; records_read: number; dropped: Record<string, number> }>(['dedupe', tree, '--status', 'ok', '--out', out]);
    assert.equal(first.kept, expected.unique_ok_keys);
    assert.equal(first.kept + Object.values(first.dropped).reduce((a, b) => a + b, 0), first.records_read);
    const second = runCliJson<{ kept: number }>(['dedupe', tree, '--status', 'ok', '--against', out, '--dry-run']);
    assert.equal(second.kept, 0);
  });

  for (const format of ['openai', 'nemo', 'nemo-customizer']) {
    it(`export --format ${format} passes validate with zero errors`, () => {
      const out = path.join(tempDir(), format);
      const result = runCli(['export', tree, '--format', format, '--out', out, '--json']);
      assert.equal(result.status, 0, result.stderr);
      const report = JSON.parse(result.stdout);
      assert.ok(report.examples.training > 0);
      const check = runCli(['validate', path.join(out, 'training.jsonl'), path.join(out, 'validation.jsonl'), '--format', format]);
      assert.equal(check.status, 0, check.stdout);
    });
  }
});
