/**
 * Langfuse observations, as the platform lets them out (export-rows.ts reads the file):
 *
 * - the scheduled blob-storage export (Parquet, JSONL, CSV), snake_case columns as
 *   `LEGACY_OBSERVATION_EXPORT_FIELDS` (langfuse/langfuse, packages/shared/src/domain/
 *   observation-field-groups.ts) lists them: `input` / `output` JSON held in strings,
 *   `provided_model_name`, `model_parameters` (a JSON string), `usage_details` (a map),
 *   `tool_calls` (JSON strings without the function name), `tool_call_names` beside them,
 *   `tool_definitions` (name → JSON of description and parameters);
 * - the UI's export of observations (JSON, JSONL, CSV) and the public API's pages
 *   (`GET /api/public/observations` v1, `/api/public/v2/observations`): the same fields in
 *   camelCase (`traceId`, `parentObservationId`, `model` or `providedModelName`, `usage`).
 *
 * An observation of type `GENERATION` is a model call and becomes a record; spans, events,
 * tools and agents are not calls. Level `ERROR` is a failed call (`status_message` says why).
 * What the export does not hold is not invented: there is no finish reason, so an answer
 * whose output tokens equal the `max_tokens` asked is marked cut (`cutValue`), and a tool
 * call's name comes from the names column when its entry lacks it.
 */
import { writeJson } from '../../canonical/json-value.js';
import type { Message, Status, ToolCall, TraceRecord, Usage } from '../../record.js';
import { epochSecondsOf } from '../../time.js';
import type { TraceFile } from '../trace-file.js';
import { field, ioCell, jsonCell, mapCell, readExportRecords, textCell } from '../export-rows.js';
import { count, isObject, num, str, type Json } from '../json-values.js';
import { chatMessages, langChainMessages, requestMessages, responseMessage } from '../otlp/shapes.js';
import { otlpConfig } from '../otlp/read.js';
import { RebuiltRecord } from '../rebuilt-record.js';
import type { SourceBatch } from '../source.js';

const KIND = 'langfuse';

/** Why a generation holds nothing to train on. */
export const NO_INPUT = 'no_input';

function seconds(value: unknown): number | null {
  const text = textCell(value);
  return text === null ? null : epochSecondsOf(text);
}

/** The input messages: a chat list (OpenAI or LangChain shapes), a request `{messages, tools}`, or a prompt text. */
function inputMessages(input: unknown): Message[] | null {
  if (typeof input === 'string') return input === '' ? null : [{ role: 'user', content: input }];
  if (Array.isArray(input)) {
    if (input.length === 0) return null;
    if (input.every((m) => isObject(m) && typeof m.role === 'string')) return chatMessages(input);
    return langChainMessages(input.length === 1 && Array.isArray(input[0]) ? input[0] : input);
  }
  if (isObject(input)) {
    if (Array.isArray(input.messages)) return requestMessages(input) ?? chatMessages(input.messages);
    if (typeof input.prompt === 'string') return [{ role: 'user', content: input.prompt }];
  }
  return null;
}

/** The answer: a text (a streamed answer is kept as its plain text), an assistant message, a response body. */
function outputMessage(output: unknown): Message | null {
  if (output === undefined || output === null) return null;
  if (typeof output === 'string') return { role: 'assistant', content: output };
  if (isObject(output)) {
    const response = responseMessage(output);
    if (response !== null) return response;
    if (typeof output.role === 'string' || 'content' in output || Array.isArray(output.tool_calls)) {
      return chatMessages([{ ...output, role: 'assistant', content: output.content ?? '' }])[0] ?? null;
    }
  }
  // A structured output of a shape not read here: its compact JSON, as Synalinks records one.
  return { role: 'assistant', content: writeJson(output) };
}

/** A list cell: a JSON list, or a list already (Parquet, the API). */
function listCell(value: unknown): unknown[] {
  const parsed = jsonCell(value);
  return Array.isArray(parsed) ? parsed : [];
}

/** The tool-call columns as calls: each entry's JSON (`{id, arguments, type, index}`, no name), its name from `tool_call_names`. */
function columnToolCalls(row: Json): ToolCall[] {
  const names = listCell(field(row, 'tool_call_names', 'toolCallNames'));
  return listCell(field(row, 'tool_calls', 'toolCalls')).flatMap((entry, i) => {
    const call = jsonCell(entry);
    if (!isObject(call)) return [];
    const args = call.arguments;
    const name = str(call.name) ?? str(names[i]) ?? '';
    const out: ToolCall = { type: 'function', function: { name, arguments: typeof args === 'string' ? (jsonCell(args) ?? args) : (args ?? {}) } };
    if (typeof call.id === 'string' && call.id !== '') out.id = call.id;
    return [out];
  });
}

/** Calls in the answer that lack a name take it from the names column, by position. */
function namedCalls(message: Message, row: Json): void {
  const names = listCell(field(row, 'tool_call_names', 'toolCallNames'));
  message.tool_calls?.forEach((call, i) => {
    if (call.function.name === '' && typeof names[i] === 'string') call.function.name = names[i] as string;
  });
}

/** `tool_definitions` (name → JSON `{description, parameters}`, parameters a JSON text) as OpenAI function tools. */
function columnTools(row: Json): unknown[] | null {
  const map = mapCell(field(row, 'tool_definitions', 'toolDefinitions'));
  if (map === null || Object.keys(map).length === 0) return null;
  return Object.entries(map).map(([name, raw]) => {
    const definition = jsonCell(raw);
    const fn: Json = { name };
    if (isObject(definition)) {
      if (typeof definition.description === 'string' && definition.description !== '') fn.description = definition.description;
      const parameters = jsonCell(definition.parameters);
      if (parameters !== undefined && parameters !== '') fn.parameters = parameters;
    }
    return { type: 'function', function: fn };
  });
}

/** Usage from `usage_details` (input, output, total, cache and reasoning details) or the v1 API's `usage`. */
function usageOfRow(row: Json): Usage | null {
  const details = mapCell(field(row, 'usage_details', 'usageDetails'));
  const v1 = mapCell(row.usage);
  const source = details !== null && Object.keys(details).length > 0 ? details : v1;
  if (source === null) return null;
  const prompt = count(jsonCell(source.input ?? source.promptTokens ?? source.prompt_tokens));
  const completion = count(jsonCell(source.output ?? source.completionTokens ?? source.completion_tokens));
  if (prompt === null && completion === null) return null;
  const total = count(jsonCell(source.total ?? source.totalTokens));
  const cached = count(jsonCell(source.input_cached_tokens ?? source.input_cache_read ?? source.cache_read_input_tokens));
  const creation = count(jsonCell(source.input_cache_creation ?? source.cache_creation_input_tokens));
  const reasoning = count(jsonCell(source.output_reasoning_tokens ?? source.output_reasoning));
  return {
    prompt_tokens: prompt ?? 0,
    completion_tokens: completion ?? 0,
    total_tokens: total ?? (prompt ?? 0) + (completion ?? 0),
    cached_tokens: cached ?? 0,
    cache_creation_tokens: creation ?? 0,
    reasoning_tokens: reasoning ?? 0,
  };
}

/** The parameters asked for: a JSON object (Langfuse keeps their values as recorded, numbers often as text). */
function paramsOf(row: Json): Json {
  const params = jsonCell(field(row, 'model_parameters', 'modelParameters'));
  if (!isObject(params)) return {};
  const out: Json = {};
  for (const [name, value] of Object.entries(params)) out[name] = jsonCell(value);
  return out;
}

const MAX_TOKEN_PARAMS = ['max_tokens', 'max_completion_tokens', 'maxTokens', 'max_output_tokens', 'maxOutputTokens'];

/** The record of one observation row, or null when the row is no model call. */
export function recordOfRow(file: TraceFile, row: Json, line: number, offset: number): TraceRecord | null {
  if (textCell(row.type)?.toUpperCase() !== 'GENERATION') return null;
  const id = textCell(row.id) ?? `row-${line}`;
  const traceId = textCell(field(row, 'trace_id', 'traceId'));
  const parent = textCell(field(row, 'parent_observation_id', 'parentObservationId'));
  const input = ioCell(field(row, 'input'));
  const output = ioCell(field(row, 'output'));
  const params = paramsOf(row);
  const model = textCell(field(row, 'provided_model_name', 'providedModelName', 'model'));
  const level = textCell(row.level);
  const failed = level?.toUpperCase() === 'ERROR';
  const errorText = textCell(field(row, 'status_message', 'statusMessage'));

  const inputs = inputMessages(input);
  let completion = outputMessage(output);
  // A streamed answer that only called tools leaves no output text: its calls are in the tool columns.
  if (completion === null && !failed) {
    const calls = columnToolCalls(row);
    if (calls.length > 0) completion = { role: 'assistant', content: '', tool_calls: calls };
  } else if (completion !== null) {
    if (completion.tool_calls === undefined || completion.tool_calls.length === 0) {
      const calls = columnToolCalls(row);
      if (calls.length > 0) completion.tool_calls = calls;
    } else namedCalls(completion, row);
  }
  const requestTools = isObject(input) && Array.isArray(input.tools) ? input.tools : null;
  const tools = requestTools ?? columnTools(row);
  const usage = usageOfRow(row);
  const status: Status = failed ? 'exception' : completion !== null && inputs !== null ? 'ok' : 'no_output';

  const asked = MAX_TOKEN_PARAMS.map((name) => count(params[name])).find((n) => n !== null && n !== undefined) ?? null;
  const cut = status === 'ok' && asked !== null && usage !== null && usage.completion_tokens === asked
    ? `output: ${asked} output tokens, the max_tokens asked (Langfuse keeps no finish reason)`
    : null;

  const start = seconds(field(row, 'start_time', 'startTime'));
  const end = seconds(field(row, 'end_time', 'endTime'));
  const config = otlpConfig({ model, params, tools });
  return new RebuiltRecord({
    source: KIND,
    ref: { file: file.display, line, offset },
    callId: id,
    parentCallId: parent ?? traceId,
    program: textCell(field(row, 'trace_name', 'traceName')) ?? textCell(row.environment) ?? '',
    module: textCell(row.name) ?? model ?? '',
    timestamp: start,
    duration: start !== null && end !== null && end >= start ? Math.round((end - start) * 1e6) / 1e6 : null,
    usage,
    cost: num(jsonCell(field(row, 'total_cost', 'totalCost', 'calculatedTotalCost'))),
    status,
    model,
    provider: null,
    inputs: inputs ?? [],
    completion,
    exception: failed ? (errorText ?? `level ${level}`) : null,
    partial: false,
    notExportable: inputs === null && !failed ? `${NO_INPUT}: the generation's input is ${input === undefined ? 'absent (the io field group was not exported)' : 'of a shape not read as messages'}` : null,
    stopReason: null,
    config,
    cutValue: cut,
    offeredTools: config.tools,
  });
}

/** Records of a Langfuse observations file. */
export function readLangfuseFile(file: TraceFile): AsyncGenerator<SourceBatch> {
  return readExportRecords(file, recordOfRow);
}
