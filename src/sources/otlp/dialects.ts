/**
 * What one span says about an LLM call, in each dialect instrumentations write (docs/sources.md
 * lists every attribute read). A span is an LLM call when one dialect marks it so; which
 * dialect is read is decided per span, first match wins:
 *
 * 1. OpenInference: `openinference.span.kind` = `LLM` (`llm.*` attributes).
 * 2. Vercel AI SDK: an `ai.*.doGenerate` / `ai.*.doStream` span (`ai.operationId` or its name).
 * 3. MLflow: `mlflow.spanType` CHAT_MODEL or LLM (`mlflow.spanInputs` / `mlflow.spanOutputs`).
 * 4. OTel GenAI semantic conventions: `gen_ai.operation.name` chat / text_completion /
 *    generate_content, or `gen_ai.request.model` on a span that is no tool, agent or
 *    embeddings span. Within it the content is taken from, in order: the current attributes
 *    (`gen_ai.system_instructions`, `gen_ai.input.messages`, `gen_ai.output.messages`); else
 *    OpenLLMetry's `gen_ai.prompt.N.*` / `gen_ai.completion.N.*`; else the span's events
 *    (`gen_ai.{system,user,assistant,tool}.message`, `gen_ai.choice`, or the older
 *    `gen_ai.content.prompt` / `gen_ai.content.completion`). A span holding the call both as
 *    attributes and as events is read once, from its attributes.
 */
import type { Message, ToolCall, Usage } from '../../record.js';
import { isObject, num, str, type Json } from '../json-values.js';
import { attributeMap, parseJsonAttribute, structured, type Attributes } from './values.js';
import { numberValue, writeJson } from '../../canonical/json-value.js';
import { isTokenCount } from '../../record.js';

export type Dialect = 'openinference' | 'vercel-ai' | 'mlflow' | 'gen_ai';

export interface SpanCall {
  dialect: Dialect;
  /** Input messages as an OpenAI chat request holds them, or null when the span kept none. */
  inputs: Message[] | null;
  /** The answer, or null when the span kept none. */
  completion: Message | null;
  /** Tool definitions offered to the model, as recorded. */
  tools: unknown[] | null;
  model: string | null;
  provider: string | null;
  /** Request parameters (temperature, max_tokens, …) as recorded. */
  params: Json;
  usage: Usage | null;
  finishReason: string | null;
  /** Why the call failed, or null: error.type, an exception event, or the span's ERROR status message. */
  error: string | null;
  /** Which recorded value looks cut (a JSON text that ends early), or null. */
  cut: string | null;
  /** USD the recorder reported for the call (MLflow's `mlflow.llm.cost`), when it did. */
  cost?: number | null;
  /** The recorder's own call ids (Synalinks' Monitor: `synalinks.call_id`), which a Synalinks tree of the same run shares. */
  ownIds?: { callId: string; parentCallId: string | null } | null;
}

/** Names of parameters read from `gen_ai.request.*` and kept in the config. */
const GEN_AI_PARAMS = ['temperature', 'top_p', 'top_k', 'max_tokens', 'frequency_penalty', 'presence_penalty', 'stop_sequences', 'seed', 'choice.count'];

/** `gen_ai.operation.name` values of a model call; any other (execute_tool, invoke_agent, embeddings, an SDK's own step spans) is none. */
const LLM_OPERATIONS = new Set(['chat', 'text_completion', 'generate_content', 'completion', 'response', 'responses']);

/** Reads the call out of one span, or null when the span is no LLM call in any dialect. */
export function callOfSpan(span: Json, attrs: Attributes): SpanCall | null {
  const cut = { value: false, where: null as string | null };
  const call = readDialect(span, attrs, cut);
  if (call === null) return null;
  call.error = errorOf(span, attrs);
  // An empty finish reason is none recorded (OpenLLMetry's Anthropic streams write `""`).
  if (call.finishReason === '') call.finishReason = null;
  if (cut.where !== null && call.cut === null) call.cut = cut.where;
  return call;
}

interface CutNote {
  value: boolean;
  where: string | null;
}

function parseAttr(attrs: Attributes, key: string, cut: CutNote): unknown {
  const note = { value: false };
  const value = structured(attrs.get(key), note);
  if (note.value && cut.where === null) cut.where = `${key} ends early (cut at a length limit)`;
  return value;
}

function readDialect(span: Json, attrs: Attributes, cut: CutNote): SpanCall | null {
  const kind = attrs.str('openinference.span.kind');
  if (kind !== null) return kind.toUpperCase() === 'LLM' ? openInference(attrs, cut) : null;
  const operation = attrs.str('ai.operationId') ?? str(span.name) ?? '';
  if (/^ai\.\w+\.do(Generate|Stream)$/.test(operation)) return vercel(attrs, cut);
  if (operation.startsWith('ai.') && attrs.has('ai.operationId')) return null;
  const mlflowType = attrs.get('mlflow.spanType');
  if (mlflowType !== undefined) {
    // MLflow writes every attribute as JSON: the type is `"CHAT_MODEL"`, quotes included.
    const parsed = typeof mlflowType === 'string' && mlflowType.startsWith('"') ? parseJsonAttribute(mlflowType) : null;
    const type = parsed !== null && parsed.ok ? str(parsed.value) : str(mlflowType);
    return type === 'CHAT_MODEL' || type === 'LLM' ? mlflow(attrs, cut) : null;
  }
  const op = attrs.str('gen_ai.operation.name');
  if (op !== null && !LLM_OPERATIONS.has(op)) return null;
  if (op !== null || attrs.has('gen_ai.request.model') || attrs.has('gen_ai.input.messages') || attrs.keysWith('gen_ai.prompt.').length > 0 || hasGenAiEvents(span)) {
    return genAi(span, attrs, cut);
  }
  return null;
}

function structuredQuiet(text: string): unknown {
  return structured(text, { value: false });
}

// ---------------------------------------------------------------- shared shapes

function text(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

/** Tool-call arguments as a value: a JSON text that parses becomes its value (numbers keep their text), else it stays text. */
function argumentsValue(value: unknown): unknown {
  if (typeof value !== 'string') return value ?? {};
  const parsed = structuredQuiet(value);
  return parsed === undefined || typeof parsed === 'string' ? value : parsed;
}

function toolCall(id: unknown, name: unknown, args: unknown): ToolCall {
  const call: ToolCall = { type: 'function', function: { name: text(name) ?? '', arguments: argumentsValue(args) } };
  if (typeof id === 'string' && id !== '') call.id = id;
  return { ...(call.id !== undefined ? { id: call.id } : {}), type: 'function', function: call.function };
}

/** A message with content as one text (or parts when not all text), tool calls and tool-call id. */
function message(role: string, parts: unknown[], toolCalls: ToolCall[], toolCallId: string | null, name: string | null = null): Message {
  const m: Message = { role, content: contentOf(parts) };
  if (toolCalls.length > 0) m.tool_calls = toolCalls;
  if (toolCallId !== null) m.tool_call_id = toolCallId;
  if (name !== null) m.name = name;
  return m;
}

/** Text parts joined as one string when every part is text; else OpenAI content parts as recorded. */
function contentOf(parts: unknown[]): unknown {
  if (parts.length === 0) return '';
  if (parts.every((p) => typeof p === 'string')) return (parts as string[]).join('');
  return parts.map((p) => (typeof p === 'string' ? { type: 'text', text: p } : p));
}

/**
 * A tool result as the text a chat request carries: a structured value (the AI SDK and the
 * GenAI conventions keep the value the tool returned) as its compact JSON text, numbers as
 * recorded, which is what the SDK sent over the wire.
 */
function toolText(value: unknown): string {
  if (typeof value === 'string') return value;
  return value === undefined || value === null ? '' : writeJson(value);
}

export function usageOf(input: unknown, output: unknown, cached: unknown = null, reasoning: unknown = null): Usage | null {
  const p = numberValue(input);
  const c = numberValue(output);
  const prompt = isTokenCount(p) ? p : null;
  const completion = isTokenCount(c) ? c : null;
  if (prompt === null && completion === null) return null;
  const cachedN = numberValue(cached);
  const reasoningN = numberValue(reasoning);
  return {
    prompt_tokens: prompt ?? 0,
    completion_tokens: completion ?? 0,
    total_tokens: (prompt ?? 0) + (completion ?? 0),
    cached_tokens: isTokenCount(cachedN) ? cachedN : 0,
    cache_creation_tokens: 0,
    reasoning_tokens: isTokenCount(reasoningN) ? reasoningN : 0,
  };
}

function firstOf(value: unknown): string | null {
  if (Array.isArray(value)) return text(value[0]);
  return text(value);
}

// ---------------------------------------------------------------- OpenInference

/** `llm.input_messages.<i>.message.*` → messages, by index. */
function openInferenceMessages(attrs: Attributes, prefix: string): Message[] | null {
  const byIndex = new Map<number, Map<string, unknown>>();
  for (const key of attrs.keysWith(prefix)) {
    const m = /^(\d+)\.message\.(.+)$/s.exec(key.slice(prefix.length));
    if (m === null) continue;
    const i = Number(m[1]);
    if (!byIndex.has(i)) byIndex.set(i, new Map());
    byIndex.get(i)!.set(m[2], attrs.get(key));
  }
  if (byIndex.size === 0) return null;
  return [...byIndex.entries()]
    .sort(([a], [b]) => a - b)
    .map(([, fields]) => {
      const parts: unknown[] = [];
      const content = fields.get('content');
      if (typeof content === 'string') parts.push(content);
      const contents = new Map<number, Map<string, unknown>>();
      const calls = new Map<number, Map<string, unknown>>();
      for (const [key, value] of fields) {
        let m = /^contents\.(\d+)\.message_content\.(.+)$/s.exec(key);
        if (m !== null) {
          if (!contents.has(Number(m[1]))) contents.set(Number(m[1]), new Map());
          contents.get(Number(m[1]))!.set(m[2], value);
          continue;
        }
        m = /^tool_calls\.(\d+)\.tool_call\.(.+)$/s.exec(key);
        if (m !== null) {
          if (!calls.has(Number(m[1]))) calls.set(Number(m[1]), new Map());
          calls.get(Number(m[1]))!.set(m[2], value);
        }
      }
      for (const [, part] of [...contents].sort(([a], [b]) => a - b)) {
        const type = text(part.get('type'));
        if (type === 'text' || (type === null && typeof part.get('text') === 'string')) parts.push(text(part.get('text')) ?? '');
        else if (type === 'image') parts.push({ type: 'image_url', image_url: { url: text(part.get('image.image.url')) ?? '' } });
      }
      const toolCalls = [...calls]
        .sort(([a], [b]) => a - b)
        .map(([, c]) => toolCall(c.get('id'), c.get('function.name'), c.get('function.arguments')));
      return message(text(fields.get('role')) ?? 'user', parts, toolCalls, text(fields.get('tool_call_id')), text(fields.get('name')));
    });
}

/** A JSON body OpenInference keeps whole (`input.value` / `output.value`), or undefined: never flagged as cut, the flattened attributes stand in for it. */
function openInferenceBody(attrs: Attributes, key: string): unknown {
  const value = attrs.get(key);
  return typeof value === 'string' && value.startsWith('{') ? structuredQuiet(value) : undefined;
}

function openInference(attrs: Attributes, cut: CutNote): SpanCall {
  // The request and response bodies first: the flattened `llm.*_messages` lose what the body
  // holds (Anthropic's system prompt and all but one tool_result block of a turn; LangChain's
  // tool-call ids), and fall back in where no body is kept or it is not one read here.
  const request = openInferenceBody(attrs, 'input.value');
  const fromRequest = isObject(request) ? requestMessages(request) : null;
  const fromResponse = responseMessage(openInferenceBody(attrs, 'output.value'));
  const outputs = fromResponse !== null ? [fromResponse] : openInferenceMessages(attrs, 'llm.output_messages.');
  const tools = attrs
    .keysWith('llm.tools.')
    .filter((k) => k.endsWith('.tool.json_schema'))
    .map((k) => parseAttr(attrs, k, cut))
    .filter((t) => t !== undefined)
    .map(bedrockToolSpec);
  const params = parseAttr(attrs, 'llm.invocation_parameters', cut);
  const p = isObject(params) ? { ...params } : {};
  // The model and the tools are kept apart from the parameters (config: model, tools, params).
  delete p.model;
  delete p.tools;
  return {
    dialect: 'openinference',
    inputs: fromRequest ?? openInferenceMessages(attrs, 'llm.input_messages.'),
    completion: outputs?.[0] ?? null,
    tools: tools.length > 0 ? tools : null,
    model: attrs.str('llm.model_name'),
    provider: attrs.str('llm.provider') ?? attrs.str('llm.system') ?? langSmithProvider(attrs),
    params: p,
    usage: usageOf(attrs.get('llm.token_count.prompt'), attrs.get('llm.token_count.completion'), attrs.get('llm.token_count.prompt_details.cache_read'), attrs.get('llm.token_count.completion_details.reasoning')),
    finishReason: attrs.str('llm.finish_reason'),
    error: null,
    cut: null,
  };
}

// ---------------------------------------------------------------- Vercel AI SDK

/** An AI SDK model message (`ai.prompt.messages`) as chat messages: tool results become one tool message each. */
function vercelMessages(list: unknown): Message[] {
  const out: Message[] = [];
  if (!Array.isArray(list)) return out;
  for (const m of list) {
    if (!isObject(m)) continue;
    const role = text(m.role) ?? 'user';
    if (typeof m.content === 'string') {
      out.push({ role, content: m.content });
      continue;
    }
    const parts: unknown[] = [];
    const calls: ToolCall[] = [];
    for (const part of Array.isArray(m.content) ? m.content : []) {
      if (!isObject(part)) continue;
      const type = text(part.type);
      if (type === 'text' || type === 'reasoning') {
        if (type === 'text') parts.push(text(part.text) ?? '');
      } else if (type === 'tool-call') calls.push(toolCall(part.toolCallId, part.toolName, part.input ?? part.args));
      else if (type === 'tool-result') {
        const output = part.output ?? part.result;
        // AI SDK 5+: {type: 'json'|'text'|…, value}; 4: the result itself.
        const value = isObject(output) && typeof output.type === 'string' && 'value' in output ? output.value : output;
        out.push({ role: 'tool', content: toolText(value), tool_call_id: text(part.toolCallId) ?? '' });
      } else if (type === 'image' || type === 'file') parts.push(part);
    }
    if (role === 'tool') continue;
    out.push(message(role, parts, calls, null));
  }
  return out;
}

function vercel(attrs: Attributes, cut: CutNote): SpanCall {
  const prompt = parseAttr(attrs, 'ai.prompt.messages', cut);
  const inputs = Array.isArray(prompt) ? vercelMessages(prompt) : null;
  const responseText = attrs.get('ai.response.text');
  const objectText = attrs.get('ai.response.object');
  const toolCalls = parseAttr(attrs, 'ai.response.toolCalls', cut);
  let completion: Message | null = null;
  if (typeof responseText === 'string' || typeof objectText === 'string' || Array.isArray(toolCalls)) {
    const calls = Array.isArray(toolCalls) ? toolCalls.filter(isObject).map((c) => toolCall(c.toolCallId, c.toolName, c.input ?? c.args)) : [];
    completion = message('assistant', [typeof responseText === 'string' ? responseText : typeof objectText === 'string' ? objectText : ''], calls, null);
  }
  const toolsAttr = attrs.get('ai.prompt.tools');
  const tools = Array.isArray(toolsAttr) ? toolsAttr.map((t) => (typeof t === 'string' ? structuredQuiet(t) : t)).filter((t) => t !== undefined) : null;
  const params: Json = {};
  for (const key of attrs.keysWith('ai.settings.')) {
    const name = key.slice('ai.settings.'.length);
    if (name !== 'maxRetries') params[name] = attrs.get(key);
  }
  return {
    dialect: 'vercel-ai',
    inputs,
    completion,
    tools: tools !== null && tools.length > 0 ? tools : null,
    model: attrs.str('ai.model.id') ?? attrs.str('gen_ai.request.model'),
    provider: attrs.str('ai.model.provider') ?? attrs.str('gen_ai.system'),
    params,
    usage: usageOf(
      attrs.get('ai.usage.inputTokens') ?? attrs.get('ai.usage.promptTokens') ?? attrs.get('gen_ai.usage.input_tokens'),
      attrs.get('ai.usage.outputTokens') ?? attrs.get('ai.usage.completionTokens') ?? attrs.get('gen_ai.usage.output_tokens'),
      attrs.get('ai.usage.cachedInputTokens'),
      attrs.get('ai.usage.reasoningTokens'),
    ),
    finishReason: attrs.str('ai.response.finishReason') ?? firstOf(attrs.get('gen_ai.response.finish_reasons')),
    error: null,
    cut: null,
  };
}

// ---------------------------------------------------------------- MLflow

/**
 * The messages of a chat request body as an SDK sent it, in chat form: OpenAI chat (`role`,
 * `content` as text or parts, `tool_calls`, `tool_call_id`) and Anthropic Messages (`system`
 * beside the list, as text or text blocks; content blocks: `text`, `tool_use` (and LangChain's
 * `tool_call`) → a tool call with its id, each `tool_result` → one tool message answering its
 * `tool_use_id`, `thinking` / `reasoning` left out as reasoning is elsewhere, any other block kept
 * as a content part).
 */
export function chatMessages(list: unknown, system: unknown = undefined): Message[] {
  const out: Message[] = [];
  const instructions = blocksText(system);
  if (instructions !== null) out.push({ role: 'system', content: instructions });
  if (!Array.isArray(list)) return out;
  for (const m of list) {
    if (!isObject(m)) continue;
    const calls = Array.isArray(m.tool_calls)
      ? m.tool_calls.filter(isObject).map((c) => toolCall(c.id, isObject(c.function) ? c.function.name : null, isObject(c.function) ? c.function.arguments : null))
      : [];
    const content = m.content;
    const parts: unknown[] = [];
    const results: Message[] = [];
    for (const raw of typeof content === 'string' ? [content] : Array.isArray(content) ? content : []) {
      const p = isObject(raw) ? typedBlock(raw) : raw;
      if (p === null) continue;
      if (!isObject(p)) parts.push(p);
      else if (p.type === 'text' && typeof p.text === 'string') parts.push(p.text);
      else if (p.type === 'tool_use' || p.type === 'tool_call') {
        // Anthropic's tool_use `input`; LangChain's standard tool_call block `args`. A call also in `tool_calls` is taken once.
        if (!calls.some((c) => c.id !== undefined && c.id === p.id)) calls.push(toolCall(p.id, p.name, p.input ?? p.args));
      } else if (p.type === 'tool_result') results.push({ role: 'tool', content: blocksText(p.content) ?? toolText(p.content), tool_call_id: text(p.tool_use_id) ?? '' });
      else if (p.type !== 'thinking' && p.type !== 'redacted_thinking' && p.type !== 'reasoning') parts.push(p);
    }
    // Anthropic puts tool results first in a user turn; what else the turn says follows them.
    out.push(...results);
    if (results.length > 0 && parts.length === 0 && calls.length === 0) continue;
    const msg = message(text(m.role) ?? 'user', parts, calls, text(m.tool_call_id), text(m.name));
    // Synalinks messages may hold a structured value as content: kept as recorded.
    if (isObject(content)) msg.content = content;
    out.push(msg);
  }
  return out;
}

/** A text, or a list of text blocks (Anthropic's typed ones, Bedrock's `{text}`; cache points skipped), as one text; null for anything else. */
function blocksText(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (!Array.isArray(value) || value.length === 0) return null;
  const blocks = value.map((b) => (isObject(b) ? typedBlock(b) : undefined)).filter((b) => b !== null);
  if (blocks.length === 0 || !blocks.every((b) => isObject(b) && b.type === 'text' && typeof b.text === 'string')) return null;
  return blocks.map((b) => (b as { text: string }).text).join('');
}

/**
 * A content block as a typed one: Bedrock Converse names a block by its one key (`{text}`,
 * `{toolUse: {toolUseId, name, input}}`, `{toolResult: {toolUseId, content: [{text} | {json}]}}`,
 * `{image}`, `{document}`, `{reasoningContent}`), where the other APIs give it a `type`. A cache
 * point marks no content: null. A typed block, or one of no kind known here, is returned as it is.
 */
function typedBlock(b: Json): Json | null {
  if (typeof b.type === 'string') return b;
  const keys = Object.keys(b);
  if (keys.length !== 1) return b;
  const v = b[keys[0]];
  switch (keys[0]) {
    case 'text':
      return typeof v === 'string' ? { type: 'text', text: v } : b;
    case 'toolUse':
      return isObject(v) ? { type: 'tool_use', id: v.toolUseId, name: v.name, input: v.input } : b;
    case 'toolResult': {
      if (!isObject(v) || !Array.isArray(v.content)) return b;
      // A JSON result is the compact JSON text of its value, as a tool message carries it.
      const content = v.content.map((c) => (isObject(c) && 'json' in c && Object.keys(c).length === 1 ? { type: 'text', text: toolText(c.json) } : c));
      return { type: 'tool_result', tool_use_id: v.toolUseId, content };
    }
    case 'reasoningContent':
      return { type: 'reasoning' };
    case 'cachePoint':
      return null;
    case 'image':
    case 'document':
    case 'video':
      return { type: keys[0], [keys[0]]: v };
    default:
      return b;
  }
}

/**
 * The input messages of a request body kept whole: a chat request (OpenAI or Anthropic, see
 * chatMessages) or LangChain's `{messages: [[serialized message, ...]]}`; null when the body
 * is neither, or holds a message of a shape not read here (the attributes are read instead).
 */
export function requestMessages(request: Json): Message[] | null {
  const list = request.messages;
  if (!Array.isArray(list) || list.length === 0) return null;
  if (list.length === 1 && Array.isArray(list[0])) return langChainMessages(list[0]);
  if (!list.every((m) => isObject(m) && typeof m.role === 'string' && knownContent(m.content))) return null;
  if (request.system !== undefined && blocksText(request.system) === null) return null;
  return chatMessages(list, request.system);
}

/** Content parts of the chat APIs read here, by `type` (Bedrock Converse's untyped blocks by their key, see typedBlock). */
const CONTENT_TYPES = new Set(['text', 'image_url', 'input_audio', 'file', 'image', 'document', 'video', 'tool_use', 'tool_call', 'tool_result', 'thinking', 'redacted_thinking', 'reasoning', 'refusal']);

/** A message content whose every part is of a type read here: a text, no content, or typed parts. */
function knownContent(content: unknown): boolean {
  if (content === undefined || content === null || typeof content === 'string') return true;
  return (
    Array.isArray(content) &&
    content.every((raw) => {
      const p = isObject(raw) ? typedBlock(raw) : undefined;
      return p === null || (isObject(p) && typeof p.type === 'string' && CONTENT_TYPES.has(p.type));
    })
  );
}

/** The answer in a response body kept whole: OpenAI's `choices`, Anthropic's message (`content` blocks), LangChain's `generations`; else null. */
export function responseMessage(response: unknown): Message | null {
  if (!isObject(response)) return null;
  if (Array.isArray(response.choices)) {
    const choice = response.choices.find(isObject);
    return choice !== undefined && isObject(choice.message) ? (chatMessages([{ ...choice.message, role: 'assistant' }])[0] ?? null) : null;
  }
  if (response.type === 'message' && Array.isArray(response.content)) return chatMessages([{ role: 'assistant', content: response.content }])[0] ?? null;
  // Bedrock Converse: {output: {message: {role, content: [blocks]}}, stopReason, usage}.
  if (isObject(response.output) && isObject(response.output.message) && knownContent(response.output.message.content)) {
    return chatMessages([{ role: 'assistant', content: response.output.message.content }])[0] ?? null;
  }
  if (Array.isArray(response.generations) && Array.isArray(response.generations[0])) {
    const generation = response.generations[0].find(isObject);
    if (generation === undefined) return null;
    // A streamed answer's message is a chunk of no known role (`ChatMessageChunk`): its text is the answer.
    const message = isObject(generation.message) ? (langChainMessages([generation.message])?.[0] ?? null) : null;
    if (message !== null) return message;
    return typeof generation.text === 'string' ? { role: 'assistant', content: generation.text } : null;
  }
  return null;
}

const LANGCHAIN_ROLES: Record<string, string> = {
  SystemMessage: 'system',
  system: 'system',
  HumanMessage: 'user',
  human: 'user',
  AIMessage: 'assistant',
  AIMessageChunk: 'assistant',
  ai: 'assistant',
  ToolMessage: 'tool',
  tool: 'tool',
  FunctionMessage: 'function',
  function: 'function',
};

/**
 * LangChain messages as serialized (`{lc: 1, type: 'constructor', id: [..., 'AIMessage'], kwargs}`)
 * or as dicts (`{type: 'ai', data|…}`), in chat form: an AI message's `tool_calls` (`{id, name,
 * args}`) are its tool calls, a tool message's `tool_call_id` the call it answers. Null when one
 * is of a kind not known here.
 */
export function langChainMessages(list: unknown[]): Message[] | null {
  const chat: Json[] = [];
  for (const m of list) {
    if (!isObject(m)) return null;
    const kind = Array.isArray(m.id) ? text(m.id[m.id.length - 1]) : text(m.type);
    const fields = isObject(m.kwargs) ? m.kwargs : isObject(m.data) ? m.data : m;
    const role = kind === 'ChatMessage' || kind === 'chat' ? text(fields.role) : kind !== null ? LANGCHAIN_ROLES[kind] : undefined;
    if (role === undefined || role === null || !knownContent(fields.content)) return null;
    const extra = isObject(fields.additional_kwargs) ? fields.additional_kwargs : {};
    const calls = Array.isArray(fields.tool_calls) && fields.tool_calls.length > 0
      ? fields.tool_calls.filter(isObject).map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.args ?? {} } }))
      : extra.tool_calls;
    chat.push({ role, content: fields.content ?? '', ...(calls !== undefined ? { tool_calls: calls } : {}), ...(typeof fields.tool_call_id === 'string' ? { tool_call_id: fields.tool_call_id } : {}), ...(typeof fields.name === 'string' && (role === 'user' || role === 'system') ? { name: fields.name } : {}) });
  }
  return chatMessages(chat);
}

/** A Bedrock tool (`{toolSpec: {name, description, inputSchema: {json}}}`) as `{name, description, parameters}`; any other as it is. */
function bedrockToolSpec(tool: unknown): unknown {
  if (!isObject(tool) || !isObject(tool.toolSpec) || Object.keys(tool).length !== 1) return tool;
  const spec = tool.toolSpec;
  const out: Json = {};
  if (typeof spec.name === 'string') out.name = spec.name;
  if (spec.description !== undefined) out.description = spec.description;
  if (isObject(spec.inputSchema) && spec.inputSchema.json !== undefined) out.parameters = spec.inputSchema.json;
  return out;
}

/** The provider LangChain names in the run's metadata (`ls_provider`), where OpenInference keeps no `llm.provider`. */
function langSmithProvider(attrs: Attributes): string | null {
  const metadata = openInferenceBody(attrs, 'metadata');
  return isObject(metadata) ? text(metadata.ls_provider) : null;
}

/** An MLflow attribute: MLflow writes every attribute value as JSON text (`"\"openai/gpt-4o\""`). */
function mlflowAttr(attrs: Attributes, key: string, cut: CutNote): unknown {
  const value = attrs.get(key);
  if (typeof value !== 'string') return value;
  if (value.startsWith('"')) {
    const parsed = parseJsonAttribute(value);
    return parsed.ok ? parsed.value : value;
  }
  return parseAttr(attrs, key, cut);
}

/**
 * MLflow spans, as MLflow's autologging and Synalinks' `Monitor` hook write them: the request
 * in `mlflow.spanInputs` (`messages`, with `model`, `tools` and the sampling parameters, or the
 * hook's `{messages, data, kwargs}`), the response in `mlflow.spanOutputs` (`choices`, `usage`),
 * `mlflow.llm.model` / `mlflow.llm.provider`, `mlflow.chat.tools`, `mlflow.chat.tokenUsage`.
 */
function mlflow(attrs: Attributes, cut: CutNote): SpanCall {
  const inputs = parseAttr(attrs, 'mlflow.spanInputs', cut);
  const outputs = parseAttr(attrs, 'mlflow.spanOutputs', cut);
  const request = isObject(inputs) ? inputs : null;
  let messages: Message[] | null = null;
  if (request !== null && Array.isArray(request.messages)) messages = chatMessages(request.messages, request.system);
  else if (Array.isArray(inputs)) messages = chatMessages(inputs);
  let completion: Message | null = null;
  let finishReason: string | null = null;
  let usage: Usage | null = null;
  if (isObject(outputs) && Array.isArray(outputs.choices)) {
    const choice = outputs.choices.find(isObject);
    if (choice !== undefined && isObject(choice.message)) completion = chatMessages([choice.message])[0] ?? null;
    finishReason = choice !== undefined ? text(choice.finish_reason) : null;
    if (isObject(outputs.usage)) usage = usageOf(outputs.usage.prompt_tokens, outputs.usage.completion_tokens);
  } else if (isObject(outputs) && outputs.type === 'message' && Array.isArray(outputs.content)) {
    // Anthropic's Messages response (MLflow's Anthropic autologging): content blocks, stop_reason, usage.
    completion = responseMessage(outputs);
    finishReason = text(outputs.stop_reason);
    if (isObject(outputs.usage)) usage = usageOf(outputs.usage.input_tokens, outputs.usage.output_tokens, outputs.usage.cache_read_input_tokens);
  } else if (typeof outputs === 'string') completion = { role: 'assistant', content: outputs };
  const params: Json = request !== null ? { ...request } : {};
  delete params.messages;
  delete params.system;
  delete params.model;
  delete params.tools;
  const chatUsage = mlflowAttr(attrs, 'mlflow.chat.tokenUsage', cut);
  if (usage === null && isObject(chatUsage)) usage = usageOf(chatUsage.input_tokens, chatUsage.output_tokens, chatUsage.cache_read_input_tokens);
  const model = (request !== null ? text(request.model) : null) ?? text(mlflowAttr(attrs, 'mlflow.llm.model', cut)) ?? attrs.str('gen_ai.request.model') ?? (isObject(outputs) ? text(outputs.model) : null);
  const chatTools = mlflowAttr(attrs, 'mlflow.chat.tools', cut);
  const tools = request !== null && Array.isArray(request.tools) ? request.tools : Array.isArray(chatTools) && chatTools.length > 0 ? chatTools : null;
  const cost = mlflowAttr(attrs, 'mlflow.llm.cost', cut);
  const callId = text(mlflowAttr(attrs, 'synalinks.call_id', cut));
  const parentCallId = text(mlflowAttr(attrs, 'synalinks.parent_call_id', cut));
  return {
    cost: isObject(cost) ? num(cost.total_cost) : null,
    ownIds: callId !== null && callId !== '' ? { callId, parentCallId: parentCallId !== null && parentCallId !== '' ? parentCallId : null } : null,
    dialect: 'mlflow',
    inputs: messages,
    completion,
    tools,
    model: model === '' ? null : model,
    provider: text(mlflowAttr(attrs, 'mlflow.llm.provider', cut)) ?? attrs.str('gen_ai.system'),
    params,
    usage,
    finishReason,
    error: null,
    cut: null,
  };
}

// ---------------------------------------------------------------- OTel GenAI

/** A GenAI semconv message (`{role, parts: [...]}`) as a chat message; tool_call_response parts become tool messages. */
function genAiMessages(list: unknown, out: Message[]): void {
  if (!Array.isArray(list)) return;
  for (const m of list) {
    if (!isObject(m)) continue;
    const role = text(m.role) ?? 'user';
    const parts: unknown[] = [];
    const calls: ToolCall[] = [];
    const responses: Message[] = [];
    for (const part of Array.isArray(m.parts) ? m.parts : []) {
      if (!isObject(part)) continue;
      const type = text(part.type);
      if (type === 'text') parts.push(typeof part.content === 'string' ? part.content : '');
      else if (type === 'tool_call') calls.push(toolCall(part.id, part.name, part.arguments));
      else if (type === 'tool_call_response') {
        const response = part.response ?? part.result;
        responses.push({ role: 'tool', content: toolText(response), tool_call_id: text(part.id) ?? '' });
      } else if (type !== 'reasoning') parts.push(part);
    }
    if (responses.length > 0 && parts.length === 0 && calls.length === 0) out.push(...responses);
    else {
      out.push(message(role, parts, calls, null, text(m.name)));
      out.push(...responses);
    }
  }
}

/** `gen_ai.system_instructions`: a list of parts (or a text) as one system message. */
function systemInstructions(value: unknown): Message | null {
  if (typeof value === 'string') return { role: 'system', content: value };
  if (!Array.isArray(value)) return null;
  const parts = value.map((p) => (isObject(p) && p.type === 'text' && typeof p.content === 'string' ? p.content : p));
  return message('system', parts, [], null);
}

/** OpenLLMetry's flattened `gen_ai.prompt.<i>.*` / `gen_ai.completion.<i>.*`. */
function flattenedMessages(attrs: Attributes, prefix: string): Message[] | null {
  const byIndex = new Map<number, Map<string, unknown>>();
  for (const key of attrs.keysWith(prefix)) {
    const m = /^(\d+)\.(.+)$/s.exec(key.slice(prefix.length));
    if (m === null) continue;
    if (!byIndex.has(Number(m[1]))) byIndex.set(Number(m[1]), new Map());
    byIndex.get(Number(m[1]))!.set(m[2], attrs.get(key));
  }
  if (byIndex.size === 0) return null;
  return [...byIndex]
    .sort(([a], [b]) => a - b)
    .map(([, f]) => {
      const calls = new Map<number, Map<string, unknown>>();
      for (const [key, value] of f) {
        const m = /^tool_calls\.(\d+)\.(.+)$/s.exec(key);
        if (m === null) continue;
        if (!calls.has(Number(m[1]))) calls.set(Number(m[1]), new Map());
        calls.get(Number(m[1]))!.set(m[2], value);
      }
      const toolCalls = [...calls].sort(([a], [b]) => a - b).map(([, c]) => toolCall(c.get('id'), c.get('name'), c.get('arguments')));
      const role = text(f.get('role')) ?? 'user';
      // A turn with no text (an assistant turn of tool calls) is written as the text `null`: JSON.stringify(null).
      const content = role === 'assistant' && f.get('content') === 'null' ? '' : f.get('content');
      const parsed = typeof content === 'string' && content.startsWith('[') ? structuredQuiet(content) : undefined;
      const parts = Array.isArray(parsed) ? parsed.map((p) => (isObject(p) && p.type === 'text' && typeof p.text === 'string' ? p.text : p)) : typeof content === 'string' ? [content] : [];
      const msg = message(role, parts, toolCalls, text(f.get('tool_call_id')));
      const finish = text(f.get('finish_reason'));
      return finish !== null ? Object.assign(msg, { finish_reason: finish }) : msg;
    });
}

const EVENT_ROLES: Record<string, string> = {
  'gen_ai.system.message': 'system',
  'gen_ai.user.message': 'user',
  'gen_ai.assistant.message': 'assistant',
  'gen_ai.tool.message': 'tool',
};

function hasGenAiEvents(span: Json): boolean {
  return Array.isArray(span.events) && span.events.some((e) => isObject(e) && typeof e.name === 'string' && (e.name in EVENT_ROLES || e.name === 'gen_ai.choice' || e.name === 'gen_ai.content.prompt'));
}

/** An event's body: its attributes as one object (span events carry no body), or a JSON body in `gen_ai.event.content`. */
function eventBody(event: Attributes): Json {
  const embedded = event.get('gen_ai.event.content') ?? event.get('body');
  const parsed = typeof embedded === 'string' ? structuredQuiet(embedded) : embedded;
  if (isObject(parsed)) return parsed;
  return event.toObject();
}

function eventMessage(role: string, body: Json): Message {
  const calls = Array.isArray(body.tool_calls)
    ? body.tool_calls.filter(isObject).map((c) => toolCall(c.id, isObject(c.function) ? c.function.name : c.name, isObject(c.function) ? c.function.arguments : c.arguments))
    : [];
  const content = typeof body.content === 'string' ? structuredQuietText(body.content) : body.content;
  const parts = typeof content === 'string' ? [content] : Array.isArray(content) ? content.map((p) => (isObject(p) && p.type === 'text' && typeof p.text === 'string' ? p.text : p)) : [];
  return message(text(body.role) ?? role, parts, calls, role === 'tool' ? (text(body.id) ?? text(body.tool_call_id)) : null);
}

function structuredQuietText(value: string): unknown {
  return value;
}

function genAiEvents(span: Json): { inputs: Message[] | null; completion: Message | null; finish: string | null } {
  const inputs: Message[] = [];
  let completion: Message | null = null;
  let finish: string | null = null;
  let olderPrompt: unknown = undefined;
  let olderCompletion: unknown = undefined;
  for (const e of Array.isArray(span.events) ? span.events : []) {
    if (!isObject(e) || typeof e.name !== 'string') continue;
    const attrs = attributeMap(e.attributes);
    if (e.name in EVENT_ROLES) inputs.push(eventMessage(EVENT_ROLES[e.name], eventBody(attrs)));
    else if (e.name === 'gen_ai.choice' && completion === null) {
      const body = eventBody(attrs);
      const msg = isObject(body.message) ? body.message : body;
      completion = eventMessage('assistant', { ...msg, role: 'assistant' });
      finish = text(body.finish_reason);
    } else if (e.name === 'gen_ai.content.prompt' && typeof attrs.get('gen_ai.prompt') === 'string') olderPrompt = structuredQuiet(attrs.str('gen_ai.prompt')!);
    else if (e.name === 'gen_ai.content.completion' && typeof attrs.get('gen_ai.completion') === 'string') olderCompletion = structuredQuiet(attrs.str('gen_ai.completion')!);
  }
  // The older events hold a JSON list of messages (Semantic Kernel), or the plain text (Spring AI).
  if (inputs.length === 0 && Array.isArray(olderPrompt)) inputs.push(...chatMessages(olderPrompt));
  else if (inputs.length === 0 && typeof olderPrompt === 'string') inputs.push({ role: 'user', content: olderPrompt });
  if (completion === null && Array.isArray(olderCompletion)) completion = chatMessages(olderCompletion)[0] ?? null;
  else if (completion === null && typeof olderCompletion === 'string') completion = { role: 'assistant', content: olderCompletion };
  return { inputs: inputs.length > 0 ? inputs : null, completion, finish };
}

function genAi(span: Json, attrs: Attributes, cut: CutNote): SpanCall {
  let inputs: Message[] | null = null;
  let completion: Message | null = null;
  let finishReason = firstOf(attrs.get('gen_ai.response.finish_reasons'));
  const system = systemInstructions(parseAttr(attrs, 'gen_ai.system_instructions', cut));
  const input = parseAttr(attrs, 'gen_ai.input.messages', cut);
  const output = parseAttr(attrs, 'gen_ai.output.messages', cut);
  // Each half of the call from the first place that holds it: the current attributes, then
  // OpenLLMetry's flattened ones, then the span's events.
  if (Array.isArray(input) || system !== null) {
    inputs = system !== null ? [system] : [];
    genAiMessages(input, inputs);
  }
  if (Array.isArray(output)) {
    const outs: Message[] = [];
    genAiMessages(output, outs);
    completion = outs[0] ?? null;
    const first = output.find(isObject);
    finishReason ??= first !== undefined ? text(first.finish_reason) : null;
  }
  if (inputs === null) {
    inputs = flattenedMessages(attrs, 'gen_ai.prompt.');
    inputs?.forEach((m) => delete (m as { finish_reason?: string }).finish_reason);
  }
  if (completion === null) {
    const outs = flattenedMessages(attrs, 'gen_ai.completion.');
    if (outs !== null && outs.length > 0) {
      const first = outs[0] as Message & { finish_reason?: string };
      finishReason ??= first.finish_reason ?? null;
      delete first.finish_reason;
      completion = first;
    }
  }
  if (inputs === null || completion === null) {
    const fromEvents = genAiEvents(span);
    inputs ??= fromEvents.inputs;
    if (completion === null) {
      completion = fromEvents.completion;
      finishReason ??= fromEvents.finish;
    }
  }
  const params: Json = {};
  for (const name of GEN_AI_PARAMS) {
    const value = attrs.get(`gen_ai.request.${name}`);
    if (value !== undefined) params[name] = value;
  }
  const definitions = parseAttr(attrs, 'gen_ai.tool.definitions', cut);
  const functions = flattenedFunctions(attrs);
  return {
    dialect: 'gen_ai',
    inputs,
    completion,
    tools: Array.isArray(definitions) ? definitions : functions,
    model: attrs.str('gen_ai.request.model') ?? attrs.str('gen_ai.response.model'),
    provider: attrs.str('gen_ai.provider.name') ?? attrs.str('gen_ai.system'),
    params,
    usage: usageOf(
      attrs.get('gen_ai.usage.input_tokens') ?? attrs.get('gen_ai.usage.prompt_tokens'),
      attrs.get('gen_ai.usage.output_tokens') ?? attrs.get('gen_ai.usage.completion_tokens'),
      attrs.get('gen_ai.usage.cache_read.input_tokens') ?? attrs.get('gen_ai.usage.cache_read_input_tokens'),
      attrs.get('gen_ai.usage.reasoning_tokens'),
    ),
    finishReason,
    error: null,
    cut: null,
  };
}

/** OpenLLMetry's `llm.request.functions.<i>.name|description|parameters`. */
function flattenedFunctions(attrs: Attributes): unknown[] | null {
  const byIndex = new Map<number, Json>();
  for (const key of attrs.keysWith('llm.request.functions.')) {
    // OpenLLMetry writes the JSON schema as `arguments` (0.22) or `parameters`.
    const m = /^(\d+)\.(name|description|parameters|arguments)$/.exec(key.slice('llm.request.functions.'.length));
    if (m === null) continue;
    const fn = byIndex.get(Number(m[1])) ?? {};
    if (m[2] === 'name' || m[2] === 'description') fn[m[2]] = attrs.get(key);
    else fn.parameters = structuredQuiet(String(attrs.get(key))) ?? attrs.get(key);
    byIndex.set(Number(m[1]), fn);
  }
  if (byIndex.size === 0) return null;
  return [...byIndex].sort(([a], [b]) => a - b).map(([, fn]) => ({ type: 'function', function: fn }));
}

// ---------------------------------------------------------------- failure

/** Why the call failed: `error.type`, an exception event's type and message, or the span's ERROR status; null when it did not. */
function errorOf(span: Json, attrs: Attributes): string | null {
  const status = isObject(span.status) ? span.status : null;
  const code = status === null ? null : status.code;
  const isError = code === 2 || code === 'STATUS_CODE_ERROR' || (code instanceof String && code.valueOf() === '2') || numberValue(code) === 2;
  const errorType = attrs.str('error.type');
  let exception: string | null = null;
  for (const e of Array.isArray(span.events) ? span.events : []) {
    if (!isObject(e) || e.name !== 'exception') continue;
    const ea = attributeMap(e.attributes);
    const parts = [ea.str('exception.type'), ea.str('exception.message')].filter((p) => p !== null);
    if (parts.length > 0) exception = parts.join(': ');
    break;
  }
  if (!isError && errorType === null) return null;
  return exception ?? (status !== null ? str(status.message) : null) ?? errorType ?? 'span status ERROR';
}

export { num };
