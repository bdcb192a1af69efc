/**
 * OTLP spans as a source, on span files the real instrumentations wrote
 * (tools/otel-fixtures/generate.cjs): each record is compared with what the fake
 * OpenAI-compatible server logged it received and sent.
 */
import assert from 'node:assert/strict';
import { appendFileSync, copyFileSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { canonicalValueText } from '../src/canonical/canonical.js';
import type { Message, TraceRecord } from '../src/record.js';
import { discover } from '../src/sources/discover.js';
import { spanPlaces } from '../src/sources/otlp/span-places.js';
import { readFiles } from '../src/sources/read.js';
import { chatRows, metaRows, rowText } from '../src/ui/chat-lines.js';
import { IndexStore } from '../src/ui/index-store.js';
import { GITHUB_TOKEN } from './fake-secrets.js';
import { FIXTURES, runCli, runCliJson, seededRandom, tempDir } from './helpers.js';
import { readOtlp } from './otlp-helpers.js';

const OTEL = path.join(FIXTURES, 'otel');

interface LogEntry {
  emitter: string;
  scenario: string;
  status: number;
  request: { model: string; messages: Record<string, unknown>[]; stream?: boolean; temperature?: number; tools?: unknown[] };
  response: Record<string, unknown>;
}

const LOG: LogEntry[] = readFileSync(path.join(OTEL, 'server-log.jsonl'), 'utf8')
  .split('\n')
  .filter((l) => l !== '')
  .map((l) => JSON.parse(l));

function read(file: string): ReturnType<typeof readOtlp> {
  return readOtlp(path.join(OTEL, file));
}

/** A JSON text that parses is compared as its value: instrumentations keep tool results and arguments as text or as values. */
function valueOf(v: unknown): unknown {
  if (typeof v === 'string') {
    try {
      const parsed = JSON.parse(v);
      if (parsed !== null && typeof parsed === 'object') return parsed;
    } catch {
      // plain text
    }
    return v;
  }
  return v ?? '';
}

/** What both sides must agree on: role, text, tool calls (id, name, arguments), tool_call_id. */
function shape(m: Record<string, unknown>): string {
  const calls = Array.isArray(m.tool_calls)
    ? (m.tool_calls as { id?: string; function: { name: string; arguments: unknown } }[]).map((c) => [c.id ?? null, c.function.name, valueOf(c.function.arguments)])
    : [];
  const content = m.content === null ? '' : m.content;
  return canonicalValueText([m.role, valueOf(content), calls, m.tool_call_id ?? null]);
}

/** The server's answer to a logged request, as a message. */
function answerOf(entry: LogEntry): Record<string, unknown> {
  const r = entry.response as { choices?: { message: Record<string, unknown> }[]; message?: Record<string, unknown> };
  return r.choices !== undefined ? r.choices[0].message : r.message!;
}

function usageOf(entry: LogEntry): { prompt_tokens: number; completion_tokens: number } | null {
  return (entry.response.usage as { prompt_tokens: number; completion_tokens: number } | null) ?? null;
}

/** Each call as (inputs, answer) in one comparable text, sorted: the server's view and the records'. */
function serverCalls(emitter: string): string[] {
  return LOG.filter((e) => e.emitter === emitter && e.status === 200)
    .map((e) => canonicalValueText([e.request.messages.map(shape), shape(answerOf(e))]))
    .sort();
}

function recordCalls(records: readonly TraceRecord[]): string[] {
  return records
    .filter((r) => r.status === 'ok')
    .map((r) => {
      const all = r.messages() as unknown as Record<string, unknown>[];
      return canonicalValueText([all.slice(0, -1).map(shape), shape(all[all.length - 1])]);
    })
    .sort();
}

const WITH_CONTENT = ['openinference', 'openllmetry', 'double-instrumented', 'ai-sdk-genai', 'ai-sdk-legacy'];
/**
 * Set 1's six, set 2's five, set 3's two, sets 4's and 5's one each (test/sources-otlp-emitters.test.ts reads sets 2 to 5 against their own server logs),
 * set 7's two span files (their logs apart), sets 8's and 9's one each (Langfuse, set 6, has no such switch).
 */
const CONTENT_OFF_FILES = 19;

describe('OTLP spans from real instrumentations, against the fake server log', () => {
  for (const emitter of WITH_CONTENT) {
    it(`${emitter}: every answered call is one record holding what went over the wire`, async () => {
      const { records, damaged } = await read(`${emitter}.jsonl`);
      assert.equal(damaged, 0);
      assert.deepEqual(recordCalls(records), serverCalls(emitter));
      // Call ids are trace:span, unique; parents point into the same trace.
      const ids = records.map((r) => r.callId);
      assert.equal(new Set(ids).size, ids.length);
      for (const r of records) {
        assert.match(r.callId, /^[0-9a-f]{32}:[0-9a-f]{16}$/);
        if (r.parentCallId !== null) assert.equal(r.parentCallId.split(':')[0], r.callId.split(':')[0]);
        assert.equal(r.source, 'otlp');
        assert.equal(r.model, r.status === 'exception' ? 'gpt-fake-broken' : 'gpt-fake-1');
      }
    });
  }

  it('openllmetry-0.22 (gen_ai.prompt.<i>.*): texts as served; tool-call ids and the assistant tool-call turn are lost, so that step is partial and never exported', async () => {
    const { records } = await read('openllmetry-0.22.jsonl');
    const texts = (messages: Record<string, unknown>[]) => messages.map((m) => [m.role, m.role === 'assistant' && Array.isArray(m.tool_calls) ? '' : valueOf(m.content ?? '')]);
    const served = LOG.filter((e) => e.emitter === 'openllmetry-0.22' && e.status === 200)
      .map((e) => canonicalValueText([texts(e.request.messages), texts([answerOf(e)])]))
      .sort();
    const got = records
      .map((r) => {
        const all = r.messages() as unknown as Record<string, unknown>[];
        return canonicalValueText([texts(all.slice(0, -1)), texts(all.slice(-1))]);
      })
      .sort();
    assert.deepEqual(got, served);
    const answer = records.find((r) => r.completion()?.tool_calls !== undefined)!;
    assert.deepEqual(answer.completion()!.tool_calls!.map((c) => [c.id, c.function.name, c.function.arguments]), [
      [undefined, 'get_weather', { city: 'Paris' }],
      [undefined, 'get_weather', { city: 'Oslo' }],
    ]);
    const afterTools = records.filter((r) => r.messages().some((m) => m.role === 'tool'));
    assert.equal(afterTools.length, 1);
    assert.equal(afterTools[0].partial, true);
    assert.ok(afterTools[0].messages().every((m) => m.tool_calls === undefined));
  });

  it('usage and finish reasons are the server\'s; the cut answer stops at length and the truncated stage sees it', async () => {
    for (const emitter of WITH_CONTENT) {
      const { records } = await read(`${emitter}.jsonl`);
      const served = LOG.filter((e) => e.emitter === emitter && e.status === 200);
      for (const r of records.filter((x) => x.status === 'ok')) {
        const text = JSON.stringify(valueOf(r.completion()!.content));
        const entry = served.find((e) => JSON.stringify(valueOf(answerOf(e).content ?? '')) === text && shape(answerOf(e)) === shape(r.completion() as unknown as Record<string, unknown>));
        assert.ok(entry !== undefined, `${emitter}: ${text}`);
        const usage = usageOf(entry);
        // Both openai-client instrumentations lose a stream's usage though the server sent it in the last chunk.
        if (r.usage === null) assert.ok(entry.request.stream === true && ['openinference', 'openllmetry', 'double-instrumented'].includes(emitter), `${emitter}: usage lost`);
        else if (usage !== null) assert.deepEqual([r.usage.prompt_tokens, r.usage.completion_tokens], [usage.prompt_tokens, usage.completion_tokens]);
      }
      const cut = records.filter((r) => r.stopReason === 'length');
      assert.equal(cut.length, 1, emitter);
      assert.match(cut[0].completion()!.content as string, /^Answer to "Tell me everything about$/);
    }
  });

  it('an errored call is an exception record where the instrumentation kept a span of it (the AI SDK); the openai-client instrumentations kept none', async () => {
    for (const emitter of ['ai-sdk-genai', 'ai-sdk-legacy']) {
      const { records } = await read(`${emitter}.jsonl`);
      const failed = records.filter((r) => r.status === 'exception');
      assert.equal(failed.length, 1, emitter);
      assert.match(failed[0].exception!, /does not exist/);
      assert.equal(failed[0].model, 'gpt-fake-broken');
    }
    for (const emitter of ['openinference', 'openllmetry']) {
      assert.equal(LOG.filter((e) => e.emitter === emitter && e.status === 400).length, 1);
      const { records } = await read(`${emitter}.jsonl`);
      assert.equal(records.filter((r) => r.status !== 'ok').length, 0);
    }
  });

  it('the tool loop: parallel calls and their results, both steps under the agent span, one run', async () => {
    const { records } = await read('openinference.jsonl');
    const steps = records.filter((r) => r.messages().some((m) => m.role === 'tool' || (m.tool_calls?.length ?? 0) > 0));
    assert.equal(steps.length, 2);
    assert.equal(steps[0].parentCallId, steps[1].parentCallId);
    const first = steps[0].completion()!;
    assert.deepEqual(first.tool_calls!.map((c) => [c.id, c.function.name, c.function.arguments]), [
      ['call_paris_0', 'get_weather', { city: 'Paris' }],
      ['call_oslo_1', 'get_weather', { city: 'Oslo' }],
    ]);
    const tools = steps[1].messages().filter((m: Message) => m.role === 'tool');
    assert.deepEqual(tools.map((m) => m.tool_call_id), ['call_paris_0', 'call_oslo_1']);
    // runs chains them as it chains Synalinks steps: the second step's input holds the first's conversation.
    const runs = runCliJson<{ steps: number; calls: { line: number }[] }[]>(['runs', path.join(OTEL, 'openinference.jsonl')]);
    const loop = runs.find((r) => r.calls.some((c) => c.line === steps[0].ref.line))!;
    assert.deepEqual(loop.calls.map((c) => c.line), steps.map((s) => s.ref.line));
  });

  /** The lines of an export's training and validation files (hf: jsonl, its tools as JSON text), as objects. */
  const exportedLines = (out: string, format: string): Record<string, unknown>[] => {
    const dir = format === 'hf' ? path.join(out, 'data') : out;
    return readdirSync(dir)
      .filter((f) => f.endsWith('.jsonl'))
      .flatMap((f) => readFileSync(path.join(dir, f), 'utf8').split('\n').filter((l) => l !== ''))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .map((row) => (typeof row.tools === 'string' ? { ...row, tools: JSON.parse(row.tools) } : row));
  };
  const callsTools = (row: Record<string, unknown>): boolean =>
    (row.messages as Record<string, unknown>[]).some((m) => m.role === 'tool' || (Array.isArray(m.tool_calls) && m.tool_calls.length > 0));

  // Every emitter that keeps content records the tools offered (llm.tools, gen_ai.tool.definitions,
  // llm.request.functions, ai.prompt.tools); the length-limit spans are cut_value, never exported.
  for (const emitter of [...WITH_CONTENT, 'openllmetry-0.22']) {
    it(`${emitter}: exports write the tool definitions the span recorded, as the client sent them, not inferred ones`, () => {
      const sent = LOG.filter((e) => e.emitter === emitter && e.scenario === 'tools').map((e) => canonicalValueText(e.request.tools));
      assert.equal(new Set(sent).size, 1, 'both steps of the tool loop offered the same tools');
      for (const format of ['openai', 'nemo', 'hf', 'nemo-customizer']) {
        const out = path.join(tempDir(), 'export');
        const report = runCliJson<{ tools: { recorded: string[]; recorded_examples: number; inferred: string[] } }>(
          ['export', path.join(OTEL, `${emitter}.jsonl`), '--format', format, '--out', out, '--trajectories', 'all', ...(format === 'hf' ? ['--file-format', 'jsonl'] : [])],
        );
        const tooled = exportedLines(out, format).filter(callsTools);
        assert.ok(tooled.length > 0, `${emitter} ${format}: a tool-calling example`);
        for (const row of tooled) assert.equal(canonicalValueText(row.tools), sent[0], `${emitter} ${format}`);
        assert.deepEqual([report.tools.recorded, report.tools.recorded_examples], [['get_weather'], tooled.length], `${emitter} ${format}`);
        // NeMo Customizer puts the run's list on every line: a plain answer's record offered no tools, so it carries the inferred one.
        if (format !== 'nemo-customizer') assert.deepEqual(report.tools.inferred, [], `${emitter} ${format}`);
      }
    });
  }

  it('recorded tool definitions come before --tools, and are scrubbed as the messages are', () => {
    const dir = tempDir();
    const file = path.join(dir, 'spans.jsonl');
    // The recorded description holding a token, as a careless tool author might have written it.
    writeFileSync(file, readFileSync(path.join(OTEL, 'openinference.jsonl'), 'utf8').replaceAll('Current weather of a city', `Current weather of a city (key ${GITHUB_TOKEN})`));
    const toolsFile = path.join(dir, 'tools.json');
    writeFileSync(toolsFile, JSON.stringify([{ type: 'function', function: { name: 'get_weather', description: 'From the file.' } }, { type: 'function', function: { name: 'other', description: 'Not offered to the call.' } }]));
    const out = path.join(dir, 'export');
    const report = runCliJson<{ tools: { supplied: string[]; recorded: string[] }; scrub: { redactions: Record<string, number> } }>(['export', file, '--format', 'openai', '--out', out, '--tools', toolsFile]);
    const tooled = exportedLines(out, 'openai').filter(callsTools);
    assert.equal(tooled.length, 1);
    const tools = tooled[0].tools as { function: { name: string; description: string } }[];
    assert.deepEqual(tools.map((t) => [t.function.name, t.function.description]), [['get_weather', 'Current weather of a city (key [REDACTED:github])']]);
    assert.ok(!readFileSync(path.join(out, 'training.jsonl'), 'utf8').includes(GITHUB_TOKEN) && !readFileSync(path.join(out, 'validation.jsonl'), 'utf8').includes(GITHUB_TOKEN));
    assert.deepEqual(report.tools.recorded, ['get_weather']);
    assert.ok((report.scrub.redactions.github ?? 0) > 0, JSON.stringify(report.scrub));
  });

  it('one call instrumented twice (OpenLLMetry around OpenInference) is one record; the second span is counted', async () => {
    const { records, skipped } = await read('double-instrumented.jsonl');
    const answered = LOG.filter((e) => e.emitter === 'double-instrumented' && e.status === 200).length;
    assert.equal(records.length, answered);
    // OpenInference could not wrap the stream OpenLLMetry had wrapped first: one span fewer.
    assert.equal(skipped.double_instrumented, answered - 1);
  });

  it('one call instrumented twice whose two spans went out in two export batches (two lines) is one record, however the file is cut into shares', async () => {
    // The genuine spans regrouped as a batch span processor exports them: in order of their end, five per request (so pairs are split both ways).
    type Span = { spanId: string; parentSpanId?: string; endTimeUnixNano: string };
    type Request = { resourceSpans: { resource: unknown; scopeSpans: { scope: unknown; spans: Span[] }[] }[] };
    const [first, ...rest] = readFileSync(path.join(OTEL, 'double-instrumented.jsonl'), 'utf8').split('\n').filter((l) => l !== '');
    const request = JSON.parse(first) as Request;
    const resource = request.resourceSpans[0].resource;
    const ended = request.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans.map((span) => ({ scope: ss.scope, span }))));
    ended.sort((a, b) => (BigInt(a.span.endTimeUnixNano) < BigInt(b.span.endTimeUnixNano) ? -1 : 1));
    const batches: Request[] = [];
    for (let i = 0; i < ended.length; i += 5) {
      const scopes = new Map<unknown, Span[]>();
      for (const { scope, span } of ended.slice(i, i + 5)) scopes.set(scope, [...(scopes.get(scope) ?? []), span]);
      batches.push({ resourceSpans: [{ resource, scopeSpans: [...scopes].map(([scope, spans]) => ({ scope, spans })) }] });
    }
    // Pairs split both ways: a parent in the line before its child, and a child in the line before its parent.
    const lineOf = new Map(batches.flatMap((b, n) => b.resourceSpans[0].scopeSpans.flatMap((ss) => ss.spans.map((span) => [span.spanId, n] as const))));
    const split = ended.filter(({ span }) => span.parentSpanId !== undefined && lineOf.has(span.parentSpanId) && lineOf.get(span.parentSpanId) !== lineOf.get(span.spanId));
    assert.ok(split.some(({ span }) => lineOf.get(span.parentSpanId!)! < lineOf.get(span.spanId)!), 'a parent in an earlier line');
    assert.ok(split.some(({ span }) => lineOf.get(span.parentSpanId!)! > lineOf.get(span.spanId)!), 'a child in an earlier line');
    const dir = tempDir();
    const file = path.join(dir, 'batches.jsonl');
    writeFileSync(file, [...batches.map((b) => JSON.stringify(b)), ...rest].join('\n') + '\n');
    const discovery = await discover([file]);
    const records: TraceRecord[] = [];
    const skipped: Record<string, number> = {};
    for await (const batch of readFiles(discovery.files)) {
      records.push(...batch.records);
      for (const [k, n] of Object.entries(batch.skippedCalls ?? {})) skipped[k] = (skipped[k] ?? 0) + n;
    }
    const whole = await read('double-instrumented.jsonl');
    assert.equal(records.length, whole.records.length);
    assert.deepEqual(skipped, whole.skipped);
    assert.deepEqual(recordCalls(records), serverCalls('double-instrumented'));
    // Every line a share of its own: each share looks back at the line before it, and finds what one reader finds.
    const run = (env: Record<string, string>, args: string[]) => runCli(args, { env });
    const one = JSON.parse(run({ TRACES_WORKERS: '1' }, ['stats', file, '--json']).stdout);
    const shares = { TRACES_WORKERS: '2', TRACES_SHARE_BYTES: '1000' };
    assert.deepEqual(JSON.parse(run(shares, ['stats', file, '--json']).stdout), one);
    assert.equal(one.records, whole.records.length);
    for (const [env, out] of [[{ TRACES_WORKERS: '1' }, 'one'], [shares, 'two']] as const) {
      const result = run(env, ['export', file, '--format', 'openai', '--out', path.join(dir, out), '--json']);
      assert.equal(result.status, 0, result.stderr);
    }
    for (const name of ['training.jsonl', 'validation.jsonl', path.join('_traces', 'manifest.jsonl')]) {
      assert.equal(readFileSync(path.join(dir, 'two', name), 'utf8'), readFileSync(path.join(dir, 'one', name), 'utf8'), name);
    }
  });

  it('content capture off: each span is a no_content record, counted by stats, never exported', async () => {
    const files = readdirSync(OTEL).filter((f) => f.endsWith('-content-off.jsonl'));
    assert.equal(files.length, CONTENT_OFF_FILES);
    let total = 0;
    for (const file of files) {
      const { records } = await read(file);
      // One call each; two records where two instrumentations made sibling spans of it (set 4).
      assert.equal(records.length, file.startsWith('openllmetry-langchain-openai') ? 2 : 1, file);
      for (const record of records) {
        assert.match(record.notExportable ?? '', /^no_content: /);
        assert.deepEqual(record.messages(), []);
      }
      total += records.length;
    }
    const dir = tempDir();
    for (const file of files) copyFileSync(path.join(OTEL, file), path.join(dir, file));
    const stats = runCliJson<{ records: number; not_exportable: Record<string, number> }>(['stats', dir]);
    assert.deepEqual([stats.records, stats.not_exportable], [total, { no_content: total }]);
    // Even with every status let through, nothing is written: a trainer refuses an empty file.
    const result = runCli(['export', dir, '--format', 'openai', '--out', path.join(tempDir(), 'export'), '--status', 'ok,exception,no_output']);
    assert.equal(result.status, 1);
    assert.match(result.stderr, new RegExp(`all ${total} records read were dropped \\(not_exportable ${total}\\)`));
  });

  it('values the SDK cut at its attribute length limit are flagged (cut_value), never exported as whole', async () => {
    const { records } = await read('openllmetry-length-limit.jsonl');
    assert.equal(records.length, LOG.filter((e) => e.emitter === 'openllmetry-length-limit' && e.status === 200).length);
    assert.ok(records.every((r) => r.cutValue !== null && /ends early/.test(r.cutValue!)));
    assert.ok(records.every((r) => (r.notExportable ?? '').startsWith('cut_value: ')));
  });

  it('a pretty-printed request document, or a list of requests, reads as its lines do', async () => {
    const lines = await read('ai-sdk-genai.jsonl');
    const doc = await read('ai-sdk-genai-request.json');
    assert.deepEqual(doc.records.map((r) => r.callId), lines.records.map((r) => r.callId));
    assert.deepEqual(doc.records.map((r) => r.inputsHash), lines.records.map((r) => r.inputsHash));
    // A list of requests, pretty-printed, as some tools save them.
    const list = path.join(tempDir(), 'requests.json');
    const requests = readFileSync(path.join(OTEL, 'ai-sdk-genai.jsonl'), 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l));
    writeFileSync(list, JSON.stringify(requests, null, 2));
    const discovery = await discover([list]);
    const fromList: TraceRecord[] = [];
    for await (const batch of readFiles(discovery.files)) fromList.push(...batch.records);
    assert.deepEqual(fromList.map((r) => r.callId), lines.records.map((r) => r.callId));
  });

  it('the same call through different dialects has the same inputs hash, and the same config hash where the parameters were kept', async () => {
    const hashes = async (file: string) => {
      const { records } = await read(file);
      const france = records.find((r) => r.status === 'ok' && JSON.stringify(r.messages()).includes('capital of France'))!;
      // The tool loop's second step: tool calls and tool results, kept as values by some and as text by others.
      const summary = records.find((r) => r.status === 'ok' && (r.completion()!.content as string).startsWith('Summary of 2 reports'))!;
      return [france.inputsHash, france.configHash, summary.inputsHash];
    };
    const openinference = await hashes('openinference.jsonl');
    assert.deepEqual(await hashes('ai-sdk-genai.jsonl'), openinference);
    assert.deepEqual(await hashes('ai-sdk-legacy.jsonl'), openinference);
    // OpenLLMetry leaves out gen_ai.request.temperature when it is 0 (the request sent temperature 0): the config differs.
    const openllmetry = await hashes('openllmetry.jsonl');
    assert.equal(openllmetry[0], openinference[0]);
    assert.equal(openllmetry[2], openinference[2]);
    assert.notEqual(openllmetry[1], openinference[1]);
    assert.equal(LOG.find((e) => e.emitter === 'openllmetry' && e.scenario === 'plain')!.request.temperature, 0);
  });

  it('MLflow spans shaped as Synalinks\' Monitor hook writes them (synalinks/src/hooks/monitor.py; no emitter of it runs here): chat model calls are records with their Synalinks call ids', async () => {
    const json = (v: unknown) => ({ stringValue: JSON.stringify(v) });
    const attr = (key: string, value: unknown) => ({ key, value: json(value) });
    const span = (id: string, parent: string | null, type: string, attributes: object[], extra: object = {}) => ({
      traceId: 'a'.repeat(32),
      spanId: id.repeat(16).slice(0, 16),
      ...(parent !== null ? { parentSpanId: parent.repeat(16).slice(0, 16) } : {}),
      name: type === 'CHAT_MODEL' ? 'LanguageModel:lm' : 'Program:agent',
      startTimeUnixNano: '1767225600000000000',
      endTimeUnixNano: '1767225601500000000',
      attributes: [attr('mlflow.spanType', type), ...attributes],
      ...extra,
    });
    const messages = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Capital of France?' },
    ];
    const request = {
      resourceSpans: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'synalinks-app' } }] },
          scopeSpans: [
            {
              spans: [
                span('1', null, 'CHAIN', [attr('synalinks.call_id', 'c0'), attr('mlflow.spanInputs', { data: [] })]),
                span('2', '1', 'CHAT_MODEL', [
                  attr('synalinks.call_id', '7b0e4a52-0000-4000-8000-000000000001'),
                  attr('synalinks.parent_call_id', 'c0'),
                  attr('mlflow.llm.model', 'openai/gpt-4o-mini'),
                  attr('mlflow.llm.provider', 'openai'),
                  attr('mlflow.message.format', 'openai'),
                  attr('mlflow.spanInputs', { messages, data: [{ messages }] }),
                  attr('mlflow.spanOutputs', { choices: [{ index: 0, message: { role: 'assistant', content: 'Paris.' }, finish_reason: 'stop' }], data: [{ role: 'assistant', content: 'Paris.' }] }),
                  attr('mlflow.chat.tokenUsage', { input_tokens: 12, output_tokens: 2, total_tokens: 14 }),
                  attr('mlflow.llm.cost', { total_cost: 0.000021 }),
                ]),
                span('3', '1', 'CHAT_MODEL', [attr('synalinks.call_id', '7b0e4a52-0000-4000-8000-000000000002'), attr('mlflow.llm.model', 'openai/gpt-4o-mini'), attr('mlflow.spanInputs', { messages, data: [] }), attr('mlflow.spanOutputs', { data: [] })], {
                  status: { code: 2, message: 'RateLimitError' },
                  events: [{ name: 'exception', attributes: [{ key: 'exception.type', value: { stringValue: 'RateLimitError' } }, { key: 'exception.message', value: { stringValue: 'slow down' } }] }],
                }),
              ],
            },
          ],
        },
      ],
    };
    const dir = tempDir();
    const file = path.join(dir, 'mlflow.json');
    writeFileSync(file, JSON.stringify(request));
    const discovery = await discover([file]);
    const records: TraceRecord[] = [];
    for await (const batch of readFiles(discovery.files)) records.push(...batch.records);
    assert.deepEqual(records.map((r) => [r.callId, r.parentCallId, r.status, r.model, r.cost]), [
      ['7b0e4a52-0000-4000-8000-000000000001', 'c0', 'ok', 'openai/gpt-4o-mini', 0.000021],
      ['7b0e4a52-0000-4000-8000-000000000002', null, 'exception', 'openai/gpt-4o-mini', null],
    ]);
    assert.deepEqual(records[0].messages(), [...messages, { role: 'assistant', content: 'Paris.' }]);
    assert.deepEqual([records[0].usage?.prompt_tokens, records[0].usage?.completion_tokens, records[0].stopReason], [12, 2, 'stop']);
    assert.equal(records[1].exception, 'RateLimitError: slow down');
  });

  it('the older GenAI message events (gen_ai.*.message, gen_ai.choice) are read when the span has no message attributes; with both, the attributes win and the events fill what they lack', async () => {
    // Shaped as the semantic conventions' event bodies (opentelemetry-js-contrib instrumentation-openai's GenAI*EventBody);
    // no emitter here writes them as span events, so the spans are built.
    const event = (name: string, body: object) => ({ name, timeUnixNano: '1767225600000000000', attributes: [{ key: 'gen_ai.event.content', value: { stringValue: JSON.stringify(body) } }] });
    const base = { traceId: 'b'.repeat(32), name: 'chat gpt-fake-1', startTimeUnixNano: '1767225600000000000', endTimeUnixNano: '1767225601000000000' };
    const model = { key: 'gen_ai.request.model', value: { stringValue: 'gpt-fake-1' } };
    const events = [
      event('gen_ai.system.message', { content: 'Be brief.' }),
      event('gen_ai.user.message', { content: 'Weather in Oslo?' }),
      event('gen_ai.choice', { index: 0, finish_reason: 'tool_calls', message: { tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] } }),
    ];
    const attributes = [
      model,
      { key: 'gen_ai.input.messages', value: { stringValue: JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: 'From the attributes' }] }]) } },
    ];
    // The older content events: a JSON list of messages (Semantic Kernel) or the plain text (Spring AI).
    const older = [
      { name: 'gen_ai.content.prompt', attributes: [{ key: 'gen_ai.prompt', value: { stringValue: 'Tell me a joke' } }] },
      { name: 'gen_ai.content.completion', attributes: [{ key: 'gen_ai.completion', value: { stringValue: '[{"role":"assistant","content":"Knock knock."}]' } }] },
    ];
    const request = {
      resourceSpans: [
        {
          scopeSpans: [
            {
              spans: [
                { ...base, spanId: '1'.repeat(16), attributes: [model], events },
                { ...base, spanId: '2'.repeat(16), attributes, events },
                { ...base, spanId: '3'.repeat(16), attributes: [model], events: older },
              ],
            },
          ],
        },
      ],
    };
    const file = path.join(tempDir(), 'events.jsonl');
    writeFileSync(file, JSON.stringify(request) + '\n');
    const records: TraceRecord[] = [];
    for await (const batch of readFiles((await discover([file])).files)) records.push(...batch.records);
    assert.deepEqual(records[0].messages(), [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Weather in Oslo?' },
      { role: 'assistant', content: '', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: { city: 'Oslo' } } }] },
    ]);
    assert.equal(records[0].stopReason, 'tool_calls');
    // The input from the attributes; the answer, which no attribute holds, from the choice event.
    assert.deepEqual(records[1].messages(), [{ role: 'user', content: 'From the attributes' }, records[0].messages()[2]]);
    assert.deepEqual(records[2].messages(), [
      { role: 'user', content: 'Tell me a joke' },
      { role: 'assistant', content: 'Knock knock.' },
    ]);
  });

  it('a damaged line is reported with its line number and the other lines are read', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'spans.jsonl');
    copyFileSync(path.join(OTEL, 'openllmetry.jsonl'), file);
    appendFileSync(file, '{"resourceSpans": [\n[1, 2]\n');
    const stats = runCliJson<{ records: number; damaged_lines: number; damaged: { line: number }[] }>(['stats', file]);
    const lines = readFileSync(path.join(OTEL, 'openllmetry.jsonl'), 'utf8').split('\n').length - 1;
    assert.equal(stats.records, (await read('openllmetry.jsonl')).records.length);
    assert.deepEqual(stats.damaged.map((d) => d.line), [lines + 1, lines + 2]);
  });

  it('browse lists the span records and shows the tool loop\'s calls and results', async () => {
    const { records } = await read('openinference.jsonl');
    const store = await IndexStore.open([path.join(OTEL, 'openinference.jsonl')], { otherSources: true });
    try {
      await store.whenDone();
      assert.equal(store.count, records.length);
      const rows: string[] = [];
      for (let i = 0; i < store.count; i++) {
        const record = store.record(i);
        if (record !== null) rows.push(...chatRows(record, { width: 120, isOpen: () => false }).map(rowText));
        // The record's fields: a span records no Synalinks version, so none is shown.
        const meta = metaRows(record, store.info(i), { groupSize: 1, marked: false }, 120).map(rowText);
        assert.ok(meta.some((r) => r.startsWith('model ')) && !meta.some((r) => r.startsWith('synalinks')), meta.join('\n'));
      }
      assert.ok(rows.some((r) => r.startsWith('▍tool') && r.includes('call_paris_0')), rows.join('\n'));
      assert.ok(rows.some((r) => r.includes('Summary of 2 reports')));
    } finally {
      store.close();
    }
  });

  it('browse keeps the span records on disk, not in memory: each re-read record is the one read, and nothing is left after', async () => {
    const names = readdirSync(OTEL).filter((f) => /\.jsonl?$/.test(f) && !f.startsWith('server-log') && f !== 'versions.json');
    // Read as one input set, as the store reads the folder: log files join the spans of the others.
    const expected: TraceRecord[] = (await readOtlp(names.map((name) => path.join(OTEL, name)))).records;
    const reported: number[] = [];
    const store = await IndexStore.open([OTEL], { otherSources: true, onOtherFilesProgress: (bytesRead) => reported.push(bytesRead) });
    try {
      await store.whenDone();
      assert.ok(store.count >= expected.length);
      const byPlace = new Map(expected.map((r) => [`${r.ref.file}:${r.ref.line}`, r.raw.toString('utf8')]));
      let compared = 0;
      for (let i = 0; i < store.count; i++) {
        const info = store.info(i);
        if (info.status === 'damaged') continue;
        assert.ok(info.otherRecorder);
        const record = store.record(i, false);
        assert.equal(record?.raw.toString('utf8'), byPlace.get(`${info.file.display}:${info.line}`), `${info.file.display}:${info.line}`);
        compared++;
      }
      assert.equal(compared, expected.length);
      // The header's size counts the span files, read whole before the index starts.
      const bytes = names.reduce((sum, name) => sum + statSync(path.join(OTEL, name)).size, 0);
      assert.equal(store.progress.bytesTotal, bytes);
      assert.equal(reported[reported.length - 1], bytes);
    } finally {
      store.close();
    }
    // This process's spill folders hold no records file any more (tests in one file run one at a time).
    const ours = readdirSync(tmpdir()).filter((f) => f.startsWith(`traces-spill-${process.pid}-`));
    for (const folder of ours) if (existsSync(path.join(tmpdir(), folder))) assert.deepEqual(readdirSync(path.join(tmpdir(), folder)).filter((f) => f.startsWith('tmp-')), []);
  });

  it('a span file cut into work shares reads as it does whole: the same records, numbers and exports with one thread and with two', () => {
    // About 4 MB, cut into shares of 300 KB (TRACES_SHARE_BYTES), mid-line included.
    const lines = readdirSync(OTEL)
      .filter((f) => f.endsWith('.jsonl') && f !== 'server-log.jsonl')
      .flatMap((f) => readFileSync(path.join(OTEL, f), 'utf8').split('\n'))
      .filter((l) => l.includes('resourceSpans'));
    const file = path.join(tempDir(), 'spans.jsonl');
    const out: string[] = [];
    let bytes = 0;
    for (let copy = 1; bytes < 4 << 20; copy++) {
      const hex = copy.toString(16).padStart(8, '0');
      for (const line of lines) {
        const renamed = line
          .replace(/"(traceId|spanId|parentSpanId)":"([0-9a-f]{8})([0-9a-f]+)"/g, (_m, key: string, head: string, rest: string) => `"${key}":"${hex}${rest}"`)
          .replace(/(What is|Describe|Compare|Name|Tell me)/g, `$1 (#${copy % 50})`);
        out.push(renamed);
        bytes += renamed.length + 1;
      }
    }
    writeFileSync(file, out.join('\n') + '\n');
    const run = (workers: string, args: string[]) => runCli(args, { env: workers === '1' ? { TRACES_WORKERS: '1' } : { TRACES_WORKERS: workers, TRACES_SHARE_BYTES: '300000' } });
    const one = JSON.parse(run('1', ['stats', file, '--json']).stdout);
    const two = JSON.parse(run('2', ['stats', file, '--json']).stdout);
    assert.ok(one.records > 1000);
    assert.deepEqual(two, one);
    for (const [workers, dir] of [['1', 'one'], ['2', 'two']]) {
      const result = run(workers, ['export', file, '--format', 'openai', '--out', path.join(path.dirname(file), dir), '--json']);
      assert.equal(result.status, 0, result.stderr);
    }
    for (const name of ['training.jsonl', 'validation.jsonl', path.join('_traces', 'manifest.jsonl')]) {
      assert.equal(readFileSync(path.join(path.dirname(file), 'two', name), 'utf8'), readFileSync(path.join(path.dirname(file), 'one', name), 'utf8'), name);
    }
    assert.deepEqual(JSON.parse(run('2', ['runs', file, '--json']).stdout), JSON.parse(run('1', ['runs', file, '--json']).stdout));
  });

  it('every command works on the span files', () => {
    const dir = tempDir();
    for (const file of readdirSync(OTEL)) copyFileSync(path.join(OTEL, file), path.join(dir, file));
    const stats = runCliJson<{ records: number; skipped_calls: Record<string, number> }>(['stats', dir]);
    assert.ok(stats.records > 50);
    // 10 in double-instrumented.jsonl; 24 Anthropic SDK spans under OpenLLMetry's and OpenInference's (11 calls and 1 content-off each).
    assert.equal(stats.skipped_calls.double_instrumented, 10 + 24);
    const runs = runCliJson<{ source: string; steps: number }[]>(['runs', dir]);
    assert.ok(runs.length > 0 && runs.every((r) => r.source === 'otlp'));
    const dedupe = path.join(tempDir(), 'dedupe');
    assert.equal(runCli(['dedupe', dir, '--out', dedupe]).status, 0);
    assert.equal(runCliJson<{ kept: number }>(['dedupe', dir, '--against', dedupe, '--dry-run']).kept, 0);
    assert.deepEqual(runCliJson<{ mismatches: unknown[] }>(['verify', dedupe]).mismatches, []);
    const filtered = path.join(tempDir(), 'filter');
    assert.equal(runCli(['filter', dir, '--status', 'ok', '--out', filtered]).status, 0);
    for (const format of ['openai', 'nemo', 'nemo-customizer']) {
      const out = path.join(tempDir(), format);
      const result = runCli(['export', dir, '--format', format, '--out', out, '--json']);
      assert.equal(result.status, 0, result.stderr);
      const validate = runCliJson<{ errors: { code: string }[] }>(['validate', path.join(out, 'training.jsonl'), '--format', format]);
      // A few calls: OpenAI's 10-example minimum for a training file is the one error it may have.
      assert.deepEqual(validate.errors.filter((e) => e.code !== 'too_few_examples'), []);
      const text = readFileSync(path.join(out, 'training.jsonl'), 'utf8') + readFileSync(path.join(out, 'validation.jsonl'), 'utf8');
      assert.ok(text.includes('get_weather') || format === 'nemo-customizer', format);
      // A cut answer is never exported.
      assert.ok(!text.includes('Tell me everything about"'), format);
    }
    assert.equal(runCli(['export', dir, '--format', 'ask-recording', '--out', path.join(tempDir(), 'ask')]).status, 0);
    assert.equal(runCli(['scan', dir]).status, 0);
    const index = path.join(tempDir(), 'index.parquet');
    assert.equal(runCli(['index', dir, '--out', index]).status, 0);
    const rows = runCliJson<{ n: number }[]>(['sql', "select count(*)::int as n from records where source = 'otlp'", '--index', index]);
    assert.equal(rows[0].n, stats.records);
  });
});

describe('OTLP span numbering', () => {
  it('counts the places (opening braces) of any bytes, in any range, whatever the keys and escapes around them', () => {
    const random = seededRandom(40);
    const pieces = ['"spanId"', '"span\\u0049d"', '{', '}', '"{"', '\\', '"', 'x', '{"spanId":1}'];
    for (let n = 0; n < 3000; n++) {
      const b = Buffer.from(Array.from({ length: Math.floor(random() * 12) }, () => pieces[Math.floor(random() * pieces.length)]).join(''));
      const from = Math.floor(random() * (b.length + 1));
      const to = from + Math.floor(random() * (b.length - from + 1));
      const braces = [...b.subarray(from, to)].filter((c) => c === 0x7b).length;
      assert.equal(spanPlaces(b, from, to), braces, `${JSON.stringify(b.toString())} [${from}, ${to})`);
    }
  });
});
