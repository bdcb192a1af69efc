/**
 * The OTLP extractor chain (src/sources/otlp/chain.ts) on spans built in the shapes the emitters
 * document: an attribute is read once, the Langfuse dialect, the fallback for spans no dialect
 * claims, the status and cut an emitter leaves, and what a record says mapped it.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import type { TraceRecord } from '../src/record.js';
import { FIXTURES, runCli, tempDir } from './helpers.js';
import { readOtlp, readSpans } from './otlp-helpers.js';
import { SpanBag } from '../src/sources/otlp/bag.js';
import { callOfSpan } from '../src/sources/otlp/chain.js';
import { attributeMap } from '../src/sources/otlp/values.js';

type Attr = { key: string; value: Record<string, unknown> };

/** OTLP/JSON attributes from plain values (strings, integers as int64 text, JSON for objects). */
function attrs(values: Record<string, unknown>): Attr[] {
  return Object.entries(values).map(([key, v]) => ({
    key,
    value: typeof v === 'string' ? { stringValue: v } : typeof v === 'number' ? (Number.isInteger(v) ? { intValue: String(v) } : { doubleValue: v }) : typeof v === 'boolean' ? { boolValue: v } : { stringValue: JSON.stringify(v) },
  }));
}

let next = 0;
function span(values: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  next++;
  return {
    traceId: '0af7651916cd43dd8448eb211c80319c',
    spanId: next.toString(16).padStart(16, '0'),
    name: 'call',
    startTimeUnixNano: '1700000000000000000',
    endTimeUnixNano: '1700000001000000000',
    attributes: attrs(values),
    ...extra,
  };
}

function line(record: TraceRecord): Record<string, unknown> {
  return JSON.parse(record.raw.toString('utf8'));
}

const ASK = [{ role: 'user', content: 'What is the capital of France?' }];

describe('OTLP extractor chain', () => {
  it('OpenInference over the AI SDK: a message written both as message.content and as text parts is read once', async () => {
    const [record] = await readSpans([
      span({
        'openinference.span.kind': 'LLM',
        'ai.operationId': 'ai.generateText.doGenerate',
        'llm.input_messages.0.message.role': 'user',
        'llm.input_messages.0.message.content': 'What is the capital of France?',
        'llm.input_messages.0.message.contents.0.message_content.type': 'text',
        'llm.input_messages.0.message.contents.0.message_content.text': 'What is the capital of France?',
        'llm.input_messages.1.message.role': 'tool',
        'llm.input_messages.1.message.content': '{"city":"Paris"}',
        'llm.input_messages.1.message.contents.0.message_content.type': 'text',
        'llm.input_messages.1.message.contents.0.message_content.text': '{"city":"Paris"}',
        'llm.output_messages.0.message.role': 'assistant',
        'llm.output_messages.0.message.content': 'Paris.',
        'llm.model_name': 'gpt-4o-mini',
      }),
    ]);
    const messages = record.messages();
    assert.equal(messages[0].content, 'What is the capital of France?');
    assert.equal(messages[1].content, '{"city":"Paris"}');
    assert.equal(messages[2].content, 'Paris.');
    assert.deepEqual(line(record).mapped_by, ['openinference']);
  });

  it('a Langfuse generation reads as the call; other observations are none; mapped_by names langfuse', async () => {
    const request = { messages: [{ role: 'system', content: 'Be brief.' }, ...ASK], tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }] };
    const records = await readSpans([
      span({ 'langfuse.observation.type': 'span', 'langfuse.observation.input': request }),
      span({
        'langfuse.observation.type': 'generation',
        'langfuse.observation.input': request,
        'langfuse.observation.output': { role: 'assistant', content: 'Paris.' },
        'langfuse.observation.model.name': 'gpt-4o-mini',
        'langfuse.observation.model.parameters': { temperature: 0, max_tokens: 50 },
        'langfuse.observation.usage_details': { input: 20, output: 2, total: 22, input_cached_tokens: 4 },
      }),
    ]);
    assert.equal(records.length, 1);
    const [record] = records;
    assert.equal(record.status, 'ok');
    assert.deepEqual(record.messages(), [...request.messages, { role: 'assistant', content: 'Paris.' }]);
    assert.equal(record.model, 'gpt-4o-mini');
    assert.equal(record.usage?.prompt_tokens, 24);
    assert.equal(record.usage?.completion_tokens, 2);
    assert.equal(record.usage?.cached_tokens, 4);
    assert.equal(record.offeredTools?.length, 1);
    assert.equal(record.stopReason, null);
    assert.deepEqual(line(record).mapped_by, ['langfuse']);
  });

  it('a failed call: level ERROR with the status unset, finish reason error with status OK, an exception event, a span status ERROR', async () => {
    const base = { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'm', 'gen_ai.input.messages': [{ role: 'user', parts: [{ type: 'text', content: 'hi' }] }] };
    const records = await readSpans([
      span({ 'langfuse.observation.type': 'generation', 'langfuse.observation.input': { messages: ASK }, 'langfuse.observation.level': 'ERROR', 'langfuse.observation.status_message': '429 rate limited' }),
      span({ ...base, 'gen_ai.response.finish_reasons': '["error"]' }, { status: { code: 1 } }),
      span(base, { events: [{ name: 'exception', attributes: attrs({ 'exception.type': 'APIError', 'exception.message': 'boom' }) }] }),
      span(base, { status: { code: 2, message: 'failed' } }),
      span({ ...base, 'gen_ai.output.messages': [{ role: 'assistant', parts: [{ type: 'text', content: 'hello' }] }] }),
    ]);
    assert.deepEqual(
      records.map((r) => [r.status, r.exception]),
      [
        ['exception', '429 rate limited'],
        ['exception', 'finish reason error'],
        ['exception', 'APIError: boom'],
        ['exception', 'failed'],
        ['ok', null],
      ],
    );
  });

  it('finish reasons as a list, as JSON text; with none, output tokens equal to max_tokens mark the answer cut, said to be inferred', async () => {
    const base = { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'm', 'gen_ai.input.messages': [{ role: 'user', parts: [{ type: 'text', content: 'hi' }] }], 'gen_ai.output.messages': [{ role: 'assistant', parts: [{ type: 'text', content: 'hel' }] }] };
    const records = await readSpans([
      span({ ...base, 'gen_ai.response.finish_reasons': '["length"]' }),
      { ...span(base), attributes: [...attrs(base), { key: 'gen_ai.response.finish_reasons', value: { arrayValue: { values: [{ stringValue: 'stop' }] } } }] },
      span({ ...base, 'gen_ai.request.max_tokens': 3, 'gen_ai.usage.input_tokens': 5, 'gen_ai.usage.output_tokens': 3 }),
      span({ ...base, 'gen_ai.request.max_tokens': 30, 'gen_ai.usage.input_tokens': 5, 'gen_ai.usage.output_tokens': 3 }),
    ]);
    assert.deepEqual(records.map((r) => r.stopReason), ['length', 'stop', 'length', null]);
    assert.match(String(line(records[2]).stop_reason_inferred), /max_tokens/);
    assert.equal(line(records[0]).stop_reason_inferred, undefined);
  });

  it('the fallback reads a chat request and response under keys no dialect claims; a value of no known shape is not read', async () => {
    const request = { model: 'claude-x', system: 'Be brief.', messages: [{ role: 'user', content: [{ type: 'text', text: 'Capital of France?' }] }], max_tokens: 64 };
    const response = { type: 'message', role: 'assistant', content: [{ type: 'text', text: 'Paris.' }], stop_reason: 'end_turn', usage: { input_tokens: 9, output_tokens: 2 } };
    const records = await readSpans([
      span({ 'acme.llm_request': request, 'acme.llm_response': response }),
      span({ 'input.value': { question: 'Capital of France?' }, 'output.value': 'Paris.' }),
      span({ 'app.input': [{ role: 'user', content: 'hi' }, { role: 'martian', content: { weird: true } }] }),
    ]);
    assert.equal(records.length, 1);
    const [record] = records;
    assert.deepEqual(record.messages(), [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Capital of France?' }, { role: 'assistant', content: 'Paris.' }]);
    assert.equal(record.model, 'claude-x');
    assert.equal(record.stopReason, 'end_turn');
    assert.equal(record.usage?.completion_tokens, 2);
    assert.deepEqual(line(record).mapped_by, ['fallback']);
  });

  it('a Google ADK call_llm span (GenAI attributes without content, Gemini contents in its own request and response) is read by the fallback', async () => {
    const request = {
      model: 'gemini-2.0-flash',
      config: { system_instruction: 'Be brief.', temperature: 0.2, max_output_tokens: 100, tools: [{ function_declarations: [{ name: 'get_weather' }] }] },
      contents: [
        { role: 'user', parts: [{ text: 'Weather in Paris?' }] },
        { role: 'model', parts: [{ function_call: { id: 'c1', name: 'get_weather', args: { city: 'Paris' } } }] },
        { role: 'user', parts: [{ function_response: { id: 'c1', name: 'get_weather', response: { sky: 'rain' } } }] },
      ],
    };
    const response = { content: { role: 'model', parts: [{ text: 'Rain.' }] }, finish_reason: 'STOP', usage_metadata: { prompt_token_count: 30, candidates_token_count: 2 } };
    const [record] = await readSpans([
      span({ 'gen_ai.system': 'gcp.vertex.agent', 'gen_ai.request.model': 'gemini-2.0-flash', 'gcp.vertex.agent.llm_request': request, 'gcp.vertex.agent.llm_response': response }),
    ]);
    assert.deepEqual(record.messages(), [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: '', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: { city: 'Paris' } } }] },
      { role: 'tool', content: '{"sky":"rain"}', tool_call_id: 'c1' },
      { role: 'assistant', content: 'Rain.' },
    ]);
    assert.equal(record.stopReason, 'STOP');
    assert.equal(record.usage?.completion_tokens, 2);
    assert.deepEqual(line(record).mapped_by, ['gen_ai', 'fallback']);
  });

  it('a GenAI span whose input messages cannot be read is never exported as system + answer; distinct prompts are no duplicates', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'spans.jsonl');
    const spans = ['first', 'second'].map((word) =>
      span({
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'm',
        'gen_ai.system_instructions': [{ type: 'text', content: 'You are helpful.' }],
        'gen_ai.input.messages': `not json: ${word} question`,
        'gen_ai.output.messages': [{ role: 'assistant', parts: [{ type: 'text', content: 'Same answer.' }] }],
      }),
    );
    writeFileSync(file, JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans }] }] }) + '\n');
    const { records } = await readOtlp(file);
    assert.equal(records.length, 2);
    for (const r of records) assert.match(String(r.notExportable), /^unreadable_input: /);
    const out = path.join(dir, 'out');
    const res = runCli(['export', file, '--out', out, '--format', 'openai']);
    assert.notEqual(res.status, 0, res.stderr);
    assert.doesNotMatch(res.stdout + res.stderr, /duplicate/);
  });

  it('a span without a raw "spanId" key (missing, or \\u-escaped) does not hide the spans after it on its line', async () => {
    const call = (text: string) => span({ 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'm', 'gen_ai.input.messages': [{ role: 'user', parts: [{ type: 'text', content: text }] }], 'gen_ai.output.messages': [{ role: 'assistant', parts: [{ type: 'text', content: 'ok' }] }] });
    const missing = call('one');
    delete missing.spanId;
    const spans = [missing, call('two'), call('three')];
    const escaped = JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [call('four'), call('five'), call('six')] }] }] }).replace('"spanId"', '"span\\u0049d"');
    const dir = tempDir();
    const file = path.join(dir, 'spans.jsonl');
    writeFileSync(file, JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans }] }] }) + '\n' + escaped + '\n');
    const { records } = await readOtlp(file);
    assert.deepEqual(records.map((r) => r.messages()[0].content), ['one', 'two', 'three', 'four', 'five', 'six']);
    const places = records.map((r) => r.ref.line);
    assert.deepEqual([...places].sort((a, b) => a - b), places);
    assert.equal(new Set(places).size, places.length);
  });

  it('content a related record holds, seeded into the bag, is read as the span\'s own; the span\'s own attributes win', () => {
    const chat = span({ 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'm', 'gen_ai.output.messages': [{ role: 'assistant', parts: [{ type: 'text', content: 'Paris.' }] }] });
    const attributes = attributeMap(chat.attributes);
    const bag = new SpanBag(chat, attributes);
    bag.seed([
      ['gen_ai.input.messages', JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: 'Capital of France?' }] }])],
      ['gen_ai.request.model', 'from-the-parent'],
    ]);
    bag.seedEvents([{ name: 'exception', attributes: attrs({ 'exception.type': 'Timeout' }) }]);
    const call = callOfSpan(chat, attributes, bag);
    assert.deepEqual(call?.inputs, [{ role: 'user', content: 'Capital of France?' }]);
    assert.equal(call?.model, 'm');
    assert.equal(call?.error, 'Timeout');
  });

  it('a file of spans with no LLM call says how many spans it read and of what kinds, never "no line in them"', () => {
    const dir = tempDir();
    const file = path.join(dir, 'spans.jsonl');
    const spans = [span({ 'langfuse.observation.type': 'span' }), span({ 'openinference.span.kind': 'CHAIN' }), span({ 'http.method': 'GET' })];
    writeFileSync(file, JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans }] }] }) + '\n');
    const res = runCli(['stats', file]);
    assert.equal(res.status, 2, res.stderr);
    assert.doesNotMatch(res.stderr, /no line in them/);
    assert.match(res.stderr, /3 spans/);
    assert.match(res.stderr, /langfuse/);
    assert.match(res.stderr, /openinference/);
  });
});

/** A served or recorded message as both sides can agree on it: role, text, tool calls (id, name, arguments as a value), tool_call_id. */
function wire(m: Record<string, unknown>): unknown {
  const args = (a: unknown) => (typeof a === 'string' && a.startsWith('{') ? JSON.parse(a) : a);
  const calls = Array.isArray(m.tool_calls) ? (m.tool_calls as { id?: string; function: { name: string; arguments: unknown } }[]).map((c) => [c.id ?? null, c.function.name, args(c.function.arguments)]) : [];
  return [m.role, m.content ?? '', calls, m.tool_call_id ?? null];
}

interface Served {
  emitter: string;
  scenario: string;
  status: number;
  request: { messages: Record<string, unknown>[]; max_tokens?: number };
  response?: { choices?: { message: Record<string, unknown>; finish_reason: string }[]; usage?: { prompt_tokens: number; completion_tokens: number }; error?: { message: string } };
  stream?: { choices: { delta: { content?: string } }[] }[];
}

function servedLog(name: string): Served[] {
  return readFileSync(path.join(OTEL, name), 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Served);
}

/** The answer the server sent: the message, or a stream's deltas joined. */
function servedAnswer(e: Served): Record<string, unknown> {
  if (e.response?.choices !== undefined) return e.response.choices[0].message;
  return { role: 'assistant', content: (e.stream ?? []).map((c) => c.choices[0]?.delta.content ?? '').join('') };
}

const OTEL = path.join(FIXTURES, 'otel');

describe('genuine span files of emitters read through the chain, against the fake server log (tools/otel-fixtures)', () => {
  for (const emitter of ['langfuse-4', 'langfuse-5']) {
    it(`${emitter} (@langfuse/otel + @langfuse/openai): every call a record, message for message; the failed call an exception; the cut one stops at length, inferred`, async () => {
      const { records, damaged } = await readOtlp(path.join(OTEL, `${emitter}.jsonl`));
      const served = servedLog('server-log-6.jsonl').filter((e) => e.emitter === emitter);
      assert.equal(damaged, 0);
      assert.equal(records.length, served.length);
      const calls = (list: [unknown[], unknown][]) => list.map((c) => JSON.stringify(c)).sort();
      const ok = records.filter((r) => r.status === 'ok');
      assert.deepEqual(
        calls(ok.map((r) => [r.messages().slice(0, -1).map((m) => wire(m as unknown as Record<string, unknown>)), wire(r.completion() as unknown as Record<string, unknown>)])),
        calls(served.filter((e) => e.status === 200).map((e) => [e.request.messages.map(wire), wire(servedAnswer(e))])),
      );
      for (const r of records) assert.deepEqual(line(r).mapped_by, ['langfuse']);
      const failed = records.filter((r) => r.status === 'exception');
      const refused = served.filter((e) => e.status !== 200);
      assert.equal(failed.length, refused.length);
      assert.match(failed[0].exception ?? '', new RegExp(refused[0].response!.error!.message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
      const cut = served.filter((e) => e.response?.choices?.[0].finish_reason === 'length');
      const stopped = ok.filter((r) => r.stopReason === 'length');
      assert.equal(stopped.length, cut.length);
      assert.deepEqual(stopped.map((r) => r.messages().slice(0, -1).map((m) => m.content)), cut.map((e) => e.request.messages.map((m) => m.content)));
      assert.match(String(line(stopped[0]).stop_reason_inferred), /max_tokens/);
      // Usage as the server counted it, where the SDK kept it.
      for (const e of served.filter((x) => x.response?.usage !== undefined)) {
        const r = ok.find((x) => JSON.stringify(x.messages().slice(0, -1).map((m) => wire(m as unknown as Record<string, unknown>))) === JSON.stringify(e.request.messages.map(wire)) && JSON.stringify(wire(x.completion() as unknown as Record<string, unknown>)) === JSON.stringify(wire(servedAnswer(e))));
        assert.ok(r !== undefined);
        assert.equal(r.usage?.prompt_tokens, e.response!.usage!.prompt_tokens);
        assert.equal(r.usage?.completion_tokens, e.response!.usage!.completion_tokens);
      }
    });
  }

  it('openinference-vercel (OpenInference over the AI SDK): each message once, as served', async () => {
    const { records } = await readOtlp(path.join(OTEL, 'openinference-vercel.jsonl'));
    const served = servedLog('server-log-9.jsonl').filter((e) => e.emitter === 'openinference-vercel' && e.status === 200);
    const texts = (list: Record<string, unknown>[]) => list.map((m) => [m.role, m.content ?? '']);
    const got = records.filter((r) => r.status === 'ok').map((r) => JSON.stringify(texts(r.messages().slice(0, -1) as unknown as Record<string, unknown>[])));
    const want = served.map((e) => JSON.stringify(texts(e.request.messages)));
    for (const w of want) assert.ok(got.includes(w), `${w} in ${got.join('\n')}`);
  });
});
