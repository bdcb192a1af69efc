#!/usr/bin/env node
/*
 * Writes test/fixtures/otel/: OTLP/JSON span files made by the real instrumentations, each
 * against a fake OpenAI-compatible server on 127.0.0.1 that logs every request and the
 * response it sent (server-log.jsonl), so tests can compare what the spans kept with what
 * went over the wire.
 *
 *   cd tools/otel-fixtures && npm ci && node generate.cjs [outdir]
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

const OUT = path.resolve(process.argv[2] !== undefined && process.argv[2] !== '--child' ? process.argv[2] : path.join(__dirname, '../../test/fixtures/otel'));
const MODEL = 'gpt-fake-1';
const ERROR_MODEL = 'gpt-fake-broken';

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
      const completionTokens = tokens(out.message.content ?? JSON.stringify(out.message.tool_calls));
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

// ---------------------------------------------------------------- OpenTelemetry, to OTLP/JSON lines
function telemetry(file, spanLimits) {
  const api = require('@opentelemetry/api');
  const { TracerProvider, BatchSpanProcessor } = require('@opentelemetry/sdk-trace');
  const { resourceFromAttributes } = require('@opentelemetry/resources');
  const { JsonTraceSerializer } = require('@opentelemetry/otlp-transformer');
  const { AsyncLocalStorageContextManager } = require('@opentelemetry/context-async-hooks');
  const fd = fs.openSync(file, 'w');
  // The Collector's file exporter: one ExportTraceServiceRequest per line, OTLP/JSON encoding.
  const exporter = {
    export(spans, done) {
      fs.writeSync(fd, Buffer.from(JsonTraceSerializer.serializeRequest(spans)).toString('utf8') + '\n');
      done({ code: 0 });
    },
    shutdown: async () => fs.closeSync(fd),
    forceFlush: async () => {},
  };
  const processor = new BatchSpanProcessor({ exporter, maxExportBatchSize: 16, scheduledDelayMillis: 60000 });
  const provider = new TracerProvider({ resource: resourceFromAttributes({ 'service.name': 'otel-fixtures' }), spanProcessors: [processor], ...(spanLimits ? { spanLimits } : {}) });
  api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  api.trace.setGlobalTracerProvider(provider);
  return { api, provider, tracer: api.trace.getTracer('otel-fixtures-agent') };
}

// ---------------------------------------------------------------- scenarios with the openai client
const WEATHER_TOOL = {
  type: 'function',
  function: { name: 'get_weather', description: 'Current weather of a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};

async function openaiScenarios(emitter, port, tracer, flush, contentOff) {
  const OpenAI = require('openai');
  const client = (scenario) => new OpenAI({ apiKey: 'sk-fake', baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0, defaultHeaders: { 'x-fixture-emitter': emitter, 'x-fixture-scenario': scenario } });
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

// ---------------------------------------------------------------- scenarios with the AI SDK
async function aiSdkScenarios(emitter, port, tracer, flush, contentOff) {
  const ai = require('ai');
  const { createOpenAI } = require('@ai-sdk/openai');
  const { z } = require('zod');
  const model = (scenario, id = MODEL) => createOpenAI({ apiKey: 'sk-fake', baseURL: `http://127.0.0.1:${port}/v1`, headers: { 'x-fixture-emitter': emitter, 'x-fixture-scenario': scenario } }).chat(id);
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
};

function instrumentOpenInference(provider, off) {
  const { OpenAIInstrumentation } = require('@arizeai/openinference-instrumentation-openai');
  const instrumentation = new OpenAIInstrumentation({ traceConfig: off ? { hideInputs: true, hideOutputs: true } : {} });
  instrumentation.setTracerProvider(provider);
  instrumentation.manuallyInstrument(require('openai'));
}

function instrumentTraceloop(provider, off, name = '@traceloop/instrumentation-openai') {
  const { OpenAIInstrumentation } = require(name);
  const instrumentation = new OpenAIInstrumentation({ traceContent: !off });
  instrumentation.setTracerProvider(provider);
  // It looks for `Chat` on what it is given: the client class, which carries the resources as statics.
  instrumentation.manuallyInstrument(require('openai').OpenAI);
}

async function child(emitter, contentOff, port, file) {
  const { provider, tracer } = telemetry(file, EMITTERS[emitter].spanLimits);
  EMITTERS[emitter].instrument(provider, contentOff);
  await EMITTERS[emitter].scenarios(emitter + (contentOff ? '-content-off' : ''), port, tracer, () => provider.forceFlush(), contentOff);
  await provider.shutdown();
}

function run(args) {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [__filename, ...args], { stdio: 'inherit' });
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
  const server = await startServer(path.join(OUT, 'server-log.jsonl'));
  for (const emitter of Object.keys(EMITTERS)) {
    for (const off of EMITTERS[emitter].contentOn ? ['on'] : ['on', 'off']) {
      const file = path.join(OUT, `${emitter}${off === 'off' ? '-content-off' : ''}.jsonl`);
      await run(['--child', emitter, off, String(server.port), file]);
      process.stderr.write(`wrote ${path.relative(process.cwd(), file)}\n`);
    }
  }
  await server.close();
  // The same spans as one pretty-printed ExportTraceServiceRequest (what an OTLP/HTTP JSON body or a saved export looks like).
  const lines = fs.readFileSync(path.join(OUT, 'ai-sdk-genai.jsonl'), 'utf8').split('\n').filter((line) => line !== '');
  const merged = { resourceSpans: lines.flatMap((line) => JSON.parse(line).resourceSpans) };
  fs.writeFileSync(path.join(OUT, 'ai-sdk-genai-request.json'), JSON.stringify(merged, null, 2) + '\n');
  const versions = Object.fromEntries(Object.keys(require('./package.json').dependencies).map((name) => [name, JSON.parse(fs.readFileSync(path.join(__dirname, 'node_modules', name, 'package.json'), 'utf8')).version]));
  fs.writeFileSync(path.join(OUT, 'versions.json'), JSON.stringify({ node: process.version, packages: versions }, null, 2) + '\n');
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
