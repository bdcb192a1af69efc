/**
 * OTLP log records joined to their spans: the official `@opentelemetry/instrumentation-openai`
 * and Elastic's OpenAI instrumentation write the messages as log events (gen_ai.system.message …
 * gen_ai.choice, a kvlist body) in ExportLogsServiceRequest lines beside the spans
 * (tools/otel-fixtures/generate.cjs --set 7). Each record is compared with what the fake server
 * logged (server-log-7.jsonl); the join is checked across files, folders, work shares and a
 * spilled index, against one pass over one file.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { canonicalValueText } from '../src/canonical/canonical.js';
import type { TraceRecord } from '../src/record.js';
import { FIXTURES, runCli, tempDir } from './helpers.js';
import { readOtlp } from './otlp-helpers.js';
import { finishClass, recordShape, serverLog, wireAnswer, wireFinish, wireInputs, wireUsage } from './otlp-wire.js';

const OTEL = path.join(FIXTURES, 'otel');
const LOG = serverLog(['server-log-7.jsonl']);
const EMITTERS = ['otel-openai', 'elastic-openai'];

function fixture(name: string): string {
  return path.join(OTEL, name);
}

function answered(emitter: string) {
  return LOG.filter((e) => e.emitter === emitter && e.status === 200);
}

function asWire(r: TraceRecord): string {
  const all = r.messages();
  return canonicalValueText([all.slice(0, -1).map(recordShape), recordShape(all[all.length - 1])]);
}

describe('OTLP log records joined to their spans (official and Elastic OpenAI instrumentations)', () => {
  for (const emitter of EMITTERS) {
    it(`${emitter}: the spans alone hold no message; with their log file every answered call holds what went over the wire`, async () => {
      const alone = await readOtlp(fixture(`${emitter}.jsonl`));
      assert.equal(alone.records.length, LOG.filter((e) => e.emitter === emitter).length);
      assert.ok(alone.records.every((r) => /^no_content: /.test(r.notExportable ?? '')));
      const { records, damaged } = await readOtlp([fixture(`${emitter}.jsonl`), fixture(`${emitter}-logs.jsonl`)]);
      assert.equal(damaged, 0);
      assert.equal(records.length, alone.records.length);
      const ok = records.filter((r) => r.status === 'ok');
      assert.equal(ok.length, answered(emitter).length);
      assert.deepEqual(ok.map(asWire).sort(), answered(emitter).map((e) => canonicalValueText([wireInputs(e), wireAnswer(e)])).sort());
      for (const r of ok) {
        const entry = answered(emitter).find((e) => canonicalValueText([wireInputs(e), wireAnswer(e)]) === asWire(r))!;
        assert.equal(finishClass(r.stopReason), wireFinish(entry), entry.scenario);
        assert.deepEqual(r.usage === null ? null : [r.usage.prompt_tokens, r.usage.completion_tokens], wireUsage(entry), entry.scenario);
        assert.equal(r.notExportable, null, entry.scenario);
      }
      // The parallel tool calls and the results answering them, by id.
      const loop = ok.find((r) => r.messages().some((m) => m.role === 'tool'))!;
      const ids = loop.messages().flatMap((m) => (m.tool_calls ?? []).map((c) => c.id));
      assert.deepEqual(ids, ['call_paris_0', 'call_oslo_1']);
      assert.deepEqual(loop.messages().filter((m) => m.role === 'tool').map((m) => m.tool_call_id), ids);
      const failed = records.filter((r) => r.status === 'exception');
      assert.equal(failed.length, 1);
      assert.equal(failed[0].model, 'gpt-fake-broken');
    });

    it(`${emitter}: content capture off writes log events without content: the records stay no_content`, async () => {
      const { records } = await readOtlp([fixture(`${emitter}-content-off.jsonl`), fixture(`${emitter}-content-off-logs.jsonl`)]);
      assert.equal(records.length, 1);
      assert.match(records[0].notExportable ?? '', /^no_content: /);
    });
  }

  it('a log file alone yields no record and no damaged line, and the message says what it holds', async () => {
    const { records, damaged } = await readOtlp(fixture('otel-openai-logs.jsonl'));
    assert.deepEqual([records.length, damaged], [0, 0]);
    const result = runCli(['stats', fixture('otel-openai-logs.jsonl')]);
    assert.match(result.stderr, /no span, only log records of 11 spans: they are read with their spans, so name the span files with it/);
  });

  it('logs beside the spans, in another folder, among the spans in one file, across work shares and a spilled index: the same stats and exports as one pass', () => {
    // About 600 KB of spans and logs: the set-7 lines copied with new ids and texts, so no two calls are one.
    const spans: string[] = [];
    const logs: string[] = [];
    for (let copy = 1; spans.join('\n').length + logs.join('\n').length < 600_000; copy++) {
      const hex = copy.toString(16).padStart(8, '0');
      const renamed = (line: string) =>
        line
          .replace(/"(traceId|spanId|parentSpanId)":"([0-9a-f]{8})([0-9a-f]+)"/g, (_m, key: string, _head: string, rest: string) => `"${key}":"${hex}${rest}"`)
          .replace(/(What is|Describe|Compare|Name|Tell me)/g, `$1 (#${copy})`);
      for (const emitter of EMITTERS) {
        spans.push(...lines(`${emitter}.jsonl`).map(renamed));
        logs.push(...lines(`${emitter}-logs.jsonl`).map(renamed));
      }
    }
    const dir = tempDir();
    const layouts: Record<string, string[]> = {
      beside: [path.join(dir, 'beside')],
      apart: [path.join(dir, 'apart', 'spans'), path.join(dir, 'apart', 'logs')],
      // The Collector writing both pipelines to one file: logs first, then spans, then logs again.
      among: [path.join(dir, 'among')],
    };
    write(path.join(dir, 'beside', 'spans.jsonl'), spans);
    write(path.join(dir, 'beside', 'logs.jsonl'), logs);
    write(path.join(dir, 'apart', 'spans', 'spans.jsonl'), spans);
    write(path.join(dir, 'apart', 'logs', 'logs.jsonl'), logs);
    const half = logs.length >> 1;
    write(path.join(dir, 'among', 'all.jsonl'), [...logs.slice(0, half), ...spans, ...logs.slice(half)]);
    const one = (roots: string[], env: NodeJS.ProcessEnv = { TRACES_WORKERS: '1' }) => {
      const stats = runCli(['stats', ...roots, '--json'], { env });
      assert.equal(stats.status, 0, stats.stderr);
      const out = path.join(tempDir(), 'export');
      const exported = runCli(['export', ...roots, '--format', 'openai', '--out', out, '--json'], { env });
      assert.equal(exported.status, 0, exported.stderr);
      const { files: _files, bytes: _bytes, ...figures } = JSON.parse(stats.stdout);
      return { figures, training: readFileSync(path.join(out, 'training.jsonl'), 'utf8') + readFileSync(path.join(out, 'validation.jsonl'), 'utf8') };
    };
    const base = one(layouts.beside);
    assert.ok(base.figures.records > 150, String(base.figures.records));
    assert.equal(base.figures.not_exportable?.no_content ?? 0, 0);
    const shares = { TRACES_WORKERS: '2', TRACES_SHARE_BYTES: '60000' };
    const runs: [string, NodeJS.ProcessEnv][] = [
      ['beside', shares],
      ['apart', shares],
      ['among', { TRACES_WORKERS: '1' }],
      // The index in sorted chunks of 64 entries, all but none in memory.
      ['among', { ...shares, TRACES_LOG_INDEX_CHUNK: '64' }],
    ];
    for (const [name, env] of runs) {
      const got = one(layouts[name], env);
      assert.deepEqual(got.figures, base.figures, `${name} ${JSON.stringify(env)}`);
      assert.equal(got.training, base.training, `${name} ${JSON.stringify(env)}`);
    }
  });
});

function lines(name: string): string[] {
  return readFileSync(fixture(name), 'utf8')
    .split('\n')
    .filter((l) => l !== '');
}

function write(file: string, content: string[]): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, content.join('\n') + '\n');
}
