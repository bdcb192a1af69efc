/**
 * The shapes of chat messages, requests and responses that emitters keep in span attributes,
 * read into chat form (the OpenAI chat shape the records hold). Shared by the extractors
 * (extractors/*.ts): a shape is read here once, whatever dialect holds it.
 */
import type { Message, ToolCall, Usage } from '../../record.js';
import { isObject, type Json } from '../json-values.js';
import { structured } from './values.js';
import { numberValue, writeJson } from '../../canonical/json-value.js';
import { isTokenCount } from '../../record.js';

/** A JSON text parsed when it is one (a cut or broken one is undefined), any other value as it is. */
export function structuredQuiet(value: unknown): unknown {
  return structured(value, { value: false });
}

export function text(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

/** Tool-call arguments as a value: a JSON text that parses becomes its value (numbers keep their text), else it stays text. */
export function argumentsValue(value: unknown): unknown {
  if (typeof value !== 'string') return value ?? {};
  const parsed = structuredQuiet(value);
  return parsed === undefined || typeof parsed === 'string' ? value : parsed;
}

export function toolCall(id: unknown, name: unknown, args: unknown): ToolCall {
  const call: ToolCall = { type: 'function', function: { name: text(name) ?? '', arguments: argumentsValue(args) } };
  if (typeof id === 'string' && id !== '') call.id = id;
  return { ...(call.id !== undefined ? { id: call.id } : {}), type: 'function', function: call.function };
}

/** A message with content as one text (or parts when not all text), tool calls and tool-call id. */
export function message(role: string, parts: unknown[], toolCalls: ToolCall[], toolCallId: string | null, name: string | null = null): Message {
  const m: Message = { role, content: contentOf(parts) };
  if (toolCalls.length > 0) m.tool_calls = toolCalls;
  if (toolCallId !== null) m.tool_call_id = toolCallId;
  if (name !== null) m.name = name;
  return m;
}

/** Text parts joined as one string when every part is text; else OpenAI content parts as recorded. */
export function contentOf(parts: unknown[]): unknown {
  if (parts.length === 0) return '';
  if (parts.every((p) => typeof p === 'string')) return (parts as string[]).join('');
  return parts.map((p) => (typeof p === 'string' ? { type: 'text', text: p } : p));
}

/**
 * A tool result as the text a chat request carries: a structured value (the AI SDK and the
 * GenAI conventions keep the value the tool returned) as its compact JSON text, numbers as
 * recorded, which is what the SDK sent over the wire.
 */
export function toolText(value: unknown): string {
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

/** A finish reason as recorded: the first of a list, of a list written as JSON text (`"[\\"length\\"]"`), or a text; an empty one is none. */
export function finishReasonOf(value: unknown): string | null {
  const list = typeof value === 'string' && value.startsWith('[') ? structuredQuiet(value) : value;
  const first = Array.isArray(list) ? text(list[0]) : text(list);
  return first === '' ? null : first;
}


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
export function blocksText(value: unknown): string | null {
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
export function typedBlock(b: Json): Json | null {
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
 * chatMessages), a Gemini request (`contents`, see geminiMessages) or LangChain's `{messages: [[serialized message, ...]]}`; null when the body
 * is neither, or holds a message of a shape not read here (the attributes are read instead).
 */
export function requestMessages(request: Json): Message[] | null {
  if (Array.isArray(request.contents)) return geminiRequest(request);
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
export function knownContent(content: unknown): boolean {
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
  // Gemini: a GenerateContentResponse's first candidate, or Google ADK's LlmResponse `{content: {role: 'model', parts}}`.
  const gemini = Array.isArray(response.candidates) ? response.candidates.find(isObject)?.content : response.content;
  if (isObject(gemini) && Array.isArray(gemini.parts)) return geminiMessages([{ ...gemini, role: 'model' }])?.[0] ?? null;
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
export function bedrockToolSpec(tool: unknown): unknown {
  if (!isObject(tool) || !isObject(tool.toolSpec) || Object.keys(tool).length !== 1) return tool;
  const spec = tool.toolSpec;
  const out: Json = {};
  if (typeof spec.name === 'string') out.name = spec.name;
  if (spec.description !== undefined) out.description = spec.description;
  if (isObject(spec.inputSchema) && spec.inputSchema.json !== undefined) out.parameters = spec.inputSchema.json;
  return out;
}


const GEMINI_ROLES: Record<string, string> = { user: 'user', model: 'assistant', function: 'tool', tool: 'tool', system: 'system' };

/** A Gemini part's field under its JS or Python SDK's name (`functionCall` / `function_call`). */
function field(part: Json, camel: string, snake: string): unknown {
  return part[camel] ?? part[snake];
}

/**
 * Gemini `contents` (`[{role: 'user' | 'model', parts: [{text} | {functionCall: {id, name,
 * args}} | {functionResponse: {id, name, response}} | …]}]`, or the Python SDK's snake_case
 * names) in chat form: a model turn is the assistant's, each function response a tool message
 * answering its call's id (its name where the call kept no id), thought parts left out as
 * reasoning is elsewhere. Null when a turn or a part is of a kind not read here.
 */
export function geminiMessages(contents: unknown[]): Message[] | null {
  const out: Message[] = [];
  for (const turn of contents) {
    if (!isObject(turn) || !Array.isArray(turn.parts)) return null;
    const role = GEMINI_ROLES[text(turn.role) ?? 'user'];
    if (role === undefined) return null;
    const parts: unknown[] = [];
    const calls: ToolCall[] = [];
    const results: Message[] = [];
    for (const part of turn.parts) {
      if (!isObject(part)) return null;
      const call = field(part, 'functionCall', 'function_call');
      const response = field(part, 'functionResponse', 'function_response');
      if (part.thought === true) continue;
      if (typeof part.text === 'string') parts.push(part.text);
      else if (isObject(call)) calls.push(toolCall(call.id ?? call.name, call.name, call.args ?? {}));
      else if (isObject(response)) results.push({ role: 'tool', content: toolText(response.response), tool_call_id: text(response.id) ?? text(response.name) ?? '' });
      else return null;
    }
    out.push(...results);
    if (results.length > 0 && parts.length === 0 && calls.length === 0) continue;
    out.push(message(role, parts, calls, null));
  }
  return out;
}

/** A Gemini request (`{model, contents, config: {systemInstruction, …}}`, or `systemInstruction` beside the contents): its messages, the system instruction first. */
function geminiRequest(request: Json): Message[] | null {
  const messages = geminiMessages(request.contents as unknown[]);
  if (messages === null || messages.length === 0) return null;
  const config = isObject(request.config) ? request.config : {};
  const system = field(config, 'systemInstruction', 'system_instruction') ?? field(request, 'systemInstruction', 'system_instruction');
  if (system === undefined || system === null) return messages;
  const instruction = typeof system === 'string' ? system : isObject(system) && Array.isArray(system.parts) ? geminiMessages([{ ...system, role: 'system' }])?.[0]?.content : undefined;
  if (typeof instruction !== 'string') return null;
  return [{ role: 'system', content: instruction }, ...messages];
}
