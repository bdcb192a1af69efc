/**
 * Issue 28, defect 6: impossible times and durations from every recorder. A klieo step latency
 * of 1786183202140000000 (nanoseconds written as the latency) or a negative one, an Ask
 * recording made "in" year 275761, a Synalinks timestamp of 1e300 or a negative duration: each
 * is unknown (null) after one shared range check, and no command ends with `Invalid time value`.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { possibleDuration, possibleTime } from '../src/time.js';
import { FIXTURES, GOLDEN, runCli, runCliJson, tempDir } from './helpers.js';

/** Latencies (ms) no step can take, and times no Date can hold. */
const IMPOSSIBLE_LATENCIES = [1786183202140000000, -1, -1e308, 1e308];
const IMPOSSIBLE_TIMESTAMPS = [1786183202140000000, -1e300, 1e300, 8.64e12 + 1];
const IMPOSSIBLE_DURATIONS = [-1.5, -1e308, 1e308, 1786183202140000000];
/** Ask writes its time as text: Date.parse reads these, or reads them as no time. */
const IMPOSSIBLE_RECORDED_AT = ['+275761-01-01T00:00:00Z', '-271822-01-01T00:00:00Z', '2026-02-30T10:00:00Z', '99999999999999'];

let tree = '';
let klieoRuns = 0;
let askRecordings = 0;
let synalinksLines = 0;
before(() => {
  tree = path.join(tempDir('traces-impossible-times-'), 'tree');
  // klieo: a RunLog and a Capture (whose calls have their prompts, so they export), once per impossible latency, on the first step.
  const klieo = path.join(tree, 'klieo');
  mkdirSync(klieo, { recursive: true });
  for (const fixture of ['writer-completed.json', 'capture-support.json']) {
    const recorded = JSON.parse(readFileSync(path.join(FIXTURES, 'klieo', fixture), 'utf8')) as Record<string, unknown>;
    IMPOSSIBLE_LATENCIES.forEach((latency, i) => {
      const run = structuredClone(recorded);
      const log = (run.run_log ?? run) as { run_id: string; steps: Record<string, unknown>[] };
      log.run_id = `${log.run_id}${i}`;
      run.run_id = log.run_id;
      log.steps[0]!.latency = latency;
      // Each copy its own prompts, so no copy is dropped as a duplicate of another.
      for (const call of (run.llm_io ?? []) as { prompt: string }[]) call.prompt = `${call.prompt} (copy ${i})`;
      writeFileSync(path.join(klieo, `${i}-${fixture}`), JSON.stringify(run));
      klieoRuns++;
    });
  }
  // Ask: a recording once per impossible time.
  const askFixture = readFileSync(path.join(FIXTURES, 'ask', 'first-agent-1', 'recording.yml'), 'utf8');
  IMPOSSIBLE_RECORDED_AT.forEach((recordedAt, i) => {
    const folder = path.join(tree, 'ask', `agent-${i}`);
    mkdirSync(folder, { recursive: true });
    writeFileSync(path.join(folder, 'recording.yml'), askFixture.replace('"recorded_at": "2026-08-03T16:57:12Z"', () => `"recorded_at": ${JSON.stringify(recordedAt)}`));
    askRecordings++;
  });
  // Synalinks: the golden record with each impossible timestamp and duration.
  const folder = path.join(GOLDEN, 'my_program', 'first_generator');
  const golden = JSON.parse(readFileSync(path.join(folder, readdirSync(folder)[0]!), 'utf8').split('\n')[0]!) as Record<string, unknown>;
  const lines = [
    ...IMPOSSIBLE_TIMESTAMPS.map((timestamp, i) => JSON.stringify({ ...golden, call_id: `${String(golden.call_id).slice(0, -2)}a${i}`, timestamp })),
    ...IMPOSSIBLE_DURATIONS.map((duration, i) => JSON.stringify({ ...golden, call_id: `${String(golden.call_id).slice(0, -2)}b${i}`, duration })),
  ];
  synalinksLines = lines.length;
  const module = path.join(tree, 'my_program', 'first_generator');
  mkdirSync(module, { recursive: true });
  writeFileSync(path.join(module, 'first_generator_20260707-101530.jsonl'), `${lines.join('\n')}\n`);
});

describe('one range check for every source', () => {
  it('times no Date holds and durations that cannot be are unknown; possible ones are kept', () => {
    for (const t of [...IMPOSSIBLE_TIMESTAMPS, NaN, Infinity]) assert.equal(possibleTime(t), null, String(t));
    for (const d of [...IMPOSSIBLE_DURATIONS, NaN, -0.001]) assert.equal(possibleDuration(d), null, String(d));
    for (const t of [0, -1, 1783412130.25, 8.64e12, -8.64e12]) assert.equal(possibleTime(t), t);
    for (const d of [0, 1.5, 86400 * 365]) assert.equal(possibleDuration(d), d);
  });
});

describe('impossible times from every recorder', () => {
  it('the tree reads as records of all three recorders, none damaged', () => {
    const stats = runCliJson<{ records: number; damaged_lines: number }>(['stats', tree]);
    assert.equal(stats.damaged_lines, 0);
    assert.ok(stats.records >= klieoRuns + askRecordings + synalinksLines, String(stats.records));
  });

  for (const args of [['stats', '--json'], ['stats', '--by', 'model'], ['runs', '--json'], ['runs'], ['verify', '--json'], ['scan', '--json'], ['dedupe', '--dry-run', '--json'], ['filter', '--dry-run', '--json']]) {
    it(`${args.join(' ')}: no stack trace`, () => {
      const result = runCli([args[0]!, tree, ...args.slice(1)]);
      assert.ok(result.status === 0 || result.status === 1, `exit ${result.status}: ${result.stderr}`);
      assert.doesNotMatch(result.stderr, /\n\s+at |Invalid time value|RangeError/);
      if (args.includes('--json')) JSON.parse(result.stdout);
    });
  }

  for (const command of ['dedupe', 'filter']) {
    it(`${command} --out: every record is copied, rebuilt ones into files named by a possible time`, () => {
      const out = path.join(tempDir(), command);
      const result = runCli([command, tree, '--out', out, '--json']);
      assert.equal(result.status, 0, result.stderr);
      const names = readdirSync(out, { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.jsonl') && !name.startsWith('_traces'));
      assert.ok(names.length > 0);
      for (const name of names) assert.doesNotMatch(path.basename(name), /NaN|undefined|\+/, name);
    });
  }

  for (const format of ['openai', 'nemo', 'nemo-customizer', 'ask-recording']) {
    it(`export --format ${format}: no stack trace, and a recorded_at every recording can hold`, () => {
      const out = path.join(tempDir(), format);
      const result = runCli(['export', tree, '--format', format, '--out', out, '--trajectories', 'all', '--json']);
      assert.equal(result.status, 0, result.stderr);
      if (format !== 'ask-recording') return;
      const report = JSON.parse(result.stdout) as { files: { file: string }[] };
      assert.ok(report.files.length > 0);
      for (const { file } of report.files) {
        const recording = JSON.parse(readFileSync(path.join(out, file), 'utf8')) as { recorded_at: string };
        assert.match(recording.recorded_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/, file);
      }
    });
  }

  it('index, then sql to_timestamp(timestamp) over every row: impossible times and durations are null', () => {
    const work = tempDir();
    const index = path.join(work, 'index.parquet');
    const built = runCli(['index', tree, '--out', index]);
    assert.equal(built.status, 0, built.stderr);
    const rows = runCliJson<{ source: string; at: string | null; timestamp: number | null; duration: number | null }[]>([
      'sql',
      'SELECT source, CAST(to_timestamp(timestamp) AS VARCHAR) AS at, timestamp, duration FROM records ORDER BY source, line',
      '--index',
      index,
    ]);
    const bySource = (source: string) => rows.filter((r) => r.source === source);
    assert.deepEqual([bySource('klieo').length > 0, bySource('ask').length > 0, bySource('synalinks').length], [true, true, synalinksLines], JSON.stringify(rows.slice(0, 3)));
    for (const row of rows) {
      if (row.timestamp !== null) assert.ok(Math.abs(row.timestamp) <= 8.64e12 && row.at !== null, JSON.stringify(row));
      if (row.duration !== null) assert.ok(row.duration >= 0 && row.duration <= 8.64e12, JSON.stringify(row));
    }
    // The synalinks records with an impossible timestamp, and with an impossible duration, have none.
    assert.equal(bySource('synalinks').filter((r) => r.timestamp === null).length, IMPOSSIBLE_TIMESTAMPS.length);
    assert.equal(bySource('synalinks').filter((r) => r.duration === null).length, IMPOSSIBLE_DURATIONS.length);
    // The first step of every klieo run took an impossible time: its duration is unknown; the steps after it start at possible times.
    const klieo = bySource('klieo');
    assert.equal(klieo.filter((r) => r.duration === null).length, klieoRuns);
    assert.ok(klieo.every((r) => r.timestamp !== null));
  });
});

