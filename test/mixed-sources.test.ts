import assert from 'node:assert/strict';
import { cpSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { discover } from '../src/sources/discover.js';
import { sourceLabels } from '../src/sources/registry.js';
import { FIXTURES, runCli, SAMPLES, tempDir } from './helpers.js';

const RAW_MARKER = 'RAW-PROVIDER-BODY-MARKER';

/** One folder holding a Synalinks tree, Ask recordings and klieo runs side by side. */
function mixedFolder(): string {
  const dir = path.join(tempDir(), 'mixed');
  cpSync(SAMPLES, dir, { recursive: true });
  cpSync(path.join(FIXTURES, 'ask'), path.join(dir, 'recordings'), { recursive: true });
  cpSync(path.join(FIXTURES, 'klieo'), path.join(dir, 'klieo-runs'), { recursive: true });
  return dir;
}

function allFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((f) => path.join(dir, f))
    .filter((f) => statSync(f).isFile());
}

describe('a folder mixing Synalinks, Ask and klieo', () => {
  let dir = '';
  before(() => {
    dir = mixedFolder();
  });

  it('discovers each file with its format, and skips the rest with reasons', async () => {
    const { files, skipped } = await discover([dir]);
    const count = (source: string) => files.filter((f) => f.source === source).length;
    assert.deepEqual([count('synalinks'), count('ask'), count('klieo')], [8, 3, 4]);
    const reasons = new Map(skipped.map((s) => [path.relative(dir, s.path), s.reason]));
    assert.equal(reasons.get('klieo-runs/notes.json'), `not a .jsonl file; no known recorder format (${sourceLabels(false)})`);
    assert.equal(reasons.get('datasets/some_ds/train.jsonl'), 'dataset cache');
  });

  for (const format of ['nemo', 'openai']) {
    it(`export --format ${format} validates with zero errors`, () => {
      const out = path.join(tempDir(), `out-${format}`);
      const result = runCli(['export', dir, '--format', format, '--out', out, '--json']);
      assert.equal(result.status, 0, result.stderr);
      const report = JSON.parse(result.stdout);
      assert.equal(report.records_read, 24 + 7 + 9);
      assert.ok(report.examples.training + report.examples.validation >= 20);
      for (const split of ['training', 'validation']) {
        const validate = runCli(['validate', path.join(out, `${split}.jsonl`), '--format', format, '--json']);
        assert.equal(validate.status, 0, validate.stdout);
        const parsed = JSON.parse(validate.stdout);
        assert.deepEqual(parsed.errors, []);
        assert.equal(parsed.ok, true);
      }
      // Examples from every recorder made it in.
      const lines = readFileSync(path.join(out, 'training.jsonl'), 'utf8') + readFileSync(path.join(out, 'validation.jsonl'), 'utf8');
      assert.ok(lines.includes('Paris (18.5 °C) is warmer than Oslo (7 °C).'));
      assert.ok(lines.includes('Your order A-1001 has shipped'));
      assert.ok(!lines.includes(RAW_MARKER));
    });
  }

  it('stats counts all three recorders; runs lists their runs', () => {
    const stats = JSON.parse(runCli(['stats', dir, '--json']).stdout);
    assert.equal(stats.records, 40);
    assert.equal(stats.files, 15);
    const runs = JSON.parse(runCli(['runs', dir, '--json']).stdout) as { source: string }[];
    const bySource = (s: string) => runs.filter((r) => r.source === s).length;
    assert.deepEqual([bySource('synalinks'), bySource('ask'), bySource('klieo')], [18, 3, 6]);
  });

  it('stats counts versions of the records that carry one only: the Synalinks records, not Ask or klieo as (unknown)', () => {
    const stats = JSON.parse(runCli(['stats', dir, '--json']).stdout) as Record<string, unknown>;
    assert.deepEqual(stats.synalinks_versions, { '0.9.014': 24 });
    assert.deepEqual(Object.keys(stats).filter((k) => k.endsWith('_versions')), ['synalinks_versions']);
    const text = runCli(['stats', dir]).stdout;
    assert.match(text, /^synalinks +0\.9\.014 \(24\)$/m);
    assert.doesNotMatch(text, /\(unknown\) \(16\)/);
    // With recorders that carry no version alone: no version line, no key, and a table by version says why it is empty.
    const others = path.join(tempDir(), 'others');
    cpSync(path.join(FIXTURES, 'ask'), path.join(others, 'recordings'), { recursive: true });
    cpSync(path.join(FIXTURES, 'klieo'), path.join(others, 'klieo-runs'), { recursive: true });
    cpSync(path.join(FIXTURES, 'otel', 'openinference.jsonl'), path.join(others, 'spans.jsonl'));
    const json = JSON.parse(runCli(['stats', others, '--json']).stdout) as Record<string, unknown>;
    assert.equal(json.records, 7 + 9 + 10);
    assert.deepEqual(Object.keys(json).filter((k) => k.includes('version')), []);
    const lines = runCli(['stats', others, '--by', 'version']).stdout;
    assert.doesNotMatch(lines, /^synalinks/m);
    assert.match(lines, /^version: no record read carries its recorder's version$/m);
    // Browse's record panel and --synalinks-version's drops say the same.
    const dropped = runCli(['filter', others, '--synalinks-version', '>=0.9', '--dry-run', '-v']).stdout + runCli(['filter', others, '--synalinks-version', '>=0.9', '--dry-run', '-v']).stderr;
    assert.match(dropped, /filter \(no synalinks version: otlp records carry none\)/);
    assert.doesNotMatch(dropped, /synalinks version unknown/);
  });

  it('dedupe copies Synalinks lines byte for byte and writes the others as Synalinks lines; the result verifies', () => {
    const out = path.join(tempDir(), 'dedupe');
    const result = runCli(['dedupe', dir, '--out', out, '--json']);
    assert.equal(result.status, 0, result.stderr);
    const summary = JSON.parse(result.stdout);
    const original = readFileSync(path.join(SAMPLES, 'math_agent', 'final_generator_math_agent', 'final_generator_math_agent_20260708-163045.jsonl'));
    assert.deepEqual(readFileSync(path.join(out, 'math_agent', 'final_generator_math_agent', 'final_generator_math_agent_20260708-163045.jsonl')), original);
    assert.ok(statSync(path.join(out, 'support', 'gpt-4.1-mini', 'gpt-4.1-mini_20260505-153000.jsonl')).isFile());
    const verify = JSON.parse(runCli(['verify', out, '--json']).stdout);
    assert.deepEqual(verify.mismatches, []);
    assert.equal(verify.checked, summary.kept);
    for (const file of allFiles(out)) assert.ok(!readFileSync(file).includes(RAW_MARKER), file);
    // The copy reads back with the same keys: a second dedupe against it keeps nothing new.
    const again = JSON.parse(runCli(['dedupe', dir, '--against', out, '--dry-run', '--json']).stdout);
    assert.equal(again.kept, 0);
  });

  it('--source forces one format: the Synalinks files alone', async () => {
    const { files } = await discover([dir], { source: 'synalinks' });
    assert.ok(files.length === 8 && files.every((f) => f.source === 'synalinks'));
    const stats = JSON.parse(runCli(['stats', dir, '--source', 'synalinks', '--json']).stdout);
    assert.equal(stats.records, 24);
  });
});
