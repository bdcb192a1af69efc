import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { defaultPriceTable, PriceTable } from '../src/pricing/table.js';
import { discover } from '../src/sources/discover.js';
import { readFiles } from '../src/sources/read.js';
import { groupRuns, sortRuns, type Run } from '../src/runs/runs.js';
import { FIXTURES, runCli, SAMPLES, tempDir } from './helpers.js';

const ASK = path.join(FIXTURES, 'ask');
const KLIEO = path.join(FIXTURES, 'klieo');

async function runsOf(roots: string[], prices: PriceTable | null = defaultPriceTable()): Promise<Run[]> {
  return groupRuns(await discover(roots), prices);
}

describe('runs: grouping', () => {
  it('Synalinks: an agent trajectory chains across modules; other records are runs of one call', async () => {
    const runs = await runsOf([SAMPLES]);
    const discovery = await discover([SAMPLES]);
    let records = 0;
    for await (const batch of readFiles(discovery.files)) records += batch.records.length;
    const agent = runs.filter((r) => r.program === 'math_agent');
    assert.equal(agent.length, 2);
    for (const run of agent) {
      assert.equal(run.steps, 4);
      assert.equal(run.source, 'synalinks');
      assert.deepEqual(run.modules, ['final_generator_math_agent', 'tool_calls_generator_math_agent']);
      assert.deepEqual(
        run.calls.map((c) => path.basename(path.dirname(c.file))),
        ['tool_calls_generator_math_agent', 'tool_calls_generator_math_agent', 'tool_calls_generator_math_agent', 'final_generator_math_agent'],
      );
      assert.equal(run.status, 'ok');
      assert.ok(run.duration !== null && run.duration > 0);
      assert.ok(run.cost.reportedUsd !== null && run.cost.estimatedUsd === null);
      assert.equal(run.id, run.calls[0].callId);
    }
    assert.deepEqual(agent.map((r) => r.calls.map((c) => c.line)), [
      [1, 2, 3, 1],
      [4, 5, 6, 2],
    ]);
    assert.equal(runs.length, records - 8 + 2);
    assert.ok(runs.filter((r) => r.program !== 'math_agent').every((r) => r.steps === 1));
  });

  it('Ask: one recording is one run', async () => {
    const runs = await runsOf([ASK]);
    assert.deepEqual(
      runs.map((r) => [r.id, r.source, r.program, r.steps, r.stepKinds, r.status]),
      [
        ['first-agent-1', 'ask', 'first-agent-1', 2, { provider: 2, tool: 1 }, 'ok'],
        ['weather-compare', 'ask', 'weather-compare', 3, { provider: 3, tool: 2 }, 'ok'],
        ['older-format', 'ask', 'older-format', 2, { provider: 2, tool: 0 }, 'ok'],
      ],
    );
    const streamed = runs[0];
    assert.deepEqual(streamed.tokens, { prompt: 0, completion: 0, total: 0, stepsWithoutUsage: 2 });
    assert.deepEqual(streamed.cost, { reportedUsd: null, estimatedUsd: null, unpricedSteps: 2, recorderTotalUsd: null });
    assert.equal(streamed.duration, null, 'Ask keeps no timings');
  });

  it('klieo: one run_id is one run, with its status, times, overhead and both kinds of cost', async () => {
    const runs = await runsOf([KLIEO]);
    assert.deepEqual(
      runs.map((r) => [r.id, r.program, r.steps, r.status, r.recorderStatus, r.partialSteps]),
      [
        ['01J9Z8CAPT', 'support', 2, 'ok', 'completed', 1],
        ['01J9Z5CANC', 'writer', 1, 'exception', 'cancelled', 0],
        ['01J9Z6RUN', 'writer', 1, 'running', 'running', 0],
        ['01J9Z7NOIO', 'planner', 1, 'ok', 'completed', 0],
        // The failed second call keeps its prompt after the run's first turns: rebuilt, so partial.
        ['01J9Z4FAIL', 'researcher', 2, 'exception', 'failed', 1],
        ['01J9Z3K7Q2', 'writer', 2, 'ok', 'completed', 1],
      ],
    );
    const writer = runs.find((r) => r.id === '01J9Z3K7Q2')!;
    assert.deepEqual(writer.tokens, { prompt: 2700, completion: 420, total: 3120, stepsWithoutUsage: 0 });
    assert.equal(writer.cost.reportedUsd, 0.0081);
    // claude-sonnet-4-6 is priced by the family alias claude-sonnet-4-x: 3 in, 15 out per million.
    assert.ok(Math.abs(writer.cost.estimatedUsd! - (1500 * 3 + 120 * 15) / 1e6) < 1e-12);
    assert.equal(writer.cost.unpricedSteps, 0);
    assert.equal(writer.cost.recorderTotalUsd, 0.0163);
    assert.deepEqual(writer.overhead, { steps: 2, tokens: 450, costUsd: 0.0019 });
    assert.equal(writer.duration, 4);
    const noIo = runs.find((r) => r.id === '01J9Z7NOIO')!;
    assert.deepEqual(noIo.cost, { reportedUsd: null, estimatedUsd: null, unpricedSteps: 1, recorderTotalUsd: null });
    assert.equal(runs.find((r) => r.id === '01J9Z6RUN')!.duration, null, 'still running: no end');
  });

  it('without a price table nothing is estimated: costs stay unknown', async () => {
    const runs = await runsOf([KLIEO], null);
    const writer = runs.find((r) => r.id === '01J9Z3K7Q2')!;
    assert.equal(writer.cost.estimatedUsd, null);
    assert.equal(writer.cost.unpricedSteps, 1);
  });

  it('sorts by cost, tokens or duration, largest first, unknown last', async () => {
    const runs = await runsOf([KLIEO, ASK]);
    const byCost = sortRuns(runs, 'cost');
    assert.equal(byCost[0].id, '01J9Z3K7Q2');
    const known = byCost.map((r) => (r.cost.reportedUsd ?? 0) + (r.cost.estimatedUsd ?? 0));
    const firstUnknown = byCost.findIndex((r) => r.cost.reportedUsd === null && r.cost.estimatedUsd === null);
    assert.ok(firstUnknown > 0);
    assert.ok(byCost.slice(firstUnknown).every((r) => r.cost.reportedUsd === null && r.cost.estimatedUsd === null));
    for (let i = 1; i < firstUnknown; i++) assert.ok(known[i - 1] >= known[i]);
    const byTokens = sortRuns(runs, 'tokens');
    assert.equal(byTokens[0].id, '01J9Z3K7Q2');
    assert.equal(byTokens[byTokens.length - 1].id, 'first-agent-1');
    const byDuration = sortRuns(runs, 'duration');
    assert.equal(byDuration[0].id, '01J9Z8CAPT');
  });
});

describe('traces runs', () => {
  it('prints one line per run, never $0 for an unknown cost', () => {
    const result = runCli(['runs', ASK, KLIEO, SAMPLES]);
    assert.equal(result.status, 0, result.stderr);
    const lines = result.stdout.trim().split('\n');
    assert.match(lines[0], /^run\s+source\s+program\s+steps\s+status\s+tokens\s+cost\s+duration\s+started$/);
    const row = (id: string) => lines.find((l) => l.startsWith(id))!;
    assert.match(row('first-agent-1'), /ask\s+first-agent-1\s+2\s+ok\s+unknown\s+unknown\s+-/);
    assert.match(row('01J9Z3K7Q2'), /klieo\s+writer\s+2\s+completed\s+3,120\s+\$0\.0081 \+ ≈\$0\.0063\s+4\.0s/);
    assert.match(row('01J9Z7NOIO'), /planner\s+1\s+completed\s+130\s+unknown/);
    assert.match(result.stdout, /3 runs have partial steps/);
  });

  it('ends with a legend of the marks some row shows, and of no other', () => {
    const samples = runCli(['runs', SAMPLES]).stdout.trim().split('\n');
    assert.ok(!samples.slice(1, -1).some((l) => /≈|\+\?/.test(l)), 'the sample rows show no mark');
    assert.match(samples.at(-1)!, /^\d+ runs$/);
    const marked = runCli(['runs', KLIEO]).stdout.trim().split('\n');
    const legend = marked.find((l) => /^\d+ runs/.test(l))!;
    const rows = marked.slice(1, marked.indexOf(legend));
    assert.ok(rows.some((l) => /≈\$/.test(l)));
    assert.match(legend, /^\d+ runs; ≈ cost estimated from the price table/);
    assert.equal(rows.some((l) => /\$[\d.]+\+\?/.test(l)), /cost \+\?/.test(legend));
  });

  it('--json gives every field, --sort orders it', () => {
    const runs = JSON.parse(runCli(['runs', KLIEO, '--json', '--sort', 'cost']).stdout);
    assert.equal(runs[0].id, '01J9Z3K7Q2');
    assert.deepEqual(Object.keys(runs[0]), [
      'id',
      'source',
      'program',
      'modules',
      'steps',
      'step_kinds',
      'status',
      'recorder_status',
      'partial_steps',
      'tokens',
      'cost',
      'overhead',
      'duration_s',
      'started_at',
      'finished_at',
      'calls',
    ]);
    assert.deepEqual(runs[0].cost, { reported_usd: 0.0081, estimated_usd: 0.0063, unpriced_steps: 0, recorder_total_usd: 0.0163 });
    assert.equal(runs[0].started_at, '2026-05-01T10:00:00.000Z');
    assert.deepEqual(runs[0].calls, [
      { file: path.relative(process.cwd(), path.join(KLIEO, 'writer-completed.json')), line: 1, call_id: '01J9Z3K7Q2:0' },
      { file: path.relative(process.cwd(), path.join(KLIEO, 'writer-completed.json')), line: 2, call_id: '01J9Z3K7Q2:3' },
    ]);
  });

  it('--prices replaces the default table; a miss leaves the cost unknown', () => {
    const prices = path.join(tempDir(), 'prices.json');
    writeFileSync(prices, JSON.stringify({ prices: { openai: { 'gpt-4.1-mini': { input: 1, output: 1 } } } }));
    const runs = JSON.parse(runCli(['runs', KLIEO, '--json', '--prices', prices]).stdout) as { id: string; cost: Record<string, unknown> }[];
    const support = runs.find((r) => r.id === '01J9Z8CAPT')!;
    assert.equal(support.cost.estimated_usd, (235 + 290) / 1e6);
    const writer = runs.find((r) => r.id === '01J9Z3K7Q2')!;
    assert.deepEqual(writer.cost, { reported_usd: 0.0081, estimated_usd: null, unpriced_steps: 1, recorder_total_usd: 0.0163 });
  });
});
