import assert from 'node:assert/strict';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { FIXTURES, REPO, SAMPLES, runCli, runCliJson, tempDir } from './helpers.js';

const expected = JSON.parse(readFileSync(path.join(FIXTURES, 'samples-expected.json'), 'utf8'));

interface StatsJson {
  records: number;
  ok: number;
  exception: number;
  no_output: number;
  damaged_lines: number;
  unique_ok_keys: number;
  duplicate_ok_records: number;
  totals: { tokens: Record<string, number>; cost_usd: number; duration_s: { p50: number; p95: number } };
  programs: Record<string, { records: number }>;
  modules: Record<string, { records: number; ok: number; exception: number; no_output: number }>;
  damaged: { file: string; line: number; reason: string }[];
}

describe('traces stats on the samples', () => {
  const stats = runCliJson<StatsJson>(['stats', SAMPLES]);

  it('counts every class, damaged line and distinct ok key', () => {
    for (const key of ['records', 'ok', 'exception', 'no_output', 'damaged_lines', 'unique_ok_keys', 'duplicate_ok_records']) {
      assert.equal(stats[key as keyof StatsJson], expected[key], key);
    }
  });

  it('sums tokens and cost over ok records only', () => {
    for (const key of ['prompt', 'completion', 'reasoning', 'cached', 'total']) {
      assert.equal(stats.totals.tokens[key], expected.tokens_ok[key], key);
    }
    assert.ok(Math.abs(stats.totals.cost_usd - expected.cost_sum_ok) < 1e-9);
    assert.ok(stats.totals.duration_s.p50 > 0 && stats.totals.duration_s.p95 >= stats.totals.duration_s.p50);
  });

  it('breaks counts down per program and module', () => {
    for (const [program, n] of Object.entries(expected.per_program)) assert.equal(stats.programs[program].records, n, program);
    for (const [module, kinds] of Object.entries(expected.per_module_kinds as Record<string, Record<string, number>>)) {
      for (const [kind, n] of Object.entries(kinds)) assert.equal(stats.modules[module][kind as 'ok'], n, `${module} ${kind}`);
    }
  });

  it('lists the damaged line with its file and line', () => {
    assert.equal(stats.damaged.length, 1);
    assert.ok(stats.damaged[0].file.endsWith(expected.damaged_line.file), stats.damaged[0].file);
    assert.equal(stats.damaged[0].line, expected.damaged_line.line);
    assert.match(stats.damaged[0].reason, /truncated/);
  });

  it('prints readable tables by default and by a chosen dimension', () => {
    const table = runCli(['stats', SAMPLES]);
    assert.equal(table.status, 0);
    assert.match(table.stdout, /records\s+24: ok 22, exception 1, no_output 1; damaged lines 1/);
    assert.match(table.stdout, /math_agent\/tool_calls_generator_math_agent\s+6/);
    const byModel = runCli(['stats', SAMPLES, '--by', 'model']);
    assert.match(byModel.stdout, /^model\s+records/m);
    assert.match(byModel.stdout, /openai\/gpt-4o-mini/);
  });

  it('says which files it skipped with --verbose', () => {
    const result = runCli(['stats', SAMPLES, '--verbose']);
    assert.match(result.stderr, /skipped .*synalinks\.json: not a \.jsonl file/);
    assert.match(result.stderr, /skipped .*datasets\/some_ds\/train\.jsonl: dataset cache/);
  });

  it('stops quietly when the reader closes the pipe early (| head)', async () => {
    const { spawn } = await import('node:child_process');
    const child = spawn(process.execPath, [path.join(REPO, 'bin', 'traces.js'), 'stats', SAMPLES, '--json', '--by', 'module'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    // Closed before the report is written, so the write meets a closed pipe (EPIPE).
    child.stdout.destroy();
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    assert.equal(code, 0);
    assert.doesNotMatch(stderr, /EPIPE|Error/);
  });

  it('exits 2 naming a missing root, and on a bad option', () => {
    const missing = runCli(['stats', '/no/such/tree']);
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /\/no\/such\/tree: no such file or folder/);
    assert.equal(runCli(['stats', SAMPLES, '--by', 'colour']).status, 2);
  });
});

describe('traces verify', () => {
  it('finds every sample hash genuine', () => {
    const result = runCliJson<{ checked: number; mismatches: unknown[] }>(['verify', SAMPLES]);
    assert.equal(result.checked, expected.records);
    assert.deepEqual(result.mismatches, []);
    assert.equal(runCli(['verify', SAMPLES]).status, 0);
  });

  it('flags a record whose messages were edited after recording, and one whose config was', () => {
    const tree = path.join(tempDir(), 'tree');
    cpSync(SAMPLES, tree, { recursive: true });
    const file = path.join(tree, 'my_program', 'generator_cot', 'generator_cot_20260707-101530.jsonl');
    const lines = readFileSync(file, 'utf8').split('\n');
    const first = JSON.parse(lines[0]);
    // Edit the text in place so every number keeps its recorded spelling.
    const recorded = JSON.stringify(first.messages[1].content);
    assert.ok(lines[0].includes(recorded));
    lines[0] = lines[0].replace(recorded, JSON.stringify(`${first.messages[1].content} (edited)`));
    lines[1] = lines[1].replace('"temperature":', '"temperature": ');
    writeFileSync(file, lines.join('\n'));
    const result = runCliJson<{ mismatches: { call_id: string; line: number; field: string }[] }>(['verify', tree]);
    assert.deepEqual(
      result.mismatches.map((m) => [m.line, m.field]),
      [
        [1, 'inputs_hash'],
      ],
      'whitespace alone changes nothing; an edited message does',
    );
    assert.equal(result.mismatches[0].call_id, first.call_id);
    lines[1] = lines[1].replace('"temperature": ', '"temperature":0.5,"t":');
    writeFileSync(file, lines.join('\n'));
    const again = runCli(['verify', tree, '--json']);
    assert.equal(again.status, 1);
    assert.deepEqual(
      JSON.parse(again.stdout).mismatches.map((m: { line: number; field: string }) => [m.line, m.field]),
      [
        [1, 'inputs_hash'],
        [2, 'config_hash'],
      ],
    );
  });
});
