/**
 * The files of a sharded run are user input: an index, a keep-list, the lines on map's stdin
 * may have been edited or written by another tool. None of them prints a stack trace; each is
 * refused in one line that names what is wrong and what to do, or read as the damaged input
 * it is.
 */
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { Engine, sqlString } from '../src/engine/duckdb.js';
import { runCli, SAMPLES, tempDir } from './helpers.js';

const STACK = /^\s+at |TypeError|SyntaxError|RangeError/m;

/** Runs SQL in an embedded engine (the test's own, as a user's engine would write files). */
async function sql(text: string): Promise<void> {
  const engine = await Engine.open(null);
  try {
    await engine.query(text);
  } finally {
    engine.close();
  }
}

describe('hostile files of a sharded run', () => {
  let dir: string;
  let index: string;
  let keep: string;
  before(() => {
    dir = tempDir('traces-sharded-hostile-');
    index = path.join(dir, 'index.parquet');
    keep = path.join(dir, 'keep.parquet');
    assert.equal(runCli(['index', SAMPLES, '--format', 'openai', '--out', index]).status, 0);
    assert.equal(runCli(['keep-list', index, '--out', keep]).status, 0);
  });

  // Each: the index with one column replaced (as another tool, or an edit, leaves it), and what the refusal names.
  const tampered: [string, string, RegExp][] = [
    ['a tool_calls cell that is no JSON', `'{not json' AS tool_calls`, /holds a tool_calls cell traces index does not write/],
    ['a tool_calls cell that is a JSON string', `'"a"' AS tool_calls`, /holds a tool_calls cell traces index does not write/],
    ['a tool_calls cell of objects', `'[{"name":5}]' AS tool_calls`, /holds a tool_calls cell traces index does not write/],
    ['a tool_calls cell naming a tool no trainer takes', `'["bad name\\n[]\\nid:1"]' AS tool_calls`, /holds a tool_calls cell traces index does not write/],
    ['a minhash that is not hex', `'zz' AS minhash`, /holds a minhash traces index does not write/],
    ['a fraction column of text', `'x' AS fraction`, /column fraction is VARCHAR, not DOUBLE/],
    ['a call_id column of numbers', `42 AS call_id`, /column call_id is INTEGER, not VARCHAR/],
  ];
  for (const [what, replace, refusal] of tampered) {
    it(`keep-list refuses an index with ${what} in one line (exit 2), writing nothing`, async () => {
      const edited = path.join(dir, `edited-${tampered.findIndex(([w]) => w === what)}.parquet`);
      await sql(`COPY (SELECT * REPLACE (${replace}) FROM read_parquet(${sqlString(index)})) TO ${sqlString(edited)} (FORMAT parquet)`);
      const out = path.join(dir, `out-${path.basename(edited)}`);
      const result = runCli(['keep-list', edited, '--near-duplicates', '--out', out, '--tools-out', `${out}.json`]);
      assert.equal(result.status, 2, result.stderr);
      assert.doesNotMatch(result.stderr, STACK);
      assert.match(result.stderr, refusal);
      assert.equal(existsSync(out) || existsSync(`${out}.json`), false, 'nothing is written');
    });
  }

  it('keep-list refuses a folder of indexes holding another Parquet file (a keep-list left beside them), naming it, and a folder with no index', () => {
    const folder = path.join(dir, 'hosts');
    mkdirSync(path.join(folder, 'host-1'), { recursive: true });
    copyFileSync(index, path.join(folder, 'host-1', 'index.parquet'));
    copyFileSync(keep, path.join(folder, 'keep.parquet'));
    // Read with the index, its call_ids were 15 more records (39 of 24), duplicates with --status all.
    const result = runCli(['keep-list', folder, '--status', 'all', '--out', path.join(dir, 'from-hosts.parquet')]);
    assert.equal(result.status, 2, result.stderr);
    assert.match(result.stderr, /hosts\/keep\.parquet is not an index of traces index \(it has no parent_call_id/);
    const empty = path.join(dir, 'no-index');
    mkdirSync(empty);
    const none = runCli(['keep-list', empty, '--out', path.join(dir, 'from-empty.parquet')]);
    assert.equal(none.status, 2);
    assert.match(none.stderr, /no-index: the folder holds no \.parquet file/);
  });

  it('keep-list refuses --out and --tools-out naming one file, even with --force, before writing either', () => {
    const both = path.join(dir, 'both.parquet');
    for (const force of [[], ['--force']]) {
      const result = runCli(['keep-list', index, '--out', both, '--tools-out', path.join(dir, '.', 'both.parquet'), ...force]);
      assert.equal(result.status, 2, result.stderr);
      assert.match(result.stderr, /--tools-out .*both\.parquet is the same path as --out .*both\.parquet: each output needs a path of its own/);
      assert.equal(existsSync(both), false);
    }
  });

  it('a keep-list whose split column names another side is refused by export and map, naming it (no stack trace, no "banana" split)', async () => {
    const edited = path.join(dir, 'keep-banana.parquet');
    await sql(`COPY (SELECT call_id, 'banana' AS split FROM read_parquet(${sqlString(keep)})) TO ${sqlString(edited)} (FORMAT parquet)`);
    const exported = runCli(['export', SAMPLES, '--format', 'openai', '--keep-list', edited, '--out', path.join(dir, 'ds')]);
    assert.equal(exported.status, 2, exported.stderr);
    assert.doesNotMatch(exported.stderr, STACK);
    assert.match(exported.stderr, /forces the side "banana"; a keep-list's split column holds training, validation or nothing/);
    const lines = runCli(['map', '--format', 'openai', '--keep-list', edited], { input: '{}\n' });
    assert.equal(lines.status, 2, lines.stderr);
    assert.equal(lines.stdout, '');
    assert.match(lines.stderr, /forces the side "banana"/);
  });
});

describe('map reads standard input as every command reads a file', () => {
  it('a line longer than a record may be is a damaged line line_too_long, named on stderr, and the lines around it map', () => {
    const dir = tempDir('traces-map-long-');
    const keep = path.join(dir, 'keep.parquet');
    const index = path.join(dir, 'index.parquet');
    assert.equal(runCli(['index', SAMPLES, '--format', 'openai', '--out', index]).status, 0);
    assert.equal(runCli(['keep-list', index, '--out', keep]).status, 0);
    const file = path.join(SAMPLES, 'language_model', 'language_model_20260708-090512.jsonl');
    const lines = readFileSync(file, 'utf8');
    const plain = runCli(['map', '--format', 'openai', '--keep-list', keep], { input: lines });
    // 4 MB on a line (read in many pipe chunks), over the 3 MB limit the test sets.
    const long = `{"call_id":"x","inputs":"${'a'.repeat(4 << 20)}"}\n`;
    const result = runCli(['map', '--format', 'openai', '--keep-list', keep], { input: lines + long + lines, env: { TRACES_TEST_MAX_LINE: String(3 << 20) } });
    assert.equal(result.status, 0, result.stderr);
    assert.doesNotMatch(result.stderr, STACK);
    assert.match(result.stderr, /<stdin>:3: damaged line, skipped: line_too_long: the line is 4\.2 MB/);
    assert.match(result.stderr, /1 damaged/);
    assert.equal(result.stdout, plain.stdout + plain.stdout);
  });

  it('its summary counts in words: one line, one example', () => {
    const dir = tempDir('traces-map-one-');
    const keep = path.join(dir, 'keep.parquet');
    const index = path.join(dir, 'index.parquet');
    const file = path.join(SAMPLES, 'language_model', 'language_model_20260708-090512.jsonl');
    const first = `${readFileSync(file, 'utf8').split('\n')[0]}\n`;
    const one = path.join(dir, 'tree', 'language_model', 'language_model_20260708-090512.jsonl');
    mkdirSync(path.dirname(one), { recursive: true });
    writeFileSync(one, first);
    assert.equal(runCli(['index', path.join(dir, 'tree'), '--format', 'openai', '--out', index]).status, 0);
    assert.equal(runCli(['keep-list', index, '--out', keep]).status, 0);
    const result = runCli(['map', '--format', 'openai', '--keep-list', keep], { input: first });
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stderr, /^traces map: 1 line, 1 example, 0 not on the list, 0 damaged$/m);
  });
});
