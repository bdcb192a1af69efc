/**
 * OpenInference: `openinference.span.kind` = `LLM`; the request and response bodies kept whole
 * (`input.value` / `output.value`) first, the flattened `llm.input_messages.<i>.message.*` /
 * `llm.output_messages.<i>.message.*` where no body is kept or it is of no shape read here,
 * `llm.tools.<i>.tool.json_schema`, `llm.invocation_parameters`, `llm.model_name`,
 * `llm.provider` / `llm.system`, `llm.token_count.*`, `llm.finish_reason`. Any other kind
 * (CHAIN, TOOL, AGENT, RETRIEVER, …) is no LLM call.
 */
import type { Message } from '../../../record.js';
import { isObject, type Json } from '../../json-values.js';
import type { SpanBag } from '../bag.js';
import type { Extractor } from '../call.js';
import { bedrockToolSpec, message, requestMessages, responseMessage, structuredQuiet, text, toolCall, usageOf } from '../shapes.js';

/** One message's fields (`role`, `content`, `contents.<j>.message_content.*`, `tool_calls.<j>.tool_call.*`, …) by message index. */
function byMessage(bag: SpanBag, prefix: string): Map<number, Map<string, unknown>> {
  const byIndex = new Map<number, Map<string, unknown>>();
  for (const key of bag.keysWith(prefix)) {
    const m = /^(\d+)\.message\.(.+)$/s.exec(key.slice(prefix.length));
    if (m === null) continue;
    const i = Number(m[1]);
    if (!byIndex.has(i)) byIndex.set(i, new Map());
    byIndex.get(i)!.set(m[2], bag.take(key));
  }
  return byIndex;
}

function indexed(fields: Map<string, unknown>, pattern: RegExp): Map<string, unknown>[] {
  const found = new Map<number, Map<string, unknown>>();
  for (const [key, value] of fields) {
    const m = pattern.exec(key);
    if (m === null) continue;
    if (!found.has(Number(m[1]))) found.set(Number(m[1]), new Map());
    found.get(Number(m[1]))!.set(m[2], value);
  }
  return [...found].sort(([a], [b]) => a - b).map(([, f]) => f);
}

/**
 * A message from its fields. `message.content` is the message's text: an emitter that also
 * lists it as text parts (`contents.<j>.message_content.text`, as openinference-vercel writes
 * every text) repeats it there, so once the content is read the text parts are not read again;
 * parts of other kinds (images) still are.
 */
function readMessage(fields: Map<string, unknown>): Message {
  const parts: unknown[] = [];
  const content = fields.get('content');
  const hasContent = typeof content === 'string';
  if (hasContent) parts.push(content);
  for (const part of indexed(fields, /^contents\.(\d+)\.message_content\.(.+)$/s)) {
    const type = text(part.get('type'));
    if (type === 'text' || (type === null && typeof part.get('text') === 'string')) {
      if (!hasContent) parts.push(text(part.get('text')) ?? '');
    } else if (type === 'image') parts.push({ type: 'image_url', image_url: { url: text(part.get('image.image.url')) ?? '' } });
  }
  const calls = indexed(fields, /^tool_calls\.(\d+)\.tool_call\.(.+)$/s).map((c) => toolCall(c.get('id'), c.get('function.name'), c.get('function.arguments')));
  return message(text(fields.get('role')) ?? 'user', parts, calls, text(fields.get('tool_call_id')), text(fields.get('name')));
}

function messages(bag: SpanBag, prefix: string): Message[] | null {
  const byIndex = byMessage(bag, prefix);
  if (byIndex.size === 0) return null;
  return [...byIndex.entries()].sort(([a], [b]) => a - b).map(([, fields]) => readMessage(fields));
}

/** A JSON body OpenInference keeps whole (`input.value` / `output.value`), or undefined: never flagged as cut, the flattened attributes stand in for it. */
function body(bag: SpanBag, key: string): unknown {
  const value = bag.peek(key);
  if (typeof value !== 'string' || !value.startsWith('{')) return undefined;
  const parsed = structuredQuiet(value);
  if (parsed !== undefined) bag.take(key);
  return parsed;
}

/** The provider LangChain names in the run's metadata (`ls_provider`), where OpenInference keeps no `llm.provider`. */
function langSmithProvider(bag: SpanBag): string | null {
  const metadata = body(bag, 'metadata');
  return isObject(metadata) ? text(metadata.ls_provider) : null;
}

export const openInference: Extractor = {
  name: 'openinference',
  recognize(bag) {
    const kind = bag.peekStr('openinference.span.kind');
    if (kind === null) return null;
    return kind.toUpperCase() === 'LLM' ? 'call' : 'other';
  },
  extract(bag) {
    // The request and response bodies first: the flattened `llm.*_messages` lose what the body
    // holds (Anthropic's system prompt and all but one tool_result block of a turn; LangChain's
    // tool-call ids), and fall back in where no body is kept or it is not one read here.
    const request = body(bag, 'input.value');
    const fromRequest = isObject(request) ? requestMessages(request) : null;
    const fromResponse = responseMessage(body(bag, 'output.value'));
    // The flattened messages are read (and taken) only where the body gave none: they repeat it.
    const inputs = fromRequest ?? messages(bag, 'llm.input_messages.');
    const completion = fromResponse ?? messages(bag, 'llm.output_messages.')?.[0] ?? null;
    const tools = bag
      .keysWith('llm.tools.')
      .filter((k) => k.endsWith('.tool.json_schema'))
      .map((k) => bag.takeParsed(k))
      .filter((t) => t !== undefined)
      .map(bedrockToolSpec);
    const params = bag.takeParsed('llm.invocation_parameters');
    const p: Json = isObject(params) ? { ...params } : {};
    // The model and the tools are kept apart from the parameters (config: model, tools, params).
    delete p.model;
    delete p.tools;
    return {
      inputs,
      completion,
      tools: tools.length > 0 ? tools : null,
      model: bag.takeStr('llm.model_name'),
      provider: bag.takeStr('llm.provider') ?? bag.takeStr('llm.system') ?? langSmithProvider(bag),
      params: p,
      usage: usageOf(bag.take('llm.token_count.prompt'), bag.take('llm.token_count.completion'), bag.take('llm.token_count.prompt_details.cache_read'), bag.take('llm.token_count.completion_details.reasoning')),
      finishReason: bag.takeStr('llm.finish_reason'),
    };
  },
};
