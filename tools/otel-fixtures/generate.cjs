#!/usr/bin/env node
/*
 * Writes test/fixtures/otel/: OTLP/JSON span files made by the real instrumentations, each
 * against a fake server on 127.0.0.1 (OpenAI chat completions, Anthropic Messages with its SSE
 * stream, Bedrock Runtime Converse / ConverseStream / InvokeModel) that logs every request and
 * the response it sent (server-log*.jsonl), so tests can compare what the spans kept with what
 * went over the wire. Nothing leaves the machine: every client points at 127.0.0.1.
 *
 *   cd tools/otel-fixtures && npm ci && node generate.cjs [outdir] [--set N]
 *
 * `--set N` writes one set of emitters only, with its own server log (set 1: the `openai`
 * client and the AI SDK on OpenAI, server-log.jsonl; set 2: Anthropic's Messages API under
 * OpenLLMetry, OpenInference and the AI SDK, and LangChain.js's ChatOpenAI under OpenInference
 * and OpenLLMetry, server-log-2.jsonl; set 3: Bedrock Runtime's Converse, ConverseStream and
 * InvokeModel under OpenInference and OpenLLMetry, server-log-3.jsonl; set 4: OpenLLMetry's LangChain and
 * OpenAI instrumentations at once, server-log-4.jsonl; set 5: LangChain.js's ChatAnthropic under
 * OpenInference, server-log-5.jsonl; set 6: Langfuse's OTel SDK 5.x and 4.x; set 7: the official and
 * Elastic's OpenAI instrumentations, their log events in <emitter>-logs.jsonl as ExportLogsServiceRequest
 * lines; set 8: a Mastra agent with its OTel exporter; set 9: OpenInference's span processor over
 * the AI SDK; see test/fixtures/otel/README-sets.md), so adding a set never rewrites the files of another.
 *
 * Each emitter runs in its own child process (an instrumentation patches the `openai`
 * module for the whole process): the `openai` client under OpenInference, under OpenLLMetry
 * (Traceloop; its 0.22 too, which flattened messages into gen_ai.prompt.<i>.*), under both at once (the double-instrumentation case); the AI SDK 7 with its
 * OpenTelemetry integration (GenAI semantic conventions) and with its legacy one (`ai.*`
 * attributes). A run with content capture off follows each. Spans leave through the real
 * OpenTelemetry JS SDK and its OTLP/JSON serializer (JsonTraceSerializer), one
 * ExportTraceServiceRequest per line, as the Collector's file exporter writes them.
 */
'use strict';
const http = require('node:http');
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');

const OUT_ARG = process.argv[2] === '--child' ? undefined : process.argv.slice(2).find((a, i, all) => !a.startsWith('--') && all[i - 1] !== '--set');
const OUT = path.resolve(OUT_ARG ?? path.join(__dirname, '../../test/fixtures/otel'));
const MODEL = 'gpt-fake-1';
const ERROR_MODEL = 'gpt-fake-broken';
const MODEL_ANTHROPIC = 'claude-fake-1';
const ERROR_MODEL_ANTHROPIC = 'claude-fake-broken';

// ---------------------------------------------------------------- the fake server
function answerFor(body) {
  const messages = body.messages ?? [];
  const last = messages[messages.length - 1] ?? {};
  const lastUser = [...messages].reverse().find((m) => m.role === 'user');
  const text = typeof lastUser?.content === 'string' ? lastUser.content : JSON.stringify(lastUser?.content ?? '');
  if (body.model === ERROR_MODEL) return { error: { status: 400, body: { error: { message: `The model '${ERROR_MODEL}' does not exist`, type: 'invalid_request_error', code: 'model_not_found' } } } };
  if (Array.isArray(body.tools) && body.tools.length > 0 && last.role !== 'tool') {
    const cities = [...text.matchAll(/\b(Paris|Oslo|Lima)\b/g)].map((m) => m[1]);
    return {
      message: {
        role: 'assistant',
        content: null,
        tool_calls: cities.map((city, i) => ({ id: `call_${city.toLowerCase()}_${i}`, type: 'function', function: { name: 'get_weather', arguments: JSON.stringify({ city }) } })),
      },
      finish_reason: 'tool_calls',
    };
  }
  if (last.role === 'tool') {
    const results = messages.filter((m) => m.role === 'tool').map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)));
    return { message: { role: 'assistant', content: `Summary of ${results.length} reports: ${results.join('; ')}` }, finish_reason: 'stop' };
  }
  const full = `Answer to "${text}": ${text.length % 2 === 0 ? 'yes, it is.' : 'that depends on the day.'} Details follow in a longer sentence that a small limit cuts.`;
  const max = body.max_tokens ?? body.max_completion_tokens;
  if (typeof max === 'number' && max < 20) return { message: { role: 'assistant', content: full.split(' ').slice(0, max).join(' ') }, finish_reason: 'length' };
  return { message: { role: 'assistant', content: full }, finish_reason: 'stop' };
}

/**
 * An Anthropic Messages API request (POST /v1/messages) in chat terms, for answerFor: the
 * system prompt (a text or text blocks) as a system message, tool_result blocks as tool
 * messages, tool_use blocks as tool calls.
 */
function anthropicAsChat(body) {
  const messages = [];
  const blockText = (content) => (typeof content === 'string' ? content : (content ?? []).filter((b) => b.type === 'text').map((b) => b.text).join(''));
  if (body.system !== undefined) messages.push({ role: 'system', content: blockText(body.system) });
  for (const m of body.messages ?? []) {
    if (typeof m.content === 'string') {
      messages.push({ role: m.role, content: m.content });
      continue;
    }
    const results = m.content.filter((b) => b.type === 'tool_result');
    for (const r of results) messages.push({ role: 'tool', tool_call_id: r.tool_use_id, content: blockText(r.content) });
    const rest = m.content.filter((b) => b.type !== 'tool_result');
    if (rest.length > 0 || results.length === 0) {
      const calls = rest.filter((b) => b.type === 'tool_use').map((b) => ({ id: b.id, type: 'function', function: { name: b.name, arguments: JSON.stringify(b.input) } }));
      messages.push({ role: m.role, content: blockText(rest), ...(calls.length > 0 ? { tool_calls: calls } : {}) });
    }
  }
  return { model: body.model, messages, tools: body.tools, max_tokens: body.max_tokens };
}

/** The Messages API's answer: content blocks (a short text before tool_use blocks, as Claude writes), stop_reason. */
function anthropicAnswer(body) {
  const chat = anthropicAsChat(body);
  if (body.model === ERROR_MODEL_ANTHROPIC) return { error: { status: 404, body: { type: 'error', error: { type: 'not_found_error', message: `model: ${ERROR_MODEL_ANTHROPIC}` } } } };
  const out = answerFor({ ...chat, model: MODEL });
  const content = [];
  if (out.message.tool_calls) {
    content.push({ type: 'text', text: 'I will look both up.' });
    for (const call of out.message.tool_calls) content.push({ type: 'tool_use', id: call.id.replace(/^call_/, 'toolu_'), name: call.function.name, input: JSON.parse(call.function.arguments) });
  } else content.push({ type: 'text', text: out.message.content });
  const stop = { tool_calls: 'tool_use', length: 'max_tokens', stop: 'end_turn' }[out.finish_reason];
  return { content, stop_reason: stop, chat };
}

function tokens(text) {
  return Math.max(1, Math.ceil(String(text ?? '').length / 4));
}

function startServer(logPath) {
  let n = 0;
  const log = fs.openSync(logPath, 'w');
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const body = JSON.parse(raw);
      const id = `chatcmpl-fake${String(++n).padStart(4, '0')}`;
      const entry = { n, emitter: req.headers['x-fixture-emitter'] ?? null, scenario: req.headers['x-fixture-scenario'] ?? null, method: req.method, url: req.url, request: body };
      if (req.url.endsWith('/messages')) {
        serveAnthropic(body, n, entry, res, log);
        return;
      }
      if (req.url.startsWith('/model/')) {
        serveBedrock(decodeURIComponent(req.url.split('/')[2]), req.url.split('/')[3], body, n, entry, res, log);
        return;
      }
      const out = answerFor(body);
      if (out.error) {
        res.writeHead(out.error.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(out.error.body));
        entry.status = out.error.status;
        entry.response = out.error.body;
        fs.writeSync(log, JSON.stringify(entry) + '\n');
        return;
      }
      const promptTokens = tokens(JSON.stringify(body.messages));
      // A cut answer used up the tokens asked, as the real API reports it (sets 1-5 and 7-9 were written before this: their cut answers count by length).
      const completionTokens = out.finish_reason === 'length' ? (body.max_tokens ?? body.max_completion_tokens) : tokens(out.message.content ?? JSON.stringify(out.message.tool_calls));
      const usage = { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
      const created = 1767225600 + n;
      if (body.stream) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const sent = [];
        const send = (obj) => {
          sent.push(obj);
          res.write(`data: ${JSON.stringify(obj)}\n\n`);
        };
        const base = { id, object: 'chat.completion.chunk', created, model: body.model };
        send({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] });
        if (out.message.content) {
          for (const piece of out.message.content.match(/.{1,12}/gs)) send({ ...base, choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] });
        }
        (out.message.tool_calls ?? []).forEach((call, index) => {
          send({ ...base, choices: [{ index: 0, delta: { tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }] }, finish_reason: null }] });
          send({ ...base, choices: [{ index: 0, delta: { tool_calls: [{ index, function: { arguments: call.function.arguments } }] }, finish_reason: null }] });
        });
        send({ ...base, choices: [{ index: 0, delta: {}, finish_reason: out.finish_reason }] });
        if (body.stream_options?.include_usage) send({ ...base, choices: [], usage });
        res.end('data: [DONE]\n\n');
        entry.status = 200;
        entry.stream = sent;
        entry.response = { id, model: body.model, message: out.message, finish_reason: out.finish_reason, usage: body.stream_options?.include_usage ? usage : null };
      } else {
        const response = { id, object: 'chat.completion', created, model: body.model, choices: [{ index: 0, message: out.message, finish_reason: out.finish_reason, logprobs: null }], usage, system_fingerprint: 'fp_fake' };
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(response));
        entry.status = 200;
        entry.response = response;
      }
      fs.writeSync(log, JSON.stringify(entry) + '\n');
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, port: server.address().port, close: () => new Promise((r) => server.close(() => (fs.closeSync(log), r()))) })));
}

function serveAnthropic(body, n, entry, res, log) {
  const out = anthropicAnswer(body);
  const done = () => fs.writeSync(log, JSON.stringify(entry) + '\n');
  if (out.error) {
    res.writeHead(out.error.status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(out.error.body));
    entry.status = out.error.status;
    entry.response = out.error.body;
    return done();
  }
  const id = `msg_fake${String(n).padStart(4, '0')}`;
  const usage = { input_tokens: tokens(JSON.stringify([body.system, body.messages])), output_tokens: tokens(JSON.stringify(out.content)), cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  const message = { id, type: 'message', role: 'assistant', model: body.model, content: out.content, stop_reason: out.stop_reason, stop_sequence: null, usage };
  entry.status = 200;
  entry.response = message;
  if (!body.stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(message));
    return done();
  }
  // Server-sent events as the Messages API streams: message_start, a start/delta/stop per block, message_delta, message_stop.
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const sent = [];
  const send = (obj) => {
    sent.push(obj);
    res.write(`event: ${obj.type}\ndata: ${JSON.stringify(obj)}\n\n`);
  };
  send({ type: 'message_start', message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } } });
  out.content.forEach((block, index) => {
    if (block.type === 'text') {
      send({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      for (const piece of block.text.match(/.{1,12}/gs) ?? []) send({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } });
    } else {
      send({ type: 'content_block_start', index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } });
      send({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } });
    }
    send({ type: 'content_block_stop', index });
  });
  send({ type: 'message_delta', delta: { stop_reason: out.stop_reason, stop_sequence: null }, usage: { output_tokens: usage.output_tokens } });
  send({ type: 'message_stop' });
  res.end();
  entry.stream = sent;
  done();
}

/** A Bedrock Converse request in chat terms, for answerFor: `system` text blocks, `text` / `toolUse` / `toolResult` blocks. */
function converseAsChat(modelId, body) {
  const messages = [];
  const texts = (blocks) => (blocks ?? []).filter((b) => typeof b.text === 'string').map((b) => b.text).join('');
  if (body.system !== undefined) messages.push({ role: 'system', content: texts(body.system) });
  for (const m of body.messages ?? []) {
    const results = m.content.filter((b) => b.toolResult !== undefined);
    for (const { toolResult: r } of results) messages.push({ role: 'tool', tool_call_id: r.toolUseId, content: texts(r.content) });
    const rest = m.content.filter((b) => b.toolResult === undefined);
    if (rest.length > 0 || results.length === 0) {
      const calls = rest.filter((b) => b.toolUse !== undefined).map(({ toolUse: u }) => ({ id: u.toolUseId, type: 'function', function: { name: u.name, arguments: JSON.stringify(u.input) } }));
      messages.push({ role: m.role, content: texts(rest), ...(calls.length > 0 ? { tool_calls: calls } : {}) });
    }
  }
  return { model: modelId, messages, tools: body.toolConfig?.tools, max_tokens: body.inferenceConfig?.maxTokens };
}

/** One message of the AWS event stream encoding (application/vnd.amazon.eventstream): prelude, CRCs, string headers, a JSON payload. */
function eventStreamMessage(type, payload) {
  const zlib = require('node:zlib');
  const headers = Buffer.concat(
    Object.entries({ ':event-type': type, ':content-type': 'application/json', ':message-type': 'event' }).map(([name, value]) => {
      const n = Buffer.from(name);
      const v = Buffer.from(value);
      const h = Buffer.alloc(1 + n.length + 1 + 2 + v.length);
      h.writeUInt8(n.length, 0);
      n.copy(h, 1);
      h.writeUInt8(7, 1 + n.length);
      h.writeUInt16BE(v.length, 2 + n.length);
      v.copy(h, 4 + n.length);
      return h;
    }),
  );
  const body = Buffer.from(JSON.stringify(payload));
  const total = 12 + headers.length + body.length + 4;
  const prelude = Buffer.alloc(12);
  prelude.writeUInt32BE(total, 0);
  prelude.writeUInt32BE(headers.length, 4);
  prelude.writeUInt32BE(zlib.crc32(prelude.subarray(0, 8)), 8);
  const message = Buffer.concat([prelude, headers, body, Buffer.alloc(4)]);
  message.writeUInt32BE(zlib.crc32(message.subarray(0, total - 4)), total - 4);
  return message;
}

/** Bedrock Runtime: Converse (and ConverseStream) and InvokeModel with an Anthropic body, on /model/{modelId}/{action}. */
function serveBedrock(modelId, action, body, n, entry, res, log) {
  const done = () => fs.writeSync(log, JSON.stringify(entry) + '\n');
  if (modelId.includes('broken')) {
    const error = { message: 'The provided model identifier is invalid.' };
    res.writeHead(400, { 'content-type': 'application/json', 'x-amzn-errortype': 'ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/' });
    res.end(JSON.stringify(error));
    entry.status = 400;
    entry.response = error;
    return done();
  }
  if (action === 'invoke') {
    const out = anthropicAnswer(body);
    const usage = { input_tokens: tokens(JSON.stringify([body.system, body.messages])), output_tokens: tokens(JSON.stringify(out.content)) };
    const message = { id: `msg_bdrk_fake${String(n).padStart(4, '0')}`, type: 'message', role: 'assistant', model: modelId, content: out.content, stop_reason: out.stop_reason, stop_sequence: null, usage };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(message));
    entry.status = 200;
    entry.response = message;
    return done();
  }
  const out = answerFor({ ...converseAsChat(modelId, body), model: MODEL });
  const content = out.message.tool_calls
    ? [{ text: 'I will look both up.' }, ...out.message.tool_calls.map((c) => ({ toolUse: { toolUseId: c.id.replace(/^call_/, 'tooluse_'), name: c.function.name, input: JSON.parse(c.function.arguments) } }))]
    : [{ text: out.message.content }];
  const stopReason = { tool_calls: 'tool_use', length: 'max_tokens', stop: 'end_turn' }[out.finish_reason];
  const inputTokens = tokens(JSON.stringify([body.system, body.messages]));
  const outputTokens = tokens(JSON.stringify(content));
  const usage = { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens };
  const response = { output: { message: { role: 'assistant', content } }, stopReason, usage, metrics: { latencyMs: 5 } };
  entry.status = 200;
  entry.response = response;
  if (action !== 'converse-stream') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(response));
    return done();
  }
  res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream' });
  const sent = [];
  const send = (type, payload) => {
    sent.push({ [type]: payload });
    res.write(eventStreamMessage(type, payload));
  };
  send('messageStart', { role: 'assistant' });
  content.forEach((block, contentBlockIndex) => {
    if (block.text !== undefined) {
      for (const piece of block.text.match(/.{1,12}/gs) ?? []) send('contentBlockDelta', { contentBlockIndex, delta: { text: piece } });
    } else {
      send('contentBlockStart', { contentBlockIndex, start: { toolUse: { toolUseId: block.toolUse.toolUseId, name: block.toolUse.name } } });
      send('contentBlockDelta', { contentBlockIndex, delta: { toolUse: { input: JSON.stringify(block.toolUse.input) } } });
    }
    send('contentBlockStop', { contentBlockIndex });
  });
  send('messageStop', { stopReason });
  send('metadata', { usage, metrics: { latencyMs: 5 } });
  res.end();
  entry.stream = sent;
  done();
}

// ---------------------------------------------------------------- OpenTelemetry, to OTLP/JSON lines
/** The child's span file exporter, for an emitter that builds its own provider (Mastra). */
let fileExporter;
function telemetry(file, spanLimits, spanProcessor) {
  const api = require('@opentelemetry/api');
  const { TracerProvider, BatchSpanProcessor } = require('@opentelemetry/sdk-trace');
  const { resourceFromAttributes } = require('@opentelemetry/resources');
  const { JsonTraceSerializer } = require('@opentelemetry/otlp-transformer');
  const { AsyncLocalStorageContextManager } = require('@opentelemetry/context-async-hooks');
  let fd = fs.openSync(file, 'w');
  // The Collector's file exporter: one ExportTraceServiceRequest per line, OTLP/JSON encoding.
  const exporter = {
    export(spans, done) {
      fs.writeSync(fd, Buffer.from(JsonTraceSerializer.serializeRequest(spans)).toString('utf8') + '\n');
      done({ code: 0 });
    },
    // Shut down twice where an emitter's own provider holds it too (Mastra).
    shutdown: async () => {
      if (fd !== undefined) fs.closeSync(fd);
      fd = undefined;
    },
    forceFlush: async () => {},
  };
  fileExporter = exporter;
  // An emitter that ships its own span processor (Langfuse's, OpenInference's for the AI SDK) gets the same exporter through it.
  const processor = spanProcessor ? spanProcessor(exporter) : new BatchSpanProcessor({ exporter, maxExportBatchSize: 16, scheduledDelayMillis: 60000 });
  const provider = new TracerProvider({ resource: resourceFromAttributes({ 'service.name': 'otel-fixtures' }), spanProcessors: [processor], ...(spanLimits ? { spanLimits } : {}) });
  api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  api.trace.setGlobalTracerProvider(provider);
  return { api, provider, tracer: api.trace.getTracer('otel-fixtures-agent') };
}

/** Log records as the Collector's file exporter writes them: one OTLP/JSON ExportLogsServiceRequest per line. */
function logTelemetry(file) {
  const { LoggerProvider, BatchLogRecordProcessor } = require('@opentelemetry/sdk-logs');
  const { resourceFromAttributes } = require('@opentelemetry/resources');
  const { JsonLogsSerializer } = require('@opentelemetry/otlp-transformer');
  const fd = fs.openSync(file, 'w');
  const exporter = {
    export(records, done) {
      fs.writeSync(fd, Buffer.from(JsonLogsSerializer.serializeRequest(records)).toString('utf8') + '\n');
      done({ code: 0 });
    },
    shutdown: async () => fs.closeSync(fd),
    forceFlush: async () => {},
  };
  const processor = new BatchLogRecordProcessor({ exporter, maxExportBatchSize: 16, scheduledDelayMillis: 60000 });
  return new LoggerProvider({ resource: resourceFromAttributes({ 'service.name': 'otel-fixtures' }), processors: [processor] });
}

// ---------------------------------------------------------------- scenarios with the openai client
const WEATHER_TOOL = {
  type: 'function',
  function: { name: 'get_weather', description: 'Current weather of a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};

async function openaiScenarios(emitter, port, tracer, flush, contentOff, wrap = (c) => c, openaiModule = 'openai') {
  const OpenAI = require(openaiModule);
  const client = (scenario) => wrap(new OpenAI({ apiKey: 'sk-fake', baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0, defaultHeaders: { 'x-fixture-emitter': emitter, 'x-fixture-scenario': scenario } }), scenario);
  const system = { role: 'system', content: 'You are a terse geography assistant.' };
  if (contentOff) {
    await client('content-off').chat.completions.create({ model: MODEL, messages: [system, { role: 'user', content: 'What is the capital of France?' }], temperature: 0 });
    await flush();
    return;
  }
  // Plain calls, the same one three times.
  for (let i = 0; i < 3; i++) await client('plain').chat.completions.create({ model: MODEL, messages: [system, { role: 'user', content: 'What is the capital of France?' }], temperature: 0 });
  await client('plain').chat.completions.create({ model: MODEL, messages: [system, { role: 'user', content: 'Is Oslo north of Lima?' }], temperature: 0.7, max_tokens: 200 });
  // Multi-turn.
  const first = [system, { role: 'user', content: 'Name a large river.' }];
  const a1 = await client('multi-turn').chat.completions.create({ model: MODEL, messages: first });
  await client('multi-turn').chat.completions.create({ model: MODEL, messages: [...first, a1.choices[0].message, { role: 'user', content: 'Which sea does it reach?' }] });
  // A tool-calling agent loop with parallel calls, under an agent span.
  await tracer.startActiveSpan('weather-agent', async (span) => {
    const messages = [system, { role: 'user', content: 'Compare the weather in Paris and Oslo.' }];
    for (let step = 0; step < 3; step++) {
      const r = await client('tools').chat.completions.create({ model: MODEL, messages, tools: [WEATHER_TOOL], parallel_tool_calls: true });
      const message = r.choices[0].message;
      messages.push(message);
      if (!message.tool_calls) break;
      for (const call of message.tool_calls) {
        const { city } = JSON.parse(call.function.arguments);
        messages.push({ role: 'tool', tool_call_id: call.id, content: JSON.stringify({ city, sky: city === 'Paris' ? 'rain' : 'snow', celsius: city === 'Paris' ? 11 : -3 }) });
      }
    }
    span.end();
  });
  // Streaming, with usage in the last chunk.
  const stream = await client('stream').chat.completions.create({ model: MODEL, messages: [system, { role: 'user', content: 'Describe Lima in one line.' }], stream: true, stream_options: { include_usage: true } });
  for await (const _ of stream);
  // An errored call.
  try {
    await client('error').chat.completions.create({ model: ERROR_MODEL, messages: [system, { role: 'user', content: 'What is the capital of Peru?' }] });
  } catch {}
  // A cut answer.
  await client('cut').chat.completions.create({ model: MODEL, messages: [system, { role: 'user', content: 'Tell me everything about Norway.' }], max_tokens: 6 });
  await flush();
}

// ---------------------------------------------------------------- scenarios with the Anthropic client
const WEATHER_TOOL_ANTHROPIC = { name: 'get_weather', description: 'Current weather of a city', input_schema: WEATHER_TOOL.function.parameters };

async function anthropicScenarios(emitter, port, tracer, flush, contentOff) {
  const Anthropic = require('@anthropic-ai/sdk');
  const client = (scenario) => new Anthropic({ apiKey: 'sk-ant-fake', baseURL: `http://127.0.0.1:${port}`, maxRetries: 0, defaultHeaders: { 'x-fixture-emitter': emitter, 'x-fixture-scenario': scenario } });
  const system = 'You are a terse geography assistant.';
  const base = { model: MODEL_ANTHROPIC, max_tokens: 1024 };
  if (contentOff) {
    await client('content-off').messages.create({ ...base, system, messages: [{ role: 'user', content: 'What is the capital of France?' }], temperature: 0 });
    await flush();
    return;
  }
  for (let i = 0; i < 3; i++) await client('plain').messages.create({ ...base, system, messages: [{ role: 'user', content: 'What is the capital of France?' }], temperature: 0 });
  // The system prompt as text blocks, the user turn as content blocks.
  await client('plain').messages.create({ ...base, system: [{ type: 'text', text: system }], messages: [{ role: 'user', content: [{ type: 'text', text: 'Is Oslo north of Lima?' }] }], temperature: 0.7, max_tokens: 200 });
  const first = [{ role: 'user', content: 'Name a large river.' }];
  const a1 = await client('multi-turn').messages.create({ ...base, system, messages: first });
  await client('multi-turn').messages.create({ ...base, system, messages: [...first, { role: 'assistant', content: a1.content }, { role: 'user', content: 'Which sea does it reach?' }] });
  // The tool loop: parallel tool_use blocks after a text block, their tool_result blocks in one user turn.
  await tracer.startActiveSpan('weather-agent', async (span) => {
    const messages = [{ role: 'user', content: 'Compare the weather in Paris and Oslo.' }];
    for (let step = 0; step < 3; step++) {
      const r = await client('tools').messages.create({ ...base, system, messages, tools: [WEATHER_TOOL_ANTHROPIC] });
      messages.push({ role: 'assistant', content: r.content });
      if (r.stop_reason !== 'tool_use') break;
      messages.push({
        role: 'user',
        content: r.content
          .filter((b) => b.type === 'tool_use')
          .map((b) => ({ type: 'tool_result', tool_use_id: b.id, content: JSON.stringify({ city: b.input.city, sky: b.input.city === 'Paris' ? 'rain' : 'snow', celsius: b.input.city === 'Paris' ? 11 : -3 }) })),
      });
    }
    span.end();
  });
  const stream = await client('stream').messages.create({ ...base, system, messages: [{ role: 'user', content: 'Describe Lima in one line.' }], stream: true });
  for await (const _ of stream);
  try {
    await client('error').messages.create({ ...base, model: ERROR_MODEL_ANTHROPIC, system, messages: [{ role: 'user', content: 'What is the capital of Peru?' }] });
  } catch {}
  await client('cut').messages.create({ ...base, system, messages: [{ role: 'user', content: 'Tell me everything about Norway.' }], max_tokens: 6 });
  await flush();
}

// ---------------------------------------------------------------- scenarios with the Bedrock Runtime client
async function bedrockScenarios(emitter, port, tracer, flush, contentOff) {
  const bedrock = require('@aws-sdk/client-bedrock-runtime');
  const MODEL_ID = 'anthropic.claude-fake-1';
  const client = (scenario) => {
    // HTTP/1.1: the client's default handler speaks HTTP/2, which the fake server does not.
    const { NodeHttpHandler } = require('@smithy/node-http-handler');
    const c = new bedrock.BedrockRuntimeClient({ region: 'us-east-1', endpoint: `http://127.0.0.1:${port}`, maxAttempts: 1, credentials: { accessKeyId: 'AKIAFAKE', secretAccessKey: 'fake' }, requestHandler: new NodeHttpHandler() });
    c.middlewareStack.add((next) => (args) => {
      args.request.headers['x-fixture-emitter'] = emitter;
      args.request.headers['x-fixture-scenario'] = scenario;
      return next(args);
    }, { step: 'build', name: 'fixtureHeaders' });
    return c;
  };
  const converse = (scenario, input) => client(scenario).send(new bedrock.ConverseCommand({ modelId: MODEL_ID, system: [{ text: 'You are a terse geography assistant.' }], ...input }));
  const user = (text) => ({ role: 'user', content: [{ text }] });
  if (contentOff) {
    await converse('content-off', { messages: [user('What is the capital of France?')], inferenceConfig: { temperature: 0 } });
    await flush();
    return;
  }
  for (let i = 0; i < 3; i++) await converse('plain', { messages: [user('What is the capital of France?')], inferenceConfig: { temperature: 0 } });
  await converse('plain', { messages: [user('Is Oslo north of Lima?')], inferenceConfig: { temperature: 0.7, maxTokens: 200 } });
  const first = [user('Name a large river.')];
  const a1 = await converse('multi-turn', { messages: first });
  await converse('multi-turn', { messages: [...first, a1.output.message, user('Which sea does it reach?')] });
  await tracer.startActiveSpan('weather-agent', async (span) => {
    const messages = [user('Compare the weather in Paris and Oslo.')];
    const toolConfig = { tools: [{ toolSpec: { name: 'get_weather', description: 'Current weather of a city', inputSchema: { json: WEATHER_TOOL.function.parameters } } }] };
    for (let step = 0; step < 3; step++) {
      const r = await converse('tools', { messages, toolConfig });
      messages.push(r.output.message);
      if (r.stopReason !== 'tool_use') break;
      messages.push({
        role: 'user',
        content: r.output.message.content
          .filter((b) => b.toolUse !== undefined)
          .map(({ toolUse: u }) => ({ toolResult: { toolUseId: u.toolUseId, content: [{ text: JSON.stringify({ city: u.input.city, sky: u.input.city === 'Paris' ? 'rain' : 'snow', celsius: u.input.city === 'Paris' ? 11 : -3 }) }] } })),
      });
    }
    span.end();
  });
  const streamed = await client('stream').send(new bedrock.ConverseStreamCommand({ modelId: MODEL_ID, system: [{ text: 'You are a terse geography assistant.' }], messages: [user('Describe Lima in one line.')] }));
  for await (const _ of streamed.stream);
  try {
    await client('error').send(new bedrock.ConverseCommand({ modelId: 'anthropic.claude-fake-broken', messages: [user('What is the capital of Peru?')] }));
  } catch {}
  await converse('cut', { messages: [user('Tell me everything about Norway.')], inferenceConfig: { maxTokens: 6 } });
  // InvokeModel with an Anthropic Messages body, as Claude on Bedrock takes it.
  await client('invoke').send(
    new bedrock.InvokeModelCommand({
      modelId: MODEL_ID,
      contentType: 'application/json',
      body: JSON.stringify({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 1024, system: 'You are a terse geography assistant.', messages: [{ role: 'user', content: 'What is the capital of Chile?' }] }),
    }),
  );
  await flush();
}

// ---------------------------------------------------------------- scenarios with LangChain's ChatOpenAI
async function langchainScenarios(emitter, port, tracer, flush, contentOff, provider = 'openai') {
  const { SystemMessage, HumanMessage, ToolMessage } = require('@langchain/core/messages');
  const headers = (scenario) => ({ 'x-fixture-emitter': emitter, 'x-fixture-scenario': scenario });
  const chat =
    provider === 'anthropic'
      ? (scenario, { model, ...options } = {}) =>
          new (require('@langchain/anthropic').ChatAnthropic)({ model: model === ERROR_MODEL ? ERROR_MODEL_ANTHROPIC : MODEL_ANTHROPIC, apiKey: 'sk-ant-fake', maxRetries: 0, maxTokens: 1024, anthropicApiUrl: `http://127.0.0.1:${port}`, clientOptions: { defaultHeaders: headers(scenario) }, ...options })
      : (scenario, options = {}) => new (require('@langchain/openai').ChatOpenAI)({ model: MODEL, apiKey: 'sk-fake', maxRetries: 0, configuration: { baseURL: `http://127.0.0.1:${port}/v1`, defaultHeaders: headers(scenario) }, ...options });
  const system = new SystemMessage('You are a terse geography assistant.');
  if (contentOff) {
    await chat('content-off', { temperature: 0 }).invoke([system, new HumanMessage('What is the capital of France?')]);
    await flush();
    return;
  }
  for (let i = 0; i < 3; i++) await chat('plain', { temperature: 0 }).invoke([system, new HumanMessage('What is the capital of France?')]);
  await chat('plain', { temperature: 0.7, maxTokens: 200 }).invoke([system, new HumanMessage('Is Oslo north of Lima?')]);
  const first = [system, new HumanMessage('Name a large river.')];
  const a1 = await chat('multi-turn').invoke(first);
  await chat('multi-turn').invoke([...first, a1, new HumanMessage('Which sea does it reach?')]);
  await tracer.startActiveSpan('weather-agent', async (span) => {
    const model = provider === 'anthropic' ? chat('tools').bindTools([WEATHER_TOOL]) : chat('tools').bindTools([WEATHER_TOOL], { parallel_tool_calls: true });
    const messages = [system, new HumanMessage('Compare the weather in Paris and Oslo.')];
    for (let step = 0; step < 3; step++) {
      const r = await model.invoke(messages);
      messages.push(r);
      if (!r.tool_calls || r.tool_calls.length === 0) break;
      for (const call of r.tool_calls) {
        const { city } = call.args;
        messages.push(new ToolMessage({ tool_call_id: call.id, content: JSON.stringify({ city, sky: city === 'Paris' ? 'rain' : 'snow', celsius: city === 'Paris' ? 11 : -3 }) }));
      }
    }
    span.end();
  });
  const stream = await chat('stream', provider === 'anthropic' ? {} : { streamUsage: true }).stream([system, new HumanMessage('Describe Lima in one line.')]);
  for await (const _ of stream);
  try {
    await chat('error', { model: ERROR_MODEL }).invoke([system, new HumanMessage('What is the capital of Peru?')]);
  } catch {}
  await chat('cut', { maxTokens: 6 }).invoke([system, new HumanMessage('Tell me everything about Norway.')]);
  await flush();
}

// ---------------------------------------------------------------- scenarios with the AI SDK
function aiSdkOpenAI(emitter, port) {
  const { createOpenAI } = require('@ai-sdk/openai');
  return (scenario, id = MODEL) => createOpenAI({ apiKey: 'sk-fake', baseURL: `http://127.0.0.1:${port}/v1`, headers: { 'x-fixture-emitter': emitter, 'x-fixture-scenario': scenario } }).chat(id);
}

function aiSdkAnthropic(emitter, port) {
  const { createAnthropic } = require('@ai-sdk/anthropic');
  return (scenario, id = MODEL_ANTHROPIC) => createAnthropic({ apiKey: 'sk-ant-fake', baseURL: `http://127.0.0.1:${port}/v1`, headers: { 'x-fixture-emitter': emitter, 'x-fixture-scenario': scenario } })(id === ERROR_MODEL ? ERROR_MODEL_ANTHROPIC : id);
}

async function aiSdkScenarios(emitter, port, tracer, flush, contentOff, provider = aiSdkOpenAI) {
  const ai = require('ai');
  const { z } = require('zod');
  const model = provider(emitter, port);
  const telemetry = (functionId) => ({ isEnabled: true, functionId, recordInputs: !contentOff, recordOutputs: !contentOff });
  const system = 'You are a terse geography assistant.';
  if (contentOff) {
    await ai.generateText({ model: model('content-off'), system, prompt: 'What is the capital of France?', temperature: 0, experimental_telemetry: telemetry('content-off') });
    await flush();
    return;
  }
  for (let i = 0; i < 3; i++) await ai.generateText({ model: model('plain'), system, prompt: 'What is the capital of France?', temperature: 0, experimental_telemetry: telemetry('plain') });
  const first = [{ role: 'user', content: 'Name a large river.' }];
  const a1 = await ai.generateText({ model: model('multi-turn'), system, messages: first, experimental_telemetry: telemetry('multi-turn') });
  await ai.generateText({ model: model('multi-turn'), system, messages: [...first, ...a1.response.messages, { role: 'user', content: 'Which sea does it reach?' }], experimental_telemetry: telemetry('multi-turn') });
  await ai.generateText({
    model: model('tools'),
    system,
    prompt: 'Compare the weather in Paris and Oslo.',
    tools: {
      get_weather: ai.tool({
        description: 'Current weather of a city',
        inputSchema: z.object({ city: z.string() }),
        execute: async ({ city }) => ({ city, sky: city === 'Paris' ? 'rain' : 'snow', celsius: city === 'Paris' ? 11 : -3 }),
      }),
    },
    stopWhen: ai.stepCountIs(3),
    experimental_telemetry: telemetry('tools'),
  });
  const streamed = ai.streamText({ model: model('stream'), system, prompt: 'Describe Lima in one line.', experimental_telemetry: telemetry('stream') });
  for await (const _ of streamed.textStream);
  try {
    await ai.generateText({ model: model('error', ERROR_MODEL), system, prompt: 'What is the capital of Peru?', maxRetries: 0, experimental_telemetry: telemetry('error') });
  } catch {}
  await ai.generateText({ model: model('cut'), system, prompt: 'Tell me everything about Norway.', maxOutputTokens: 6, experimental_telemetry: telemetry('cut') });
  await flush();
}

// ---------------------------------------------------------------- scenarios with a Mastra agent
async function mastraScenarios(emitter, port, tracer, flush, contentOff) {
  const { Mastra } = require('@mastra/core/mastra');
  const { Agent } = require('@mastra/core/agent');
  const { createTool } = require('@mastra/core/tools');
  const { Observability } = require('@mastra/observability');
  const { OtelExporter } = require('@mastra/otel-exporter');
  const { z } = require('zod');
  // Mastra makes its own OTel provider (SDK 2.x) and takes the exporter it is given (the process's file exporter); the
  // provider entry is required and unused (no request leaves: the exporter given replaces its OTLP one).
  const exporter = fileExporter;
  const weather = createTool({
    id: 'get_weather',
    description: 'Current weather of a city',
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => ({ city, sky: city === 'Paris' ? 'rain' : 'snow', celsius: city === 'Paris' ? 11 : -3 }),
  });
  const model = (scenario, id = MODEL) => ({ id: `openai/${id}`, url: `http://127.0.0.1:${port}/v1`, apiKey: 'sk-fake', headers: { 'x-fixture-emitter': emitter, 'x-fixture-scenario': scenario } });
  const agent = (scenario, options = {}) => new Agent({ id: `geo-${scenario}`, name: `geo-${scenario}`, instructions: 'You are a terse geography assistant.', model: model(scenario, options.model), tools: options.tools ?? {} });
  const agents = {
    plain: agent('plain'),
    multi: agent('multi-turn'),
    tools: agent('tools', { tools: { get_weather: weather } }),
    stream: agent('stream'),
    error: agent('error', { model: ERROR_MODEL }),
    cut: agent('cut'),
    off: agent('content-off'),
  };
  const mastra = new Mastra({
    agents,
    logger: false,
    observability: new Observability({ configs: { otel: { serviceName: 'otel-fixtures', exporters: [new OtelExporter({ exporter, batchSize: 16, provider: { custom: { endpoint: 'http://127.0.0.1:9', protocol: 'http/json' } }, signals: { traces: true, logs: false } })] } } }),
  });
  const get = (key) => mastra.getAgent(key);
  const tracing = contentOff ? { tracingOptions: { hideInput: true, hideOutput: true } } : {};
  if (contentOff) {
    await get('off').generate('What is the capital of France?', { modelSettings: { temperature: 0 }, ...tracing });
  } else {
    for (let i = 0; i < 3; i++) await get('plain').generate('What is the capital of France?', { modelSettings: { temperature: 0 } });
    const a1 = await get('multi').generate('Name a large river.');
    await get('multi').generate([{ role: 'user', content: 'Name a large river.' }, { role: 'assistant', content: a1.text }, { role: 'user', content: 'Which sea does it reach?' }]);
    await get('tools').generate('Compare the weather in Paris and Oslo.', { maxSteps: 3 });
    const streamed = await get('stream').stream('Describe Lima in one line.');
    for await (const _ of streamed.textStream);
    try {
      await get('error').generate('What is the capital of Peru?', { modelSettings: { maxRetries: 0 } });
    } catch {}
    await get('cut').generate('Tell me everything about Norway.', { modelSettings: { maxOutputTokens: 6 } });
  }
  await mastra.shutdown();
}

// ---------------------------------------------------------------- one emitter per process
const EMITTERS = {
  openinference: { scenarios: openaiScenarios, instrument: (provider, off) => instrumentOpenInference(provider, off) },
  openllmetry: { scenarios: openaiScenarios, instrument: (provider, off) => instrumentTraceloop(provider, off) },
  // An earlier OpenLLMetry, with the flattened gen_ai.prompt.<i>.* / gen_ai.completion.<i>.* attributes.
  'openllmetry-0.22': { scenarios: openaiScenarios, instrument: (provider, off) => instrumentTraceloop(provider, off, 'traceloop-instrumentation-openai-0.22') },
  'double-instrumented': { scenarios: openaiScenarios, instrument: (provider, off) => (instrumentTraceloop(provider, off), instrumentOpenInference(provider, off)) },
  'ai-sdk-genai': { scenarios: aiSdkScenarios, instrument: () => require('ai').registerTelemetry(new (require('@ai-sdk/otel').OpenTelemetry)()) },
  // The SDK's own attribute length limit (OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT) cutting long values.
  'openllmetry-length-limit': { scenarios: openaiScenarios, instrument: (provider, off) => instrumentTraceloop(provider, off), spanLimits: { attributeValueLengthLimit: 160 }, contentOn: true },
  'ai-sdk-legacy': { scenarios: aiSdkScenarios, instrument: () => require('ai').registerTelemetry(new (require('@ai-sdk/otel').LegacyOpenTelemetry)()) },
  // The second set (server-log-2.jsonl): Anthropic's Messages API and LangChain.js.
  'openllmetry-anthropic': { set: 2, scenarios: anthropicScenarios, instrument: (provider, off) => instrumentTraceloopAnthropic(provider, off) },
  'openinference-anthropic': { set: 2, scenarios: anthropicScenarios, instrument: (provider, off) => instrumentOpenInferenceAnthropic(provider, off) },
  'ai-sdk-anthropic': { set: 2, scenarios: (e, p, t, f, off) => aiSdkScenarios(e, p, t, f, off, aiSdkAnthropic), instrument: () => require('ai').registerTelemetry(new (require('@ai-sdk/otel').OpenTelemetry)()) },
  'openinference-langchain': { set: 2, scenarios: langchainScenarios, instrument: (provider, off) => instrumentOpenInferenceLangChain(provider, off) },
  'openllmetry-langchain': { set: 2, scenarios: langchainScenarios, instrument: (provider, off) => instrumentTraceloopLangChain(provider, off) },
  // OpenLLMetry's LangChain and OpenAI instrumentations at once, as its node-server-sdk sets them up: two spans of each call.
  'openllmetry-langchain-openai': {
    set: 4,
    scenarios: langchainScenarios,
    instrument: (provider, off) => {
      instrumentTraceloopLangChain(provider, off);
      // The openai client LangChain loads (its own copy), instrumented as the SDK's instrumentModules would.
      instrumentTraceloop(provider, off, '@traceloop/instrumentation-openai', require.resolve('openai', { paths: [path.dirname(require.resolve('@langchain/openai'))] }));
    },
  },
  // Set 5 (server-log-5.jsonl): LangChain's ChatAnthropic (its own @anthropic-ai/sdk 0.122) under OpenInference.
  'openinference-langchain-anthropic': { set: 5, scenarios: (e, p, t, f, off) => langchainScenarios(e, p, t, f, off, 'anthropic'), instrument: (provider, off) => instrumentOpenInferenceLangChain(provider, off) },
  // Set 3 (server-log-3.jsonl): Bedrock Runtime's Converse, ConverseStream and InvokeModel.
  'openinference-bedrock': { set: 3, scenarios: bedrockScenarios, instrument: (provider, off) => instrumentOpenInferenceBedrock(provider, off) },
  'openllmetry-bedrock': { set: 3, scenarios: bedrockScenarios, instrument: (provider, off) => instrumentTraceloopBedrock(provider, off) },
  // Set 6 (server-log-6.jsonl): Langfuse's OTel SDK, 5.x and 4.x: observeOpenAI around the openai client, spans through
  // LangfuseSpanProcessor (given the file exporter instead of its OTLP one). It has no switch for content capture (only a mask function).
  'langfuse-5': { set: 6, contentOn: true, scenarios: (e, p, t, f, off) => openaiScenarios(e, p, t, f, off, (c, scenario) => require('@langfuse/openai').observeOpenAI(c, { generationName: scenario })), spanProcessor: (exporter) => langfuseProcessor('@langfuse/otel', exporter), instrument: () => {} },
  'langfuse-4': { set: 6, contentOn: true, scenarios: (e, p, t, f, off) => openaiScenarios(e, p, t, f, off, (c, scenario) => require('langfuse-openai-4').observeOpenAI(c, { generationName: scenario })), spanProcessor: (exporter) => langfuseProcessor('langfuse-otel-4', exporter), instrument: () => {} },
  // Set 7 (server-log-7.jsonl): the GenAI instrumentations that write the messages as log events, beside the spans.
  'otel-openai': { set: 7, logs: true, scenarios: openaiScenarios, instrument: (provider, off, logs) => instrumentWithLogs('@opentelemetry/instrumentation-openai', provider, off, logs) },
  // Elastic's supports openai <5 only: it runs on openai 4 (the alias openai-4), patched through its module definition.
  'elastic-openai': { set: 7, logs: true, scenarios: (e, p, t, f, off) => openaiScenarios(e, p, t, f, off, undefined, 'openai-4'), instrument: (provider, off, logs) => instrumentWithLogs('@elastic/opentelemetry-instrumentation-openai', provider, off, logs, 'openai-4') },
  // Set 8 (server-log-8.jsonl): a Mastra agent (its model router on the OpenAI-compatible server) with Mastra's OTel exporter,
  // given the file exporter; content off is the trace's hideInput / hideOutput.
  mastra: { set: 8, scenarios: mastraScenarios, instrument: () => {} },
  // Set 9 (server-log-9.jsonl): OpenInference's span processor over the AI SDK 7's GenAI spans.
  'openinference-vercel': {
    set: 9,
    // An ES module with an `import` export only: Node 20 requires its file with this flag.
    nodeOptions: ['--experimental-require-module'],
    scenarios: aiSdkScenarios,
    spanProcessor: (exporter) => new (require(path.join(__dirname, 'node_modules/@arizeai/openinference-vercel/dist/esm/index.js')).OpenInferenceBatchSpanProcessor)({ exporter, config: { maxExportBatchSize: 16, scheduledDelayMillis: 60000 } }),
    instrument: () => require('ai').registerTelemetry(new (require('@ai-sdk/otel').OpenTelemetry)()),
  },
};

/** Each set of emitters writes its own server log and adds its packages to versions.json; `--set N` runs one set, leaving the other's files as they are. */
const SETS = { 1: 'server-log.jsonl', 2: 'server-log-2.jsonl', 3: 'server-log-3.jsonl', 4: 'server-log-4.jsonl', 5: 'server-log-5.jsonl', 6: 'server-log-6.jsonl', 7: 'server-log-7.jsonl', 8: 'server-log-8.jsonl', 9: 'server-log-9.jsonl' };

function langfuseProcessor(name, exporter) {
  const { LangfuseSpanProcessor } = require(name);
  return new LangfuseSpanProcessor({ exporter, publicKey: 'pk-lf-fake', secretKey: 'sk-lf-fake', baseUrl: 'http://127.0.0.1:9', flushAt: 16, flushInterval: 60, mediaUploadEnabled: false });
}

/** An instrumentation that hooks `openai` as it loads and writes its message events through a LoggerProvider. */
function instrumentWithLogs(name, provider, off, logs, openaiAlias) {
  const { OpenAIInstrumentation } = require(name);
  const instrumentation = new OpenAIInstrumentation({ captureMessageContent: !off });
  instrumentation.setTracerProvider(provider);
  instrumentation.setLoggerProvider(logs);
  // Its token histograms exist only once a meter provider is set (the no-op one will do); without them a streamed call throws.
  instrumentation.setMeterProvider(require('@opentelemetry/api').metrics.getMeterProvider());
  if (openaiAlias) {
    // The require hook matches the name `openai` only; an aliased copy is patched as the hook would patch it.
    const [definition] = instrumentation.getModuleDefinitions();
    definition.patch(require(openaiAlias), JSON.parse(fs.readFileSync(path.join(__dirname, 'node_modules', openaiAlias, 'package.json'), 'utf8')).version);
  }
}

function instrumentTraceloopBedrock(provider, off) {
  const { BedrockInstrumentation } = require('@traceloop/instrumentation-bedrock');
  const instrumentation = new BedrockInstrumentation({ traceContent: !off });
  instrumentation.setTracerProvider(provider);
  // Patched as it loads, like OpenInference's (see there).
  require('@aws-sdk/client-bedrock-runtime');
}

function instrumentOpenInferenceBedrock(provider, off) {
  const { BedrockInstrumentation } = require('@arizeai/openinference-instrumentation-bedrock');
  const instrumentation = new BedrockInstrumentation({ traceConfig: off ? { hideInputs: true, hideOutputs: true } : {} });
  instrumentation.setTracerProvider(provider);
  // Patched as it loads (the instrumentation hooks require when made); it has no guard against a
  // second patch, so manuallyInstrument on top would wrap send twice and make two sibling spans.
  require('@aws-sdk/client-bedrock-runtime');
}

function instrumentTraceloopAnthropic(provider, off) {
  const { AnthropicInstrumentation } = require('@traceloop/instrumentation-anthropic');
  const instrumentation = new AnthropicInstrumentation({ traceContent: !off });
  instrumentation.setTracerProvider(provider);
  instrumentation.manuallyInstrument(require('@anthropic-ai/sdk'));
}

function instrumentOpenInferenceAnthropic(provider, off) {
  const { AnthropicInstrumentation } = require('@arizeai/openinference-instrumentation-anthropic');
  const instrumentation = new AnthropicInstrumentation({ traceConfig: off ? { hideInputs: true, hideOutputs: true } : {} });
  instrumentation.setTracerProvider(provider);
  instrumentation.manuallyInstrument(require('@anthropic-ai/sdk'));
}

function instrumentOpenInferenceLangChain(provider, off) {
  const { LangChainInstrumentation } = require('@arizeai/openinference-instrumentation-langchain');
  const instrumentation = new LangChainInstrumentation({ traceConfig: off ? { hideInputs: true, hideOutputs: true } : {} });
  instrumentation.setTracerProvider(provider);
  instrumentation.manuallyInstrument(require('@langchain/core/callbacks/manager'));
}

function instrumentTraceloopLangChain(provider, off) {
  const { LangChainInstrumentation } = require('@traceloop/instrumentation-langchain');
  const instrumentation = new LangChainInstrumentation({ traceContent: !off });
  instrumentation.setTracerProvider(provider);
  instrumentation.manuallyInstrument({ callbackManagerModule: require('@langchain/core/callbacks/manager') });
}

function instrumentOpenInference(provider, off) {
  const { OpenAIInstrumentation } = require('@arizeai/openinference-instrumentation-openai');
  const instrumentation = new OpenAIInstrumentation({ traceConfig: off ? { hideInputs: true, hideOutputs: true } : {} });
  instrumentation.setTracerProvider(provider);
  instrumentation.manuallyInstrument(require('openai'));
}

function instrumentTraceloop(provider, off, name = '@traceloop/instrumentation-openai', openai = 'openai') {
  const { OpenAIInstrumentation } = require(name);
  const instrumentation = new OpenAIInstrumentation({ traceContent: !off });
  instrumentation.setTracerProvider(provider);
  // It looks for `Chat` on what it is given: the client class, which carries the resources as statics.
  instrumentation.manuallyInstrument(require(openai).OpenAI);
}

async function child(emitter, contentOff, port, file) {
  const spec = EMITTERS[emitter];
  const { provider, tracer } = telemetry(file, spec.spanLimits, spec.spanProcessor);
  // Log events (gen_ai.*.message, gen_ai.choice) go to a file beside the spans: <emitter>[-content-off]-logs.jsonl.
  const logs = spec.logs ? logTelemetry(file.replace(/\.jsonl$/, '-logs.jsonl')) : undefined;
  spec.instrument(provider, contentOff, logs);
  const flush = () => Promise.all([provider.forceFlush(), logs?.forceFlush()]);
  await spec.scenarios(emitter + (contentOff ? '-content-off' : ''), port, tracer, flush, contentOff);
  await provider.shutdown();
  await logs?.shutdown();
  await spec.after?.();
}

function run(args, nodeOptions = []) {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [...nodeOptions, __filename, ...args], { stdio: 'inherit' });
    p.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${args.join(' ')} exited ${code}`))));
  });
}

async function main() {
  if (process.argv[2] === '--child') {
    const [, , , emitter, off, port, file] = process.argv;
    await child(emitter, off === 'off', Number(port), file);
    return;
  }
  fs.mkdirSync(OUT, { recursive: true });
  const setArg = process.argv.indexOf('--set');
  const set = setArg === -1 ? null : Number(process.argv[setArg + 1]);
  for (const s of set === null ? Object.keys(SETS).map(Number) : [set]) await writeSet(s);
}

async function writeSet(set) {
  const server = await startServer(path.join(OUT, SETS[set]));
  for (const emitter of Object.keys(EMITTERS).filter((e) => (EMITTERS[e].set ?? 1) === set)) {
    for (const off of EMITTERS[emitter].contentOn ? ['on'] : ['on', 'off']) {
      const file = path.join(OUT, `${emitter}${off === 'off' ? '-content-off' : ''}.jsonl`);
      await run(['--child', emitter, off, String(server.port), file], EMITTERS[emitter].nodeOptions);
      process.stderr.write(`wrote ${path.relative(process.cwd(), file)}\n`);
    }
  }
  await server.close();
  if (set !== 1) return writeVersions();
  // The same spans as one pretty-printed ExportTraceServiceRequest (what an OTLP/HTTP JSON body or a saved export looks like).
  const lines = fs.readFileSync(path.join(OUT, 'ai-sdk-genai.jsonl'), 'utf8').split('\n').filter((line) => line !== '');
  const merged = { resourceSpans: lines.flatMap((line) => JSON.parse(line).resourceSpans) };
  fs.writeFileSync(path.join(OUT, 'ai-sdk-genai-request.json'), JSON.stringify(merged, null, 2) + '\n');
  writeVersions();
}

function writeVersions() {
  const versions = Object.fromEntries(Object.keys(require('./package.json').dependencies).map((name) => [name, JSON.parse(fs.readFileSync(path.join(__dirname, 'node_modules', name, 'package.json'), 'utf8')).version]));
  fs.writeFileSync(path.join(OUT, 'versions.json'), JSON.stringify({ node: process.version, packages: versions }, null, 2) + '\n');
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
