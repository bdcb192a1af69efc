/**
 * OTLP spans from the second and third sets of real emitters (tools/otel-fixtures/generate.cjs
 * --set 2, --set 3): Anthropic's Messages API under OpenLLMetry, OpenInference and the AI SDK,
 * LangChain.js's ChatOpenAI under OpenInference and OpenLLMetry, Bedrock Runtime (Converse,
 * ConverseStream, InvokeModel) under OpenInference. Each record is compared with what the fake
 * server logged it received and sent (server-log-2.jsonl, server-log-3.jsonl), each API's side
 * read from its own shapes (Anthropic's system beside the messages and content blocks with
 * tool_use ids; Bedrock's keyed blocks, toolUse / toolResult).
 */
import assert from 'node:assert/strict';
import { copyFileSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { canonicalValueText } from '../src/canonical/canonical.js';
import type { TraceRecord } from '../src/record.js';
import { callOfSpan } from '../src/sources/otlp/chain.js';
import { otlpConfig } from '../src/sources/otlp/read.js';
import { attributeMap } from '../src/sources/otlp/values.js';
import { FIXTURES, runCli, runCliJson, tempDir } from './helpers.js';
import { readOtlp, readSpans } from './otlp-helpers.js';
import { api, finishClass, recordShape, serverLog, texts, wireAnswer, wireFinish, wireInputs, wireUsage, type Json, type LogEntry } from './otlp-wire.js';

const OTEL = path.join(FIXTURES, 'otel');

const LOG = serverLog(['server-log-2.jsonl', 'server-log-3.jsonl', 'server-log-4.jsonl', 'server-log-5.jsonl']);


/** The emitters whose calls went to Anthropic's Messages API (set 5: through LangChain's ChatAnthropic). */
const ANTHROPIC = ['openllmetry-anthropic', 'openinference-anthropic', 'ai-sdk-anthropic', 'openinference-langchain-anthropic'];
const LANGCHAIN = ['openinference-langchain', 'openllmetry-langchain'];
const BEDROCK = ['openinference-bedrock'];
const ALL = [...ANTHROPIC, ...LANGCHAIN, ...BEDROCK];
/** The emitters whose spans keep every message, tool call and tool-call id that went over the wire. */
const WHOLE = ['openllmetry-anthropic', 'openinference-anthropic', 'ai-sdk-anthropic', 'openinference-langchain', 'openinference-bedrock', 'openinference-langchain-anthropic'];

function read(file: string): ReturnType<typeof readOtlp> {
  return readOtlp(path.join(OTEL, file));
}

function served(emitter: string): LogEntry[] {
  return LOG.filter((e) => e.emitter === emitter && e.status === 200);
}

/** The server's view of each answered call and the records' view, each as one sorted list. */
function compare(emitter: string, records: readonly TraceRecord[]): { wire: string[]; got: string[] } {
  const wire = served(emitter)
    .map((e) => canonicalValueText([wireInputs(e), wireAnswer(e)]))
    .sort();
  const got = records
    .filter((r) => r.status === 'ok')
    .map((r) => {
      const all = r.messages();
      return canonicalValueText([all.slice(0, -1).map(recordShape), recordShape(all[all.length - 1])]);
    })
    .sort();
  return { wire, got };
}

/** The logged call a record holds: the one whose inputs and answer are the record's (their texts only, for an emitter that keeps no more). */
function entryOf(emitter: string, r: TraceRecord, textsOnly = false): LogEntry | undefined {
  const all = r.messages();
  const key = (inputs: string[], answer: string) => canonicalValueText(textsOnly ? [texts(inputs), texts([answer])] : [inputs, answer]);
  const wanted = key(all.slice(0, -1).map(recordShape), recordShape(all[all.length - 1]));
  return served(emitter).find((e) => key(wireInputs(e), wireAnswer(e)) === wanted);
}

describe('OTLP spans from more real emitters (Anthropic, LangChain.js), against the fake server log', () => {
  it('the log holds every scenario for each emitter: plain, multi-turn, tools, stream, error, cut (and Bedrock\'s InvokeModel)', () => {
    for (const emitter of ALL) {
      const scenarios = ['cut', 'error', ...(BEDROCK.includes(emitter) ? ['invoke'] : []), 'multi-turn', 'plain', 'stream', 'tools'];
      assert.deepEqual([...new Set(LOG.filter((e) => e.emitter === emitter).map((e) => e.scenario))].sort(), scenarios, emitter);
    }
  });

  for (const emitter of WHOLE) {
    it(`${emitter}: every answered call is one record holding what went over the wire, tool-use ids included`, async () => {
      const { records, damaged } = await read(`${emitter}.jsonl`);
      assert.equal(damaged, 0);
      const { wire, got } = compare(emitter, records);
      assert.equal(got.length, served(emitter).length);
      assert.deepEqual(got, wire);
      // The parallel tool calls and the results answering them, by id.
      const loop = records.find((r) => r.messages().some((m) => m.role === 'tool'))!;
      const ids = loop.messages().flatMap((m) => (m.tool_calls ?? []).map((c) => c.id));
      assert.equal(ids.length, 2);
      assert.deepEqual(loop.messages().filter((m) => m.role === 'tool').map((m) => m.tool_call_id), ids);
      assert.equal(loop.partial, false);
      for (const r of records) {
        assert.equal(r.source, 'otlp');
        assert.match(r.callId, /^[0-9a-f]{32}:[0-9a-f]{16}$/);
      }
    });
  }

  it('usage, finish reason, model and provider are the server\'s for every answered call', async () => {
    let compared = 0;
    for (const emitter of ALL) {
      const { records } = await read(`${emitter}.jsonl`);
      for (const r of records.filter((x) => x.status === 'ok')) {
        const entry = entryOf(emitter, r, !WHOLE.includes(emitter));
        assert.ok(entry !== undefined, `${emitter}: ${JSON.stringify(r.messages())}`);
        // OpenInference's Bedrock instrumentation names the model without the model id's vendor prefix (anthropic.).
        assert.equal(r.model, BEDROCK.includes(emitter) ? decodeURIComponent(entry.url.split('/')[2]).replace(/^anthropic\./, '') : entry.request.model, emitter);
        assert.equal(r.provider, ANTHROPIC.includes(emitter) ? 'anthropic' : BEDROCK.includes(emitter) ? 'aws' : 'openai', emitter);
        // OpenLLMetry's Anthropic stream writes an empty finish reason (none recorded); OpenInference's LangChain span of a ChatAnthropic stream has none.
        if (r.stopReason === null) assert.ok(['openllmetry-anthropic', 'openinference-langchain-anthropic'].includes(emitter) && entry.scenario === 'stream', `${emitter} ${entry.scenario}: finish reason lost`);
        else assert.equal(finishClass(r.stopReason), wireFinish(entry), `${emitter} ${entry.scenario}`);
        const usage = wireUsage(entry);
        // LangChain's ChatAnthropic adds message_start's output_tokens (1, as the API sends) to message_delta's: the span says one more than the stream's final count.
        if (emitter === 'openinference-langchain-anthropic' && entry.scenario === 'stream') usage![1] += ((entry.stream![0].message as Json).usage as { output_tokens: number }).output_tokens;
        assert.deepEqual(r.usage === null ? null : [r.usage.prompt_tokens, r.usage.completion_tokens], usage, `${emitter} ${entry.scenario}`);
        compared++;
      }
    }
    assert.equal(compared, ALL.reduce((n, e) => n + served(e).length, 0));
    assert.equal(compared, 70);
  });

  it('the cut answer stops at its limit, and the errored call is an exception record with the server\'s message', async () => {
    for (const emitter of ALL) {
      const { records } = await read(`${emitter}.jsonl`);
      const cut = records.filter((r) => finishClass(r.stopReason) === 'length');
      assert.equal(cut.length, 1, emitter);
      assert.equal(cut[0].completion()!.content, 'Answer to "Tell me everything about');
      const failed = records.filter((r) => r.status === 'exception');
      assert.equal(failed.length, 1, emitter);
      assert.match(failed[0].exception!, ANTHROPIC.includes(emitter) ? /claude-fake-broken/ : BEDROCK.includes(emitter) ? /^ValidationException: The provided model identifier is invalid/ : /does not exist/);
      assert.equal(failed[0].model, LANGCHAIN.includes(emitter) ? 'gpt-fake-broken' : 'claude-fake-broken');
    }
  });

  it('the Anthropic SDK\'s own span under each instrumentation\'s span is the same call: counted once, the record with content kept', async () => {
    for (const emitter of ['openllmetry-anthropic', 'openinference-anthropic']) {
      const { records, skipped } = await read(`${emitter}.jsonl`);
      const calls = LOG.filter((e) => e.emitter === emitter).length;
      assert.equal(records.length, calls, emitter);
      assert.equal(skipped.double_instrumented, calls, emitter);
      assert.ok(records.every((r) => r.notExportable === null), emitter);
    }
  });

  it('the tool definitions in the config are the wire\'s, as OpenAI function tools (Bedrock\'s toolSpec and Anthropic\'s input_schema alike); OpenLLMetry keeps none', () => {
    /** The tools a logged request offered, as OpenAI function tools. */
    const wireTools = (e: LogEntry) => {
      if (api(e) === 'openai') return e.request.tools;
      if (api(e) === 'anthropic') return (e.request.tools as Json[]).map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.input_schema } }));
      return ((e.request.toolConfig as Json).tools as { toolSpec: Json }[]).map(({ toolSpec: t }) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: (t.inputSchema as Json).json } }));
    };
    for (const emitter of ALL) {
      const seen = new Set<string>();
      for (const line of readFileSync(path.join(OTEL, `${emitter}.jsonl`), 'utf8').split('\n').filter((l) => l !== '')) {
        for (const rs of JSON.parse(line).resourceSpans) {
          for (const ss of rs.scopeSpans) {
            for (const span of ss.spans) {
              const call = callOfSpan(span, attributeMap(span.attributes));
              const tools = call === null ? null : otlpConfig(call).tools;
              if (tools !== null) seen.add(canonicalValueText(tools));
            }
          }
        }
      }
      const wire = new Set(served(emitter).filter((e) => e.scenario === 'tools').map((e) => canonicalValueText(wireTools(e))));
      assert.equal(wire.size, 1, emitter);
      assert.deepEqual([...seen], emitter.startsWith('openllmetry-') ? [] : [...wire], emitter);
    }
  });

  it('openllmetry-bedrock records InvokeModel\'s Anthropic body whole and no content of Converse: those calls are no_content records', async () => {
    const { records } = await read('openllmetry-bedrock.jsonl');
    const calls = LOG.filter((e) => e.emitter === 'openllmetry-bedrock');
    assert.equal(records.length, calls.length);
    const invoke = calls.filter((e) => e.scenario === 'invoke');
    const ok = records.filter((r) => r.status === 'ok');
    assert.deepEqual(ok.map((r) => canonicalValueText([r.messages().slice(0, -1).map(recordShape), recordShape(r.messages()[r.messages().length - 1])])), invoke.map((e) => canonicalValueText([wireInputs(e), wireAnswer(e)])));
    assert.deepEqual([ok[0].model, ok[0].provider, finishClass(ok[0].stopReason)], ['claude-fake-1', 'aws.bedrock', wireFinish(invoke[0])]);
    const converse = records.filter((r) => r.status !== 'ok');
    assert.equal(converse.length, calls.length - invoke.length);
    assert.ok(converse.every((r) => /^no_content: /.test(r.notExportable ?? '')));
    assert.match(converse.find((r) => r.status === 'exception')!.exception!, /^ValidationException/);
  });

  it('openllmetry-langchain keeps the texts only: the tool calls and their ids are lost, so that answer is empty and the step after it is partial', async () => {
    const { records } = await read('openllmetry-langchain.jsonl');
    const wire = served('openllmetry-langchain')
      .map((e) => canonicalValueText([texts(wireInputs(e)), texts([wireAnswer(e)])]))
      .sort();
    const got = records
      .filter((r) => r.status === 'ok')
      .map((r) => canonicalValueText([texts(r.messages().slice(0, -1).map(recordShape)), texts([recordShape(r.messages()[r.messages().length - 1])])]))
      .sort();
    assert.deepEqual(got, wire);
    const answer = records.find((r) => finishClass(r.stopReason) === 'tool')!;
    assert.deepEqual(answer.completion(), { role: 'assistant', content: '' });
    const after = records.filter((r) => r.messages().some((m) => m.role === 'tool'));
    assert.equal(after.length, 1);
    assert.equal(after[0].partial, true);
  });

  it('content capture off: one no_content record per file, never exported', async () => {
    for (const emitter of ALL) {
      const { records } = await read(`${emitter}-content-off.jsonl`);
      assert.equal(records.length, 1, emitter);
      assert.match(records[0].notExportable ?? '', /^no_content: /, emitter);
    }
  });

  it('every command runs on the new span files without a stack trace; exports validate and hold the tool-use ids', () => {
    const dir = tempDir();
    const files = readdirSync(OTEL).filter((f) => [...ALL, 'openllmetry-bedrock'].some((e) => f.startsWith(`${e}.`) || f.startsWith(`${e}-content-off.`)));
    assert.equal(files.length, 16);
    for (const file of files) copyFileSync(path.join(OTEL, file), path.join(dir, file));
    const noTrace = (r: { stderr: string }) => assert.doesNotMatch(r.stderr, /\n\s+at .+:\d+:\d+\)?\n/);
    const stats = runCliJson<{ records: number; not_exportable: Record<string, number>; skipped_calls: Record<string, number> }>(['stats', dir]);
    // One record per logged call: the answered, the errored, the content-off ones.
    assert.equal(stats.records, LOG.filter((e) => [...ALL, 'openllmetry-bedrock'].some((a) => e.emitter === a || e.emitter === `${a}-content-off`)).length);
    // A content-off call of each emitter, and openllmetry-bedrock's 11 Converse calls.
    assert.equal(stats.not_exportable.no_content, 8 + 11);
    const runs = runCliJson<{ source: string; steps: number }[]>(['runs', dir]);
    assert.ok(runs.length > 0 && runs.every((r) => r.source === 'otlp'));
    const dedupe = path.join(tempDir(), 'dedupe');
    const d = runCli(['dedupe', dir, '--out', dedupe]);
    assert.equal(d.status, 0, d.stderr);
    noTrace(d);
    for (const format of ['openai', 'nemo', 'nemo-customizer']) {
      const out = path.join(tempDir(), format);
      const result = runCli(['export', dir, '--format', format, '--out', out, '--json']);
      assert.equal(result.status, 0, result.stderr);
      noTrace(result);
      const validate = runCliJson<{ errors: { code: string }[] }>(['validate', path.join(out, 'training.jsonl'), '--format', format]);
      assert.deepEqual(validate.errors.filter((e) => e.code !== 'too_few_examples'), []);
      const text = readFileSync(path.join(out, 'training.jsonl'), 'utf8') + readFileSync(path.join(out, 'validation.jsonl'), 'utf8');
      if (format !== 'nemo-customizer') assert.ok(['toolu_paris_0', 'call_paris_0', 'tooluse_paris_0'].every((id) => text.includes(id)), format);
      // A cut answer and the empty answer whose tool calls were lost are never exported.
      assert.ok(!text.includes('Tell me everything about"'), format);
      assert.ok(!text.includes('"content":""}]'), format);
    }
  });

  it('one call recorded by the framework and the client instrumentation at once (OpenLLMetry\'s LangChain and OpenAI, sibling spans): two records, and the export of one recorded once', () => {
    const both = 'openllmetry-langchain-openai';
    const calls = LOG.filter((e) => e.emitter === both);
    const stats = runCliJson<{ records: number }>(['stats', path.join(OTEL, `${both}.jsonl`)]);
    // Each answered call twice; the refused one only by LangChain (the OpenAI instrumentation makes no span of it).
    assert.equal(stats.records, 2 * calls.filter((e) => e.status === 200).length + 1);
    const exported = (file: string) => {
      const out = path.join(tempDir(), 'export');
      const result = runCli(['export', path.join(OTEL, file), '--format', 'openai', '--out', out]);
      assert.equal(result.status, 0, result.stderr);
      return ['training.jsonl', 'validation.jsonl'].flatMap((f) => readFileSync(path.join(out, f), 'utf8').split('\n').filter((l) => l !== '')).sort();
    };
    // The LangChain copies lose the tool calls (dropped as empty and tool_sequence); the others are duplicates of the client's.
    const twice = exported(`${both}.jsonl`);
    assert.equal(twice.length, 5);
    assert.deepEqual(twice, exported('openinference-langchain.jsonl'));
  });

  it('an OpenInference body holding a part of a type not read here leaves the flattened attributes to be read', async () => {
    const str = (key: string, value: string) => ({ key, value: { stringValue: value } });
    // Parts as OpenAI's Responses API types them (input_text), which no chat request body read here holds.
    const body = { model: 'fake.model-1', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: [{ type: 'input_text', text: 'Weather in Oslo?' }] }] };
    const records = await readSpans([
      {
        traceId: 'd'.repeat(32),
        spanId: '2'.repeat(16),
        name: 'bedrock.converse',
        attributes: [
          str('openinference.span.kind', 'LLM'),
          str('llm.model_name', 'fake.model-1'),
          str('input.value', JSON.stringify(body)),
          str('input.mime_type', 'application/json'),
          str('llm.input_messages.0.message.role', 'system'),
          str('llm.input_messages.0.message.content', 'Be brief.'),
          str('llm.input_messages.1.message.role', 'user'),
          str('llm.input_messages.1.message.content', 'Weather in Oslo?'),
          str('output.value', JSON.stringify({ output: [{ type: 'message', content: [{ type: 'output_text', text: 'Snow.' }] }] })),
          str('llm.output_messages.0.message.role', 'assistant'),
          str('llm.output_messages.0.message.content', 'Snow.'),
        ],
      },
    ]);
    assert.deepEqual(records[0].messages(), [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Weather in Oslo?' },
      { role: 'assistant', content: 'Snow.' },
    ]);
  });

  it('an MLflow span of Anthropic\'s Messages API (mlflow.anthropic.autolog: the create() kwargs in, the Message out) reads as the call', async () => {
    // Shaped as mlflow/anthropic/autolog.py records it; no MLflow emitter runs on Node (no JS MLflow tracing package on the registry).
    const attr = (key: string, value: unknown) => ({ key, value: { stringValue: JSON.stringify(value) } });
    const request = {
      model: 'claude-fake-1',
      max_tokens: 1024,
      system: [{ type: 'text', text: 'Be brief.' }],
      messages: [
        { role: 'user', content: 'Weather in Oslo?' },
        { role: 'assistant', content: [{ type: 'thinking', thinking: 'Look it up.', signature: 'x' }, { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Oslo' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'snow' }] }, { type: 'text', text: 'And so?' }] },
      ],
    };
    const response = { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-fake-1', content: [{ type: 'text', text: 'It snows.' }], stop_reason: 'end_turn', usage: { input_tokens: 30, output_tokens: 4 } };
    const records = await readSpans([
      {
        traceId: 'c'.repeat(32),
        spanId: '1'.repeat(16),
        name: 'Messages.create',
        startTimeUnixNano: '1767225600000000000',
        endTimeUnixNano: '1767225601000000000',
        attributes: [attr('mlflow.spanType', 'CHAT_MODEL'), attr('mlflow.spanInputs', request), attr('mlflow.spanOutputs', response)],
      },
    ]);
    assert.deepEqual(records[0].messages(), [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Weather in Oslo?' },
      { role: 'assistant', content: '', tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: { city: 'Oslo' } } }] },
      { role: 'tool', content: 'snow', tool_call_id: 'toolu_1' },
      { role: 'user', content: 'And so?' },
      { role: 'assistant', content: 'It snows.' },
    ]);
    assert.deepEqual([records[0].stopReason, records[0].usage?.prompt_tokens, records[0].usage?.completion_tokens, records[0].model], ['end_turn', 30, 4, 'claude-fake-1']);
  });
});
