/**
 * The fallback, for spans no named dialect recognizes (no marker of any extractor before it):
 * an attribute whose key says it holds a call's input or output (`input.value`, `*.input`,
 * `*.output`, `*.request`, `*.response`, `*.llm_request`, `*.llm_response`) and whose value
 * parses whole as a chat request (OpenAI or Anthropic messages, Bedrock Converse, Gemini
 * `contents` as Google ADK's `gcp.vertex.agent.llm_request` holds them, LangChain's serialized
 * messages, or a bare list of chat messages) is the call's input; one that parses as a response
 * (OpenAI `choices`, Anthropic's message, Bedrock's `output`, Gemini's candidate or ADK's
 * `content`, LangChain's `generations`, or one assistant message) its answer. It also reads a
 * span a named dialect recognized but found no input in (ADK's GenAI span keeps the content
 * only in its own request and response attributes), filling what is still empty. Nothing is guessed: a value of any other
 * shape, or with one message of a shape not known here, is not read, the record says it was
 * mapped by `fallback` (mapped_by), and a span whose input is not read is no record.
 */
import type { Message } from '../../../record.js';
import { isObject, type Json } from '../../json-values.js';
import type { SpanBag } from '../bag.js';
import type { CallFields, Extractor } from '../call.js';
import { chatMessages, knownContent, requestMessages, responseMessage, structuredQuiet, text, usageOf } from '../shapes.js';

/** Request fields that are no sampling parameter. */
const NOT_PARAMS = new Set(['messages', 'system', 'model', 'modelId', 'tools', 'contents', 'config', 'inferenceConfig', 'system_instruction', 'systemInstruction', 'tool_config', 'toolConfig', 'live_connect_config', 'labels']);

const INPUT_KEY = /(^|\.)(input|request|llm_request)(\.value)?$/;
const OUTPUT_KEY = /(^|\.)(output|response|llm_response)(\.value)?$/;

/** Whether a key may be an input or output one: every such key ends so (a cheap test before the patterns). */
function mayHold(key: string): boolean {
  return key.endsWith('t') || key.endsWith('e');
}

/** A chat message list, every message of a role and a content read here. */
function isMessageList(list: unknown): list is Json[] {
  return Array.isArray(list) && list.length > 0 && list.every((m) => isObject(m) && typeof m.role === 'string' && knownContent(m.content));
}

function readRequest(value: unknown): Read<Message[]> | null {
  if (isMessageList(value)) return { read: chatMessages(value), body: null };
  if (!isObject(value)) return null;
  const messages = requestMessages(value);
  return messages !== null && messages.length > 0 ? { read: messages, body: value } : null;
}

function readResponse(value: unknown): Read<Message> | null {
  if (!isObject(value)) return null;
  const message = responseMessage(value);
  if (message !== null) return { read: message, body: value };
  if (value.role !== 'assistant' || !knownContent(value.content)) return null;
  const single = chatMessages([value])[0];
  return single !== undefined ? { read: single, body: null } : null;
}

/** What a value was read as, and the body it came from (null for a bare message list or message). */
interface Read<T> {
  read: T;
  body: Json | null;
}

/** The first candidate `reader` reads, its attribute taken; null when none. */
function firstRead<T>(bag: SpanBag, list: [string, unknown][], reader: (value: unknown) => Read<T> | null): Read<T> | null {
  for (const [key, value] of list) {
    const read = reader(value);
    if (read === null) continue;
    bag.take(key);
    return read;
  }
  return null;
}

/** The span's values under input and output keys, parsed (not taken: the fallback takes only what it reads). */
function candidates(bag: SpanBag): { inputs: [string, unknown][]; outputs: [string, unknown][] } {
  const inputs: [string, unknown][] = [];
  const outputs: [string, unknown][] = [];
  for (const [key, value] of bag.entries()) {
    if (!mayHold(key)) continue;
    const isInput = INPUT_KEY.test(key);
    if (!isInput && !OUTPUT_KEY.test(key)) continue;
    const parsed = typeof value === 'string' ? structuredQuiet(value) : value;
    if (!isObject(parsed) && !Array.isArray(parsed)) continue;
    (isInput ? inputs : outputs).push([key, parsed]);
  }
  return { inputs, outputs };
}

export const fallback: Extractor = {
  name: 'fallback',
  recognize(bag) {
    for (const [key] of bag.entries()) if (mayHold(key) && INPUT_KEY.test(key)) return 'call';
    return null;
  },
  extract(bag) {
    const { inputs, outputs } = candidates(bag);
    const out: CallFields = {};
    const request = firstRead(bag, inputs, readRequest);
    if (request === null) return {};
    out.inputs = request.read;
    if (request.body !== null) {
      const body = request.body;
      out.model = text(body.model) ?? text(body.modelId);
      // Gemini keeps the tools and the sampling parameters in `config`.
      const config = isObject(body.config) ? body.config : null;
      const tools = body.tools ?? config?.tools;
      if (Array.isArray(tools) && tools.length > 0) out.tools = tools;
      const params: Json = {};
      for (const [name, v] of Object.entries(body)) if (!NOT_PARAMS.has(name)) params[name] = v;
      for (const nested of [body.inferenceConfig, config]) if (isObject(nested)) for (const [name, v] of Object.entries(nested)) if (!NOT_PARAMS.has(name)) params[name] = v;
      out.params = params;
    }
    const response = firstRead(bag, outputs, readResponse);
    if (response === null) return out;
    out.completion = response.read;
    if (response.body !== null) {
      const body = response.body;
      const choice = Array.isArray(body.choices) ? body.choices.find(isObject) : Array.isArray(body.candidates) ? body.candidates.find(isObject) : undefined;
      out.finishReason = (choice !== undefined ? (text(choice.finish_reason) ?? text(choice.finishReason)) : null) ?? text(body.stop_reason) ?? text(body.stopReason) ?? text(body.finish_reason) ?? text(body.finishReason);
      const u = isObject(body.usage) ? body.usage : isObject(body.usage_metadata) ? body.usage_metadata : isObject(body.usageMetadata) ? body.usageMetadata : null;
      if (u !== null) {
        out.usage = usageOf(
          u.prompt_tokens ?? u.input_tokens ?? u.inputTokens ?? u.prompt_token_count ?? u.promptTokenCount,
          u.completion_tokens ?? u.output_tokens ?? u.outputTokens ?? u.candidates_token_count ?? u.candidatesTokenCount,
          u.cache_read_input_tokens ?? u.cached_content_token_count ?? u.cachedContentTokenCount,
        );
      }
      out.model ??= text(body.model);
    }
    return out;
  },
};
