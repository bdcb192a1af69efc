/**
 * Records whose fields hold values of the wrong type: a string where a number goes, an object
 * where the messages go, 1e308 as a duration. JSON allows them and orjson loads them, so they
 * are records, not damaged lines, and every command must come through them: no stack trace,
 * output that parses. `runs --json` once ended with "RangeError: Invalid time value" on a run
 * whose recorded start plus its recorded duration no Date can hold.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, before, describe, it } from 'node:test';
import { cleanup, render } from 'ink-testing-library';
import { App } from '../src/ui/App.js';
import { IndexStore } from '../src/ui/index-store.js';
import { PER_RECORD_TARGET_NAMES } from '../src/targets/index.js';
import { GOLDEN, runCli, tempDir } from './helpers.js';
import { driver, KEYS } from './ink-driver.js';

const VALUES: unknown[] = [null, true, -1, 1e308, 'text', '', [], {}, [[]], [null], { role: 'user', content: 'x' }];
const MESSAGE_KEYS = ['role', 'content', 'tool_calls', 'name', 'tool_call_id', 'reasoning_content'];

/** The golden record with one field, or one field of a message, set to each wrong value in turn. */
function wrongTypeLines(): string[] {
  const folder = path.join(GOLDEN, 'my_program', 'first_generator');
  const golden = JSON.parse(readFileSync(path.join(folder, readdirSync(folder)[0]!), 'utf8').split('\n')[0]!) as Record<string, unknown>;
  const lines: string[] = [];
  for (const field of [...Object.keys(golden), 'exception']) {
    for (const value of VALUES) lines.push(JSON.stringify({ ...golden, [field]: value }));
  }
  const messages = golden.messages as Record<string, unknown>[];
  for (const key of MESSAGE_KEYS) {
    for (const value of VALUES) {
      for (const at of [1, messages.length - 1]) {
        lines.push(JSON.stringify({ ...golden, messages: messages.map((m, i) => (i === at ? { ...m, [key]: value } : m)) }));
      }
    }
  }
  for (const value of VALUES) {
    const call = { id: value, type: 'function', function: { name: value, arguments: value } };
    lines.push(JSON.stringify({ ...golden, messages: [...messages.slice(0, -1), { role: 'assistant', content: null, tool_calls: [call] }] }));
    lines.push(JSON.stringify({ ...golden, usage: Object.fromEntries(['prompt_tokens', 'completion_tokens', 'total_tokens', 'cached_tokens', 'reasoning_tokens'].map((k) => [k, value])) }));
    lines.push(JSON.stringify({ ...golden, config: { config: { model: value } } }));
  }
  return lines;
}

let tree = '';
before(() => {
  tree = path.join(tempDir('traces-wrong-types-'), 'tree');
  const module = path.join(tree, 'my_program', 'first_generator');
  mkdirSync(module, { recursive: true });
  writeFileSync(path.join(module, 'first_generator_20260707-101530.jsonl'), `${wrongTypeLines().join('\n')}\n`);
});

describe('records with fields of the wrong type', () => {
  const commands: [string, string[]][] = [
    ['stats', ['stats', '--json']],
    ['stats by model', ['stats', '--by', 'model']],
    ['verify', ['verify', '--json']],
    ['runs', ['runs', '--json']],
    ['runs table', ['runs']],
    ['scan', ['scan', '--json']],
    ['dedupe', ['dedupe', '--dry-run', '--json']],
    ['filter', ['filter', '--dry-run', '--json']],
  ];
  for (const [name, args] of commands) {
    it(`${name}: no stack trace, and output that parses`, () => {
      const run = runCli([args[0]!, tree, ...args.slice(1)]);
      assert.ok(run.status === 0 || run.status === 1, `exit ${run.status}: ${run.stderr}`);
      assert.doesNotMatch(run.stderr, /\n\s+at /, 'no stack trace');
      if (args.includes('--json')) JSON.parse(run.stdout);
      else assert.ok(run.stdout.length > 0);
    });
  }

  for (const format of ['openai', 'nemo', 'nemo-customizer', 'ask-recording']) {
    it(`export ${format}: no stack trace; every line written parses`, () => {
      const out = path.join(tempDir(), 'out');
      const run = runCli(['export', tree, '--format', format, '--out', out]);
      assert.equal(run.status, 0, run.stderr);
      for (const entry of readdirSync(out, { recursive: true, withFileTypes: true })) {
        if (!entry.isFile() || !entry.name.endsWith('.jsonl')) continue;
        for (const line of readFileSync(path.join(entry.parentPath, entry.name), 'utf8').split('\n')) if (line !== '') JSON.parse(line);
      }
    });
  }

  it('index, then sql over it: no stack trace', () => {
    const index = path.join(tempDir(), 'index.parquet');
    const built = runCli(['index', tree, '--out', index]);
    assert.equal(built.status, 0, built.stderr);
    const rows = runCli(['sql', 'SELECT count(*) AS n, count(timestamp) AS timed, max(duration) AS d FROM records', '--index', index, '--json']);
    assert.equal(rows.status, 0, rows.stderr);
    assert.ok((JSON.parse(rows.stdout) as { n: number }[])[0]!.n > 0);
  });

  for (const format of PER_RECORD_TARGET_NAMES) {
    it(`index --format ${format}, keep-list over it, then map: no stack trace`, () => {
      const dir = tempDir();
      const built = runCli(['index', tree, '--format', format, '--out', path.join(dir, 'index.parquet')]);
      assert.equal(built.status, 0, built.stderr);
      const keep = path.join(dir, 'keep.parquet');
      const tools = path.join(dir, 'tools.json');
      const list = runCli(['keep-list', path.join(dir, 'index.parquet'), '--out', keep, '--tools-out', tools]);
      assert.equal(list.status, 0, list.stderr);
      const lines = readFileSync(path.join(tree, 'my_program', 'first_generator', 'first_generator_20260707-101530.jsonl'), 'utf8');
      const mapped = runCli(['map', '--format', format, '--keep-list', keep, '--inferred-tools', tools], { input: lines });
      assert.ok(mapped.status === 0 || mapped.status === 1, `exit ${mapped.status}: ${mapped.stderr}`);
      assert.doesNotMatch(`${built.stderr}${list.stderr}${mapped.stderr}`, /\n\s+at |TypeError/, 'no stack trace');
    });
  }
});

describe('browse: records with fields of the wrong type', () => {
  afterEach(() => cleanup());

  it('opens every record, its conversation and its metadata, and the screen stays whole', async () => {
    const store = await IndexStore.open([tree]);
    try {
      await store.whenDone();
      const ui = render(<App store={store} roots={tree} width={100} height={30} excludePath={path.join(tempDir(), 'exclude.txt')} copy={() => undefined} onQuit={() => undefined} />);
      const { waitFor, press } = driver(ui);
      await waitFor('all records');
      // Into the list, then each record in turn: open it, its metadata, back, down.
      let frame = await press(KEYS.enter);
      const records = wrongTypeLines().length;
      for (let i = 0; i < records; i++) {
        frame = await press(KEYS.enter);
        assert.match(frame, /traces browse/, `record ${i}: the header`);
        frame = await press(KEYS.tab);
        assert.match(frame, /traces browse/, `record ${i}: metadata`);
        frame = await press(KEYS.esc, KEYS.down);
        assert.match(frame, /all records/, `record ${i}: back in the list`);
      }
    } finally {
      store.close();
    }
  });
});

describe('token counts no recorder can mean', () => {
  // Negative, fractional, past 2^53 (a double rounds 18446744073709551615 and 2^53 + 1): each
  // is unknown, as an absent count is, and the same in stats, the index and the filters.
  const COUNTS = ['-1', '1.5', '1e20', '18446744073709551615', '9007199254740993'];

  it('count as unknown in stats totals, index columns and --min-tokens, and the other counts stay', () => {
    const folder = path.join(GOLDEN, 'my_program', 'first_generator');
    const goldenLine = readFileSync(path.join(folder, readdirSync(folder)[0]!), 'utf8').split('\n')[0]!;
    const golden = JSON.parse(goldenLine) as { usage: Record<string, number> };
    const root = path.join(tempDir('traces-counts-'), 'tree');
    const module = path.join(root, 'my_program', 'first_generator');
    mkdirSync(module, { recursive: true });
    // Number text kept as written: JSON.stringify would round it first.
    const lines = COUNTS.map((count) => goldenLine.replace(/"prompt_tokens":\s*\d+/, `"prompt_tokens": ${count}`));
    assert.ok(lines.every((line) => line !== goldenLine));
    writeFileSync(path.join(module, 'first_generator_20260707-101530.jsonl'), `${lines.join('\n')}\n`);

    const stats = JSON.parse(runCli(['stats', root, '--json']).stdout) as { ok: number; totals: { tokens: Record<string, number> } };
    assert.equal(stats.ok, COUNTS.length);
    assert.equal(stats.totals.tokens.prompt, 0);
    assert.equal(stats.totals.tokens.completion, COUNTS.length * golden.usage.completion_tokens);

    const sql = runCli(['sql', 'SELECT prompt_tokens, completion_tokens FROM records', root, '--json']);
    assert.equal(sql.status, 0, sql.stderr);
    assert.deepEqual(JSON.parse(sql.stdout), COUNTS.map(() => ({ prompt_tokens: null, completion_tokens: golden.usage.completion_tokens })));

    const total = golden.usage.total_tokens;
    const kept = JSON.parse(runCli(['filter', root, '--min-tokens', String(total), '--dry-run', '--json']).stdout) as { kept: number };
    assert.equal(kept.kept, COUNTS.length, 'total_tokens is recorded well and still counts');
  });
});
