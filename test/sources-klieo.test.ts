import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { canonicalValueHash } from '../src/canonical/canonical.js';
import { JsonNumber } from '../src/canonical/json-value.js';
import type { DamagedLine, Message, TraceRecord } from '../src/record.js';
import { discover } from '../src/sources/discover.js';
import { sourceLabels } from '../src/sources/registry.js';
import { readFiles } from '../src/sources/read.js';
import type { SourceRun } from '../src/sources/source-run.js';
import { FIXTURES, runCli, tempDir } from './helpers.js';

const KLIEO = path.join(FIXTURES, 'klieo');

async function read(...roots: string[]): Promise<{ records: TraceRecord[]; runs: SourceRun[]; damaged: DamagedLine[] }> {
  const discovery = await discover(roots);
  const out = { records: [] as TraceRecord[], runs: [] as SourceRun[], damaged: [] as DamagedLine[] };
  for await (const batch of readFiles(discovery.files)) {
    out.records.push(...batch.records);
    out.runs.push(...(batch.runs ?? []));
    out.damaged.push(...batch.damaged);
  }
  return out;
}

const SEARCH_CALL = { id: 'call_1', type: 'function', function: { name: 'search_documents', arguments: { query: 'Q3 revenue' } } };

describe('klieo: detection', () => {
  it('finds RunLog, list-of-runs and Capture files by content; other JSON is reported, not fatal', async () => {
    const { files, skipped } = await discover([KLIEO]);
    assert.deepEqual(
      files.map((f) => [path.basename(f.path), f.source]),
      [
        ['capture-support.json', 'klieo'],
        ['more-runs.json', 'klieo'],
        ['researcher-failed.json', 'klieo'],
        ['writer-completed.json', 'klieo'],
      ],
    );
    assert.deepEqual(
      skipped.map((s) => [path.basename(s.path), s.reason]),
      [['notes.json', `not a .jsonl file; no known recorder format (${sourceLabels(false)})`]],
    );
  });
});

describe('klieo: RunLog steps as records', () => {
  it('a completed run: llm_call steps become records, tool steps their tool results, overhead never', async () => {
    const { records, runs } = await read(path.join(KLIEO, 'writer-completed.json'));
    assert.equal(records.length, 2);
    const first: Message = { role: 'assistant', content: 'I will look up the Q3 revenue first.', tool_calls: [SEARCH_CALL] };
    assert.deepEqual(records[0].messages(), [{ role: 'user', content: 'Summarise the Q3 report' }, first]);
    // The prompt repeats the last user turn: it is not added twice; the tool step answers the call.
    assert.deepEqual(records[1].messages(), [
      { role: 'user', content: 'Summarise the Q3 report' },
      first,
      { role: 'tool', content: { results: [{ title: 'Q3', revenue: new JsonNumber('1200000') }] }, tool_call_id: 'call_1' },
      { role: 'assistant', content: 'Q3 revenue was $1.2M.' },
    ]);
    assert.deepEqual(
      records.map((r) => [r.callId, r.parentCallId, r.program, r.module, r.model, r.status, r.partial, r.ref.line]),
      [
        ['01J9Z3K7Q2:0', '01J9Z3K7Q2', 'writer', 'claude-sonnet-4-6', 'claude-sonnet-4-6', 'ok', false, 1],
        ['01J9Z3K7Q2:3', '01J9Z3K7Q2', 'writer', 'claude-sonnet-4-6', 'claude-sonnet-4-6', 'ok', true, 2],
      ],
    );
    assert.equal(records[0].cost, 0.0081);
    assert.equal(records[1].cost, null, 'no cost_usd: unknown');
    assert.equal(records[0].usage?.prompt_tokens, 1200);
    assert.equal(records[0].usage?.total_tokens, 1500);
    // Start plus the latencies of the steps before; latency in ms.
    assert.equal(records[0].timestamp, Date.parse('2026-05-01T10:00:00Z') / 1000);
    assert.equal(records[1].timestamp, Date.parse('2026-05-01T10:00:00Z') / 1000 + 2.68);
    assert.equal(records[1].duration, 1.1);
    assert.equal(records[0].configHash, canonicalValueHash({ model: 'claude-sonnet-4-6', provider: null }));
    assert.equal(records[1].inputsHash, canonicalValueHash(records[1].messages().slice(0, -1)));
    assert.deepEqual(runs, [
      {
        id: '01J9Z3K7Q2',
        source: 'klieo',
        program: 'writer',
        recorderStatus: 'completed',
        status: 'ok',
        startedAt: Date.parse('2026-05-01T10:00:00Z') / 1000,
        finishedAt: Date.parse('2026-05-01T10:00:04Z') / 1000,
        lines: [1, 2],
        stepKinds: { llm_call: 2, tool_call: 1, summary_checkpoint: 1, ops_event: 1 },
        reportedTokens: { prompt: 3100, completion: 470 },
        reportedCost: 0.0163,
        overhead: { steps: 2, tokens: 450, costUsd: 0.0019 },
      },
    ]);
  });

  it('a failed run marks its records exception, without a completion', async () => {
    const { records, runs } = await read(path.join(KLIEO, 'researcher-failed.json'));
    assert.deepEqual(
      records.map((r) => [r.callId, r.status, r.exception]),
      [
        ['01J9Z4FAIL:0', 'exception', 'run failed'],
        ['01J9Z4FAIL:2', 'exception', 'provider returned 500'],
      ],
    );
    assert.deepEqual(records[0].messages(), [{ role: 'user', content: 'Find the capital of Australia' }]);
    // The failed call keeps the request it sent: the run so far, its prompt being the latest user turn.
    assert.deepEqual(records[1].messages(), [
      { role: 'user', content: 'Find the capital of Australia' },
      {
        role: 'assistant',
        content: 'Searching.',
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'web_search', arguments: { q: 'capital of Australia' } } }],
      },
      { role: 'tool', content: { error: 'timeout after 30s' }, tool_call_id: 'call_1' },
    ]);
    assert.equal(records[1].partial, true);
    assert.equal(runs[0].status, 'exception');
    assert.equal(runs[0].recorderStatus, 'failed');
  });

  it('failed calls keep their prompts, so two failed calls with different prompts are not merged by dedupe', async () => {
    const dir = tempDir('traces-klieo-failed-');
    const failedCall = (idx: number, prompt: string) =>
      ({ idx, kind: 'llm_call', name: 'gpt-4o', prompt_tokens: 300, completion_tokens: null, cost_usd: null, input: { prompt }, output: null, error: 'provider returned 500', latency: 400, span_id: null });
    const run = {
      run_id: '01TWOFAIL', agent: 'researcher', started_at: '2026-05-02T08:00:00Z', finished_at: '2026-05-02T08:00:03Z', status: 'failed',
      steps: [failedCall(0, 'Find the capital of Australia'), failedCall(1, 'Find the capital of Canada'), failedCall(2, 'Find the capital of Canada')],
      tokens: { prompt_tokens: 900, completion_tokens: 0 }, cost_estimate: null,
    };
    writeFileSync(path.join(dir, 'run.json'), JSON.stringify(run));
    const { records } = await read(dir);
    assert.deepEqual(records.map((r) => [r.status, r.messages()]), [
      ['exception', [{ role: 'user', content: 'Find the capital of Australia' }]],
      ['exception', [{ role: 'user', content: 'Find the capital of Canada' }]],
      ['exception', [{ role: 'user', content: 'Find the capital of Canada' }]],
    ]);
    assert.notEqual(records[0].inputsHash, records[1].inputsHash);
    // Both prompts survive dedupe; only the retry of the same prompt is a duplicate.
    for (const key of ['inputs', 'inputs,config']) {
      const result = runCli(['dedupe', dir, '--key', key, '--dry-run', '--json']);
      assert.equal(result.status, 0, result.stderr);
      const report = JSON.parse(result.stdout) as { kept: number; dropped: { duplicate: number } };
      assert.equal(report.kept, 2, key);
      assert.equal(report.dropped.duplicate, 1, key);
    }
  });

  it('a list of runs: cancelled is exception, running stays ok; a step without LLM I/O is not exportable', async () => {
    const { records, runs } = await read(path.join(KLIEO, 'more-runs.json'));
    assert.deepEqual(
      records.map((r) => [r.callId, r.status, r.ref.line, r.notExportable ?? null]),
      [
        ['01J9Z5CANC:0', 'exception', 1, null],
        ['01J9Z6RUN:0', 'ok', 2, null],
        ['01J9Z7NOIO:0', 'no_output', 3, 'llm_call step 0 has no LLM I/O (the run was projected without it): not exportable'],
      ],
    );
    assert.deepEqual(records[1].messages(), [
      { role: 'user', content: 'Write a limerick' },
      { role: 'assistant', content: 'There once was a coder named Lee' },
    ]);
    // No turn is invented for the step without I/O, nor for the tool step after it.
    assert.deepEqual(records[2].messages(), []);
    assert.equal(records[2].usage?.total_tokens, 130, 'its tokens are real, not stale');
    assert.deepEqual(
      runs.map((r) => [r.id, r.recorderStatus, r.status]),
      [
        ['01J9Z5CANC', 'cancelled', 'exception'],
        ['01J9Z6RUN', 'running', 'running'],
        ['01J9Z7NOIO', 'completed', 'ok'],
      ],
    );
  });

  it('a Capture takes prompts, completions, tool calls and the provider from llm_io', async () => {
    const { records, runs } = await read(path.join(KLIEO, 'capture-support.json'));
    const call: Message = {
      role: 'assistant',
      content: '',
      tool_calls: [{ id: 'call_lookup_1', type: 'function', function: { name: 'lookup_order', arguments: '{"order_id":"A-1001"}' } }],
    };
    const question = { role: 'user', content: 'Where is my order A-1001?' };
    assert.deepEqual(records[0].messages(), [question, call]);
    assert.deepEqual(records[1].messages(), [
      question,
      call,
      { role: 'tool', content: { status: 'shipped', eta: '2026-05-07' }, tool_call_id: 'call_lookup_1' },
      { role: 'assistant', content: 'Your order A-1001 has shipped and should arrive on 2026-05-07.' },
    ]);
    assert.deepEqual(
      records.map((r) => [r.provider, r.model, r.partial, r.usage?.prompt_tokens]),
      [
        ['openai', 'gpt-4.1-mini', false, 210],
        ['openai', 'gpt-4.1-mini', true, 260],
      ],
    );
    assert.equal(records[0].configHash, canonicalValueHash({ model: 'gpt-4.1-mini', provider: 'openai' }));
    assert.equal(runs[0].id, '01J9Z8CAPT');
  });

  it('reads JSON Lines of runs, and reports a value that is neither a RunLog nor a Capture', async () => {
    const dir = tempDir();
    const runs = JSON.parse(readFileSync(path.join(KLIEO, 'more-runs.json'), 'utf8')) as unknown[];
    const file = path.join(dir, 'runs.jsonl');
    writeFileSync(file, [...runs.map((r) => JSON.stringify(r)), JSON.stringify({ hello: 'world' })].join('\n') + '\n');
    const discovery = await discover([dir]);
    assert.deepEqual(discovery.files.map((f) => f.source), ['klieo']);
    const { records, damaged } = await read(dir);
    assert.deepEqual(records.map((r) => r.callId), ['01J9Z5CANC:0', '01J9Z6RUN:0', '01J9Z7NOIO:0']);
    assert.equal(damaged.length, 1);
    assert.match(damaged[0].reason, /neither a klieo RunLog \(steps\) nor a Capture \(run_log\)/);
  });
});

describe('klieo: commands', () => {
  it('export reports partial examples and drops steps without I/O as not exportable', () => {
    const out = path.join(tempDir(), 'out');
    const result = runCli(['export', KLIEO, '--format', 'openai', '--out', out, '--status', 'ok,no_output', '--trajectories', 'all', '--json']);
    assert.equal(result.status, 0, result.stderr);
    const report = JSON.parse(result.stdout);
    assert.equal(report.partial_examples, 2);
    assert.deepEqual([...report.partial_call_ids].sort(), ['01J9Z3K7Q2:3', '01J9Z8CAPT:2']);
    assert.equal(report.dropped.not_exportable, 1);
    assert.ok(report.warnings.some((w: string) => /partial/.test(w)));
    const manifest = readFileSync(path.join(out, '_traces', 'manifest.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    assert.ok(manifest.some((d) => d.call_id === '01J9Z7NOIO:0' && d.reason === 'not_exportable'));
  });

  it('stats counts by class; verify says the files have no recorded hashes', () => {
    const stats = JSON.parse(runCli(['stats', KLIEO, '--json']).stdout);
    assert.deepEqual([stats.records, stats.ok, stats.exception, stats.no_output], [9, 5, 3, 1]);
    const verify = runCli(['verify', KLIEO, '--json']);
    assert.equal(verify.status, 0);
    assert.deepEqual(JSON.parse(verify.stdout), { checked: 0, edited: 0, reserialized: 0, mismatches: [], damaged_lines: 0, files_without_hashes: 4, skipped_not_traces: 1 });
  });
});

describe('klieo records in a tree copy', () => {
  it('modules whose names differ only in case get folders of their own, as datasets do', () => {
    const dir = tempDir('traces-klieo-case-');
    const text = readFileSync(path.join(KLIEO, 'writer-completed.json'), 'utf8');
    const runId = (JSON.parse(text) as { run_id: string }).run_id;
    writeFileSync(path.join(dir, 'a.json'), text);
    writeFileSync(path.join(dir, 'b.json'), text.replaceAll('claude-sonnet-4-6', 'Claude-Sonnet-4-6').replaceAll(runId, `${runId}X`));
    const out = path.join(tempDir('traces-klieo-case-out-'), 'copy');
    const result = runCli(['dedupe', dir, '--out', out]);
    assert.equal(result.status, 0, result.stderr);
    const modules = readdirSync(path.join(out, 'writer')).sort();
    assert.equal(modules.length, 2, modules.join(' '));
    assert.equal(new Set(modules.map((m) => m.toLowerCase())).size, 2, `apart on a case-insensitive disk: ${modules.join(' ')}`);
    const lines = modules.flatMap((m) => readdirSync(path.join(out, 'writer', m)).map((f) => readFileSync(path.join(out, 'writer', m, f), 'utf8')));
    assert.equal(lines.join('').trim().split('\n').length, 4, 'every record copied');
  });
});

describe('klieo: a file of several runs, one of them broken', () => {
  it('keeps the runs before the break, whatever comes after it in the same read', async () => {
    const runLog = readFileSync(path.join(KLIEO, 'writer-completed.json'), 'utf8').trim();
    const whole = await read(path.join(KLIEO, 'writer-completed.json'));
    for (const [name, after] of [
      ['a stray brace', '}'],
      ['a second run broken mid-way', '{"run_id": "x", "steps": [} ]}'],
      ['words', 'garbage'],
    ]) {
      const file = path.join(tempDir(), 'runs.json');
      writeFileSync(file, `${runLog}\n${after}\n`);
      const got = await read(file);
      assert.equal(got.records.length, whole.records.length, name);
      assert.equal(got.damaged.length, 1, name);
      assert.match(got.damaged[0]!.reason, /^broken JSON after 1 run value\(s\)/, name);
    }
  });
});
