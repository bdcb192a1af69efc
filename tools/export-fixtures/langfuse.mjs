// Langfuse export fixtures made with Langfuse's own code, run offline from a checkout of
// langfuse/langfuse (argument 1; nothing of it is copied here):
//  - packages/shared/src/server/ingestion/extractToolsBackend.ts `normalizeToolsForObservation`
//    turns each generation's input and output into the tool columns (tool_calls without names,
//    tool_call_names, tool_definitions), as ingestion does;
//  - packages/shared/src/server/utils/transforms/transformStreamTo{Jsonl,Csv,Json}.ts write the
//    rows as the blob-storage export (JSONL, CSV) and the UI export (JSON) do.
// The rows themselves are what ClickHouse returns for the export's SELECT
// (LEGACY_OBSERVATION_EXPORT_FIELDS, in that order): built here from that list, since ClickHouse
// does not run here. The Parquet file is written by DuckDB with the column types of the
// observations table (Map → MAP, Array(String) → VARCHAR[]), ClickHouse's own Parquet writer
// being out of reach. The API pages follow the fern definitions (ObservationsView, ObservationV2).
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Readable } from 'node:stream';
import ts from 'typescript';

const [checkout, out] = process.argv.slice(2);
const work = path.resolve('.langfuse-code');
mkdirSync(work, { recursive: true });
const show = (file) => execFileSync('git', ['-C', checkout, 'show', `HEAD:${file}`], { encoding: 'utf8', maxBuffer: 1 << 26 });
const load = async (file, rename = {}) => {
  let text = ts.transpileModule(show(file), { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText;
  for (const [from, to] of Object.entries(rename)) text = text.replaceAll(from, to);
  const target = path.join(work, path.basename(file).replace(/\.ts$/, '.mjs'));
  writeFileSync(target, text);
  return import(target);
};
await load('packages/shared/src/utils/unicode.ts');
await load('packages/shared/src/utils/stringify.ts', { '"./unicode"': '"./unicode.mjs"' });
const tools = await load('packages/shared/src/server/ingestion/extractToolsBackend.ts');
const fromTransforms = { '"../../../utils/stringify"': '"./stringify.mjs"' };
const { transformStreamToJsonl } = await load('packages/shared/src/server/utils/transforms/transformStreamToJsonl.ts', fromTransforms);
const { transformStreamToCsv } = await load('packages/shared/src/server/utils/transforms/transformStreamToCsv.ts', fromTransforms);
const { transformStreamToJson } = await load('packages/shared/src/server/utils/transforms/transformStreamToJson.ts', fromTransforms);

// IngestionService's stringify: a text stays as it is, anything else is its JSON.
const stored = (value) => (value == null ? null : typeof value === 'string' ? value : JSON.stringify(value));

const weatherTool = { type: 'function', function: { name: 'get_weather', description: 'Current weather of a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } };
const trace = 'b6a3c2f0-6d1e-4c8e-9f3a-2a1b0c9d8e7f';
// Generations as the Langfuse OpenAI integration and LangChain handler send them (input, output, modelParameters, usageDetails).
const observations = [
  { id: 'a1', type: 'SPAN', name: 'weather-agent', input: { question: 'What is the weather in Paris?' }, output: 'It is 18 degrees and sunny in Paris.' },
  { id: 'a2', type: 'GENERATION', parent: 'a1', name: 'OpenAI-generation', model: 'gpt-4o-mini', params: { temperature: 0.2, max_tokens: 256 },
    input: { messages: [{ role: 'system', content: 'Use tools when needed.' }, { role: 'user', content: 'What is the weather in Paris?' }], tools: [weatherTool] },
    output: { role: 'assistant', content: null, tool_calls: [{ id: 'call_weather_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
    usage: { input: 52, output: 17, total: 69 } },
  { id: 'a3', type: 'TOOL', parent: 'a1', name: 'get_weather', input: { city: 'Paris' }, output: '18C and sunny in Paris' },
  { id: 'a4', type: 'GENERATION', parent: 'a1', name: 'OpenAI-generation', model: 'gpt-4o-mini', params: { temperature: 0.2, max_tokens: 256 },
    input: [{ role: 'system', content: 'Use tools when needed.' }, { role: 'user', content: 'What is the weather in Paris?' }, { role: 'assistant', content: null, tool_calls: [{ id: 'call_weather_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] }, { role: 'tool', tool_call_id: 'call_weather_1', content: '18C and sunny in Paris' }],
    output: { role: 'assistant', content: 'It is 18 degrees and sunny in Paris.' }, usage: { input: 80, output: 11, total: 91, input_cached_tokens: 64 } },
  // A streamed answer: the integration keeps the text it assembled, not a message.
  { id: 'a5', type: 'GENERATION', name: 'OpenAI-generation', model: 'gpt-4o-mini', params: { temperature: 0.7, stream: true },
    input: [{ role: 'user', content: 'Tell me a short fact about owls.' }], output: 'Owls can turn their heads about 270 degrees.', usage: { input: 14, output: 10, total: 24 } },
  // Cut at max_tokens: Langfuse keeps no finish reason, only the output tokens.
  { id: 'a6', type: 'GENERATION', name: 'OpenAI-generation', model: 'gpt-4o-mini', params: { max_tokens: 5 },
    input: [{ role: 'user', content: 'Write the history of Rome.' }], output: { role: 'assistant', content: 'The history of Rome' }, usage: { input: 12, output: 5, total: 17 } },
  // A failed call: level ERROR, the reason in status_message, no output.
  { id: 'a7', type: 'GENERATION', name: 'OpenAI-generation', model: 'gpt-4o-mini', params: {}, level: 'ERROR', statusMessage: '400 Invalid request: the model refused the context',
    input: [{ role: 'user', content: 'FAIL this request' }], output: null, usage: {} },
  { id: 'a8', type: 'EVENT', name: 'user-feedback', input: null, output: null },
];

const t0 = Date.UTC(2026, 11, 6, 4, 32, 41, 715);
const clickhouseTime = (ms) => new Date(ms).toISOString().replace('T', ' ').replace('Z', '');
const rows = observations.map((o, i) => {
  const normalized = tools.normalizeToolsForObservation(o.input, o.output, null);
  const start = t0 + i * 400;
  return {
    id: `${trace.slice(0, 8)}-0000-4000-8000-00000000000${i + 1}`.replace('00000000000' + (i + 1), String(i + 1).padStart(12, '0')),
    trace_id: trace,
    project_id: 'cm5proj0000000000000000',
    environment: 'default',
    type: o.type,
    parent_observation_id: o.parent ? `${trace.slice(0, 8)}-0000-4000-8000-${String(observations.findIndex((p) => p.id === o.parent) + 1).padStart(12, '0')}` : null,
    start_time: clickhouseTime(start),
    end_time: clickhouseTime(start + 250 + i * 10),
    name: o.name,
    metadata: {},
    level: o.level ?? 'DEFAULT',
    status_message: o.statusMessage ?? null,
    version: null,
    input: stored(normalized.input),
    output: stored(normalized.output),
    provided_model_name: o.model ?? null,
    model_parameters: o.model ? JSON.stringify(o.params) : null,
    usage_details: o.usage ?? {},
    cost_details: {},
    completion_start_time: null,
    prompt_name: null,
    prompt_version: null,
    total_cost: null,
    latency: (250 + i * 10) / 1000,
    time_to_first_token: null,
    model_id: null,
    created_at: clickhouseTime(start + 1000),
    updated_at: clickhouseTime(start + 1000),
    prompt_id: null,
    tool_calls: normalized.toolCalls,
    tool_call_names: normalized.toolCallNames,
    tool_definitions: normalized.toolDefinitions,
    usage_pricing_tier_name: null,
  };
});

const through = async (transform, items) => {
  const chunks = [];
  await new Promise((resolve, reject) => Readable.from(items).pipe(transform).on('data', (c) => chunks.push(c)).on('end', resolve).on('error', reject));
  return chunks.join('');
};
const blob = path.join(out, 'blob-export');
mkdirSync(blob, { recursive: true });
writeFileSync(path.join(blob, 'observations.jsonl'), await through(transformStreamToJsonl(), rows));
writeFileSync(path.join(blob, 'observations.csv'), await through(transformStreamToCsv(), rows));

// The UI export and the API: the domain Observation (camelCase), io parsed as JSON (convertObservation, shouldJsonParse).
const parsed = (text) => { if (text == null) return null; try { return JSON.parse(text); } catch { return text; } };
const domain = rows.map((r) => ({
  id: r.id, traceId: r.trace_id, projectId: r.project_id, environment: r.environment, type: r.type, startTime: r.start_time.replace(' ', 'T') + 'Z', endTime: r.end_time.replace(' ', 'T') + 'Z',
  name: r.name, metadata: {}, parentObservationId: r.parent_observation_id, level: r.level, statusMessage: r.status_message, version: null,
  model: r.provided_model_name, internalModelId: null, modelParameters: parsed(r.model_parameters), input: parsed(r.input), output: parsed(r.output),
  completionStartTime: null, promptId: null, promptName: null, promptVersion: null, latency: r.latency * 1000, timeToFirstToken: null,
  usageDetails: r.usage_details, costDetails: {}, totalCost: null, inputUsage: r.usage_details.input ?? 0, outputUsage: r.usage_details.output ?? 0, totalUsage: r.usage_details.total ?? 0,
  toolDefinitions: r.tool_definitions, toolCalls: r.tool_calls, toolCallNames: r.tool_call_names, traceName: 'weather-agent', traceTags: [], userId: null,
}));
const ui = path.join(out, 'ui-export');
mkdirSync(ui, { recursive: true });
writeFileSync(path.join(ui, 'observations.json'), await through(transformStreamToJson(), domain));
writeFileSync(path.join(ui, 'observations.jsonl'), await through(transformStreamToJsonl(), domain));
// API v1 (ObservationsView: model, modelParameters, usage {input, output, total, unit}) and v2 (ObservationV2: providedModelName, io as JSON strings unless parseIoAsJson).
const api = path.join(out, 'api');
mkdirSync(api, { recursive: true });
const v1 = domain.map(({ toolDefinitions, toolCalls, toolCallNames, traceTags, inputUsage, outputUsage, totalUsage, ...o }) => ({ ...o, usage: { input: inputUsage, output: outputUsage, total: totalUsage, unit: 'TOKENS' }, promptTokens: inputUsage, completionTokens: outputUsage, totalTokens: totalUsage }));
writeFileSync(path.join(api, 'observations-v1.json'), JSON.stringify({ data: v1, meta: { page: 1, limit: 50, totalItems: v1.length, totalPages: 1 } }, null, 2) + '\n');
const v2 = rows.map((r) => ({ id: r.id, traceId: r.trace_id, startTime: domain[0].startTime, endTime: null, projectId: r.project_id, parentObservationId: r.parent_observation_id, type: r.type, name: r.name, level: r.level, statusMessage: r.status_message,
  input: r.input, output: r.output, providedModelName: r.provided_model_name, modelParameters: parsed(r.model_parameters), usageDetails: r.usage_details, costDetails: {}, totalCost: null, modelId: null, inputPrice: null, outputPrice: null, totalPrice: null }));
writeFileSync(path.join(api, 'observations-v2.json'), JSON.stringify({ data: v2, meta: { cursor: null } }) + '\n');

// Parquet: the blob export's columns with the observations table's types.
const duck = createRequire(process.env.DUCKDB_FROM)('@duckdb/node-api');
const instance = await duck.DuckDBInstance.create(':memory:');
const c = await instance.connect();
const jsonl = path.join(work, 'rows.jsonl');
writeFileSync(jsonl, rows.map((r) => JSON.stringify({ ...r, usage_details: Object.entries(r.usage_details).map(([k, v]) => ({ k, v })), tool_definitions: Object.entries(r.tool_definitions).map(([k, v]) => ({ k, v })), metadata: [], cost_details: [] })).join('\n') + '\n');
const kv = (type) => `STRUCT(k VARCHAR, v ${type})[]`;
await c.run(`COPY (SELECT id, trace_id, project_id, environment, type, parent_observation_id, start_time::TIMESTAMP_MS AS start_time, end_time::TIMESTAMP_MS AS end_time, name,
  map_from_entries(metadata) AS metadata, level, status_message, version, input, output, provided_model_name, model_parameters,
  map_from_entries(usage_details) AS usage_details, map_from_entries(cost_details) AS cost_details, completion_start_time::TIMESTAMP_MS AS completion_start_time, prompt_name, prompt_version::UINTEGER AS prompt_version,
  total_cost::DECIMAL(18,12) AS total_cost, latency, time_to_first_token, model_id, created_at::TIMESTAMP_MS AS created_at, updated_at::TIMESTAMP_MS AS updated_at, prompt_id,
  tool_calls, tool_call_names, map_from_entries(tool_definitions) AS tool_definitions, usage_pricing_tier_name
  FROM read_json('${jsonl}', format='newline_delimited', columns={id:'VARCHAR', trace_id:'VARCHAR', project_id:'VARCHAR', environment:'VARCHAR', type:'VARCHAR', parent_observation_id:'VARCHAR', start_time:'VARCHAR', end_time:'VARCHAR', name:'VARCHAR',
  metadata:'${kv('VARCHAR')}', level:'VARCHAR', status_message:'VARCHAR', version:'VARCHAR', input:'VARCHAR', output:'VARCHAR', provided_model_name:'VARCHAR', model_parameters:'VARCHAR',
  usage_details:'${kv('UBIGINT')}', cost_details:'${kv('DECIMAL(18,12)')}', completion_start_time:'VARCHAR', prompt_name:'VARCHAR', prompt_version:'VARCHAR', total_cost:'VARCHAR', latency:'DOUBLE', time_to_first_token:'DOUBLE',
  model_id:'VARCHAR', created_at:'VARCHAR', updated_at:'VARCHAR', prompt_id:'VARCHAR', tool_calls:'VARCHAR[]', tool_call_names:'VARCHAR[]', tool_definitions:'${kv('VARCHAR')}', usage_pricing_tier_name:'VARCHAR'}))
  TO '${path.join(blob, 'observations.parquet')}' (FORMAT parquet)`);
console.log('langfuse rows', rows.length);
