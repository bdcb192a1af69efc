/**
 * report.json is one documented schema (docs/report.md): its members are those the document's
 * tables list, snake_case like `validate --json`, numbers as numbers, every drop reason listed
 * with zero counts, and the traces version, command line and roots recorded.
 */
import assert from 'node:assert/strict';
import { readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { EXPORT_REASONS } from '../src/pipeline/drop-reasons.js';
import { REPO, SAMPLES, runCli, tempDir } from './helpers.js';

type Report = Record<string, unknown> & { files: Record<string, unknown>[]; dropped: Record<string, number> };

/** The member names of a table in docs/report.md: its first column, `a`, `b` split. */
function documentedMembers(heading: RegExp): string[] {
  const doc = readFileSync(path.join(REPO, 'docs', 'report.md'), 'utf8');
  const start = doc.search(heading);
  assert.ok(start >= 0, `docs/report.md has ${heading}`);
  const table = doc.slice(start).split('\n\n').find((block) => block.startsWith('| member'))!;
  return table
    .split('\n')
    .slice(2)
    .flatMap((row) => [...row.split('|')[1].matchAll(/`([a-z_]+)`/g)].map((m) => m[1]));
}

const SNAKE = /^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/;

function keysDeep(value: unknown, into: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) keysDeep(item, into);
  else if (typeof value === 'object' && value !== null) {
    for (const [key, inner] of Object.entries(value)) {
      into.push(key);
      keysDeep(inner, into);
    }
  }
  return into;
}

describe('report.json', () => {
  let report: Report;
  let out = '';

  before(() => {
    out = path.join(tempDir('traces-report-'), 'ds');
    const result = runCli(['export', SAMPLES, '--format', 'nemo', '--out', out, '--seed', '7', '--validation-fraction', '0.5']);
    assert.equal(result.status, 0, result.stderr);
    report = JSON.parse(readFileSync(path.join(out, 'report.json'), 'utf8')) as Report;
  });

  it('records the traces version, the command line and the roots read', () => {
    const version = (JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { version: string }).version;
    assert.equal(report.schema_version, 2);
    assert.equal(report.traces_version, version);
    assert.equal(runCli(['--version']).stdout.trim(), version);
    assert.equal(report.command, 'export');
    assert.deepEqual(report.arguments, ['export', SAMPLES, '--format', 'nemo', '--out', out, '--seed', '7', '--validation-fraction', '0.5']);
    assert.deepEqual(report.roots, [realpathSync(SAMPLES)]);
  });

  it('holds numbers as numbers: the seed too', () => {
    assert.equal(report.seed, 7);
    assert.equal(report.validation_fraction, 0.5);
    for (const [split, n] of Object.entries(report.examples as Record<string, number>)) assert.equal(typeof n, 'number', split);
  });

  it('lists every drop reason, zero included, and its counts add up to what was read', () => {
    for (const reason of EXPORT_REASONS) assert.equal(typeof report.dropped[reason], 'number', reason);
    assert.equal(report.dropped.filter, 0);
    assert.ok(report.dropped.prefix > 0);
    const examples = report.examples as Record<string, number>;
    const dropped = Object.values(report.dropped).reduce((a, b) => a + b, 0);
    assert.equal(examples.training + examples.validation + dropped, report.records_read);
  });

  it('counts tokens per split as its files do', () => {
    const tokens = report.tokens as Record<string, number>;
    for (const split of ['training', 'validation']) {
      const files = report.files.filter((f) => f.split === split);
      assert.equal(tokens[split], files.reduce((n, f) => n + (f.tokens as { total: { total: number } }).total.total, 0), split);
      assert.ok(tokens[split] > 0, split);
    }
  });

  it('has exactly the members docs/report.md lists, snake_case everywhere', () => {
    const documented = new Set(documentedMembers(/^## Members/m));
    // `exclude` and `keep_list` appear with their options only, `format_options` and `beside_data` with --format hf,
    // `llama_factory` with --format hf when LLaMA-Factory gets rows of its own.
    const present = Object.keys(report);
    const conditional = ['exclude', 'keep_list', 'format_options', 'beside_data', 'llama_factory'];
    assert.deepEqual(present.filter((key) => !documented.has(key)), [], 'undocumented members');
    assert.deepEqual([...documented].filter((key) => !present.includes(key) && !conditional.includes(key)), [], 'documented members missing');
    const fileMembers = new Set(documentedMembers(/^A `files` entry/m));
    for (const file of report.files) assert.deepEqual(Object.keys(file).sort(), [...fileMembers].sort());
    const notSnake = keysDeep(report).filter((key) => !SNAKE.test(key) && key !== 'p95');
    // Redaction counts are named after detectors, and tool schemas after recorded parameters: none here.
    assert.deepEqual(notSnake, []);
  });

  it("a file's entry is what validate --json prints for it", () => {
    for (const file of report.files) {
      const result = runCli(['validate', path.join(out, file.file as string), '--format', 'nemo', '--json']);
      assert.equal(result.status, 0, result.stderr);
      const { file: _validated, ...validated } = JSON.parse(result.stdout) as Record<string, unknown>;
      const { file: _written, dataset: _dataset, split: _split, ...written } = file;
      assert.deepEqual(written, validated);
    }
  });

  it('--seed takes a whole number, and says so otherwise', () => {
    const result = runCli(['export', SAMPLES, '--format', 'nemo', '--out', path.join(tempDir('traces-report-'), 'x'), '--seed', 'seven']);
    assert.equal(result.status, 2);
    assert.match(result.stderr, /^traces: --seed "seven": expected a whole number ≥ 0$/m);
  });
});
