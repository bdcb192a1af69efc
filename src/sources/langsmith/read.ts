/**
 * LangSmith runs, as the platform lets them out (export-rows.ts reads the file): the bulk data
 * export (Parquet files in dated folders, `inputs`, `outputs` and `extra` as JSON text), and
 * the runs `Client.listRuns()` yields or the `langsmith` command line prints (JSON, one run per
 * line, or a list). Fields are the Run data format's (langchain-ai/langsmith-sdk, js/src/schemas.ts
 * `Run`): `run_type`, `inputs`, `outputs`, `extra`, `error`, `trace_id`, `parent_run_id`,
 * `prompt_tokens`, `completion_tokens`, `total_cost`.
 *
 * A run of type `llm` is a model call and becomes a record; chain, tool, prompt, retriever and
 * parser runs sit beside it in the same trace and are not calls. Messages are read in the
 * shapes LangChain writes (serialized `{lc, type: 'constructor', id, kwargs}` messages,
 * `{type: 'human', …}` dicts, `generations`) and the OpenAI shapes the SDK's wrappers write
 * (`messages` with roles, `choices`).
 */
import type { Message, Status, TraceRecord, Usage } from '../../record.js';
import { epochSecondsOf } from '../../time.js';
import type { TraceFile } from '../trace-file.js';
import { field, ioCell, jsonCell, readExportRecords, textCell } from '../export-rows.js';
import { count, isObject, num, str, type Json } from '../json-values.js';
import { chatMessages, langChainMessages, requestMessages, responseMessage } from '../otlp/shapes.js';
import { otlpConfig } from '../otlp/read.js';
import { RebuiltRecord } from '../rebuilt-record.js';
import type { SourceBatch } from '../source.js';

const KIND = 'langsmith';

/** Why an llm run holds nothing to train on. */
export const NO_INPUT = 'no_input';

function seconds(value: unknown): number | null {
  const text = textCell(value);
  if (text === null) return null;
  // The API writes times without a zone, meaning UTC.
  return epochSecondsOf(text);
}

function objectCell(value: unknown): Json {
  const parsed = ioCell(value);
  return isObject(parsed) ? parsed : {};
}

/** The messages an llm run was given: LangChain's `messages` (a list per prompt in a batch), chat messages with roles, or completion `prompts`. */
function inputMessages(inputs: Json): Message[] | null {
  const list = inputs.messages;
  if (Array.isArray(list) && list.length > 0) {
    const first = list.length === 1 && Array.isArray(list[0]) ? list[0] : list;
    if (first.every((m: unknown) => isObject(m) && typeof m.role === 'string')) return requestMessages({ ...inputs, messages: first }) ?? chatMessages(first);
    return langChainMessages(first);
  }
  if (Array.isArray(inputs.prompts) && typeof inputs.prompts[0] === 'string') return [{ role: 'user', content: inputs.prompts[0] }];
  if (typeof inputs.prompt === 'string') return [{ role: 'user', content: inputs.prompt }];
  if (typeof inputs.input === 'string') return [{ role: 'user', content: inputs.input }];
  return null;
}

/** The answer: LangChain `generations`, an OpenAI response (`choices`), or `output` as a text or message. */
function outputMessage(outputs: Json | null): Message | null {
  if (outputs === null) return null;
  const response = responseMessage(outputs);
  if (response !== null) return response;
  const output = outputs.output;
  if (typeof output === 'string') return { role: 'assistant', content: output };
  if (isObject(output)) return responseMessage(output) ?? langChainMessages([output])?.[0] ?? (typeof output.content === 'string' ? { role: 'assistant', content: output.content } : null);
  return null;
}

/** The recorded finish reason: a generation's `generationInfo`, its message's `response_metadata`, or an OpenAI choice's. */
function finishReason(outputs: Json | null): string | null {
  if (outputs === null) return null;
  const generation = Array.isArray(outputs.generations) && Array.isArray(outputs.generations[0]) ? outputs.generations[0].find(isObject) : undefined;
  if (isObject(generation)) {
    const info = isObject(generation.generationInfo) ? generation.generationInfo : isObject(generation.generation_info) ? generation.generation_info : {};
    const message = isObject(generation.message) ? generation.message : {};
    const fields = isObject(message.kwargs) ? message.kwargs : isObject(message.data) ? message.data : message;
    const metadata = isObject(fields.response_metadata) ? fields.response_metadata : {};
    return str(info.finish_reason) ?? str(metadata.finish_reason) ?? str(metadata.stop_reason);
  }
  const choice = Array.isArray(outputs.choices) ? outputs.choices.find(isObject) : undefined;
  return isObject(choice) ? str(choice.finish_reason) : null;
}

/** LangChain's `usage_metadata` on the answer, when the run's token columns are not filled. */
function messageUsage(outputs: Json | null): Usage | null {
  if (outputs === null) return null;
  const generation = Array.isArray(outputs.generations) && Array.isArray(outputs.generations[0]) ? outputs.generations[0].find(isObject) : undefined;
  const message = isObject(generation) && isObject(generation.message) ? generation.message : null;
  const fields = message === null ? null : isObject(message.kwargs) ? message.kwargs : isObject(message.data) ? message.data : message;
  const usage = fields !== null && isObject(fields.usage_metadata) ? fields.usage_metadata : isObject(outputs.usage) ? outputs.usage : null;
  if (usage === null) return null;
  const prompt = count(usage.input_tokens ?? usage.prompt_tokens);
  const completion = count(usage.output_tokens ?? usage.completion_tokens);
  if (prompt === null && completion === null) return null;
  const inDetails = isObject(usage.input_token_details) ? usage.input_token_details : {};
  const outDetails = isObject(usage.output_token_details) ? usage.output_token_details : {};
  return {
    prompt_tokens: prompt ?? 0,
    completion_tokens: completion ?? 0,
    total_tokens: count(usage.total_tokens) ?? (prompt ?? 0) + (completion ?? 0),
    cached_tokens: count(inDetails.cache_read) ?? 0,
    cache_creation_tokens: count(inDetails.cache_creation) ?? 0,
    reasoning_tokens: count(outDetails.reasoning) ?? 0,
  };
}

function columnUsage(row: Json): Usage | null {
  const prompt = count(jsonCell(row.prompt_tokens));
  const completion = count(jsonCell(row.completion_tokens));
  if ((prompt ?? 0) === 0 && (completion ?? 0) === 0) return null;
  return { prompt_tokens: prompt ?? 0, completion_tokens: completion ?? 0, total_tokens: count(jsonCell(row.total_tokens)) ?? (prompt ?? 0) + (completion ?? 0), cached_tokens: 0, cache_creation_tokens: 0, reasoning_tokens: 0 };
}

/** The record of one run, or null when the run is no model call. */
export function recordOfRun(file: TraceFile, row: Json, line: number, offset: number): TraceRecord | null {
  if (textCell(row.run_type) !== 'llm') return null;
  const id = textCell(row.id) ?? `row-${line}`;
  const inputs = objectCell(row.inputs);
  const outputsValue = ioCell(field(row, 'outputs'));
  const outputs = isObject(outputsValue) ? outputsValue : null;
  const extra = objectCell(row.extra);
  const metadata = isObject(extra.metadata) ? extra.metadata : {};
  const invocation = isObject(extra.invocation_params) ? extra.invocation_params : {};
  const error = textCell(row.error);
  const messages = inputMessages(inputs);
  const completion = outputMessage(outputs);
  const status: Status = error !== null ? 'exception' : messages !== null && completion !== null ? 'ok' : 'no_output';
  const model = str(metadata.ls_model_name) ?? str(invocation.model) ?? str(invocation.model_name) ?? (isObject(outputs?.llm_output) ? str(outputs.llm_output.model_name) : null);
  const tools = Array.isArray(invocation.tools) ? invocation.tools : Array.isArray(inputs.tools) ? inputs.tools : isObject(extra.options) && Array.isArray(extra.options.tools) ? extra.options.tools : null;
  const params: Json = {};
  for (const [name, value] of Object.entries(invocation)) if (name !== 'tools' && name !== 'model' && name !== 'messages') params[name] = value;
  const config = otlpConfig({ model, params, tools });
  const start = seconds(row.start_time);
  const end = seconds(row.end_time);
  return new RebuiltRecord({
    source: KIND,
    ref: { file: file.display, line, offset },
    callId: id,
    parentCallId: textCell(row.parent_run_id) ?? null,
    program: textCell(field(row, 'session_name')) ?? '',
    module: textCell(row.name) ?? model ?? '',
    timestamp: start,
    duration: start !== null && end !== null && end >= start ? Math.round((end - start) * 1e6) / 1e6 : null,
    usage: columnUsage(row) ?? messageUsage(outputs),
    cost: num(jsonCell(row.total_cost)),
    status,
    model,
    provider: str(metadata.ls_provider),
    inputs: messages ?? [],
    completion,
    exception: error,
    partial: false,
    notExportable: messages === null && error === null ? `${NO_INPUT}: the llm run's inputs are ${Object.keys(inputs).length === 0 ? 'absent' : 'of a shape not read as messages'}` : null,
    stopReason: finishReason(outputs),
    config,
    offeredTools: config.tools,
  });
}

/** Records of a LangSmith runs file. */
export function readLangsmithFile(file: TraceFile): AsyncGenerator<SourceBatch> {
  return readExportRecords(file, recordOfRun);
}
