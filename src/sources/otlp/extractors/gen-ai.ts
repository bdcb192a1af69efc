/**
 * The OTel GenAI semantic conventions, current attributes: `gen_ai.operation.name` chat /
 * text_completion / generate_content (any other operation, execute_tool, invoke_agent,
 * embeddings, an SDK's own step spans, is no LLM call), or, with no operation named,
 * `gen_ai.request.model` / `gen_ai.input.messages` / `gen_ai.system_instructions`.
 * `gen_ai.system_instructions`, `gen_ai.input.messages`, `gen_ai.output.messages` (the content;
 * openllmetry.ts and gen-ai-events.ts read the older places), `gen_ai.tool.definitions`,
 * `gen_ai.request.*`, `gen_ai.request.model` / `gen_ai.response.model`,
 * `gen_ai.provider.name` / `gen_ai.system`, `gen_ai.usage.*`, `gen_ai.response.finish_reasons`.
 */
import type { Message, ToolCall } from '../../../record.js';
import { isObject, type Json } from '../../json-values.js';
import type { SpanBag } from '../bag.js';
import type { CallFields, Extractor } from '../call.js';
import { chatMessages, finishReasonOf, message, text, toolCall, toolText, usageOf } from '../shapes.js';

/** Names of parameters read from `gen_ai.request.*` and kept in the config. */
const GEN_AI_PARAMS = ['temperature', 'top_p', 'top_k', 'max_tokens', 'frequency_penalty', 'presence_penalty', 'stop_sequences', 'seed', 'choice.count'];

/** `gen_ai.operation.name` values of a model call. */
const LLM_OPERATIONS = new Set(['chat', 'text_completion', 'generate_content', 'completion', 'response', 'responses']);

/**
 * GenAI semconv messages (`{role, parts: [...]}`) as chat messages, tool_call_response parts as
 * tool messages; a message written in chat form (`{role, content}`, as some emitters put in
 * these attributes) is read as a chat message. Null when the list holds no message read here.
 */
function genAiMessages(list: unknown[]): Message[] | null {
  const out: Message[] = [];
  for (const m of list) {
    if (!isObject(m)) continue;
    if (!Array.isArray(m.parts)) {
      if (typeof m.role === 'string' && 'content' in m) out.push(...chatMessages([m]));
      continue;
    }
    const role = text(m.role) ?? 'user';
    const parts: unknown[] = [];
    const calls: ToolCall[] = [];
    const responses: Message[] = [];
    for (const part of m.parts) {
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
  return list.length === 0 || out.length > 0 ? out : null;
}

/** `gen_ai.system_instructions`: a list of parts (or a text) as one system message. */
function systemInstructions(value: unknown): Message | null {
  if (typeof value === 'string') return { role: 'system', content: value };
  if (!Array.isArray(value)) return null;
  const parts = value.map((p) => (isObject(p) && p.type === 'text' && typeof p.content === 'string' ? p.content : p));
  return message('system', parts, [], null);
}

export const genAi: Extractor = {
  name: 'gen_ai',
  recognize(bag: SpanBag) {
    const op = bag.peekStr('gen_ai.operation.name');
    if (op !== null) return LLM_OPERATIONS.has(op) ? 'call' : 'other';
    return bag.has('gen_ai.request.model') || bag.has('gen_ai.input.messages') || bag.has('gen_ai.system_instructions') ? 'call' : null;
  },
  extract(bag, call) {
    const out: CallFields = {};
    // What an extractor before this one read is not parsed again (the AI SDK writes both its own and these).
    if (call.inputs === null) out.system = systemInstructions(bag.takeParsed('gen_ai.system_instructions'));
    if (call.inputs === null && bag.has('gen_ai.input.messages')) {
      const cutBefore = bag.cutAt;
      const input = bag.takeParsed('gen_ai.input.messages');
      const read = Array.isArray(input) ? genAiMessages(input) : null;
      if (read !== null) out.inputs = read;
      // Cut at a length limit: the cut says so; anything else that is no message list is unreadable.
      else if (bag.cutAt === cutBefore) out.unreadable = 'gen_ai.input.messages holds no message list read here';
    }
    const output = call.completion === null ? bag.takeParsed('gen_ai.output.messages') : undefined;
    let finish = finishReasonOf(bag.take('gen_ai.response.finish_reasons'));
    if (Array.isArray(output)) {
      out.completion = genAiMessages(output)?.[0] ?? null;
      const first = output.find(isObject);
      finish ??= first !== undefined ? text(first.finish_reason) : null;
    }
    out.finishReason = finish;
    const params: Json = {};
    for (const name of GEN_AI_PARAMS) {
      const value = bag.take(`gen_ai.request.${name}`);
      if (value !== undefined) params[name] = value;
    }
    out.params = params;
    const definitions = call.tools === null ? bag.takeParsed('gen_ai.tool.definitions') : undefined;
    if (Array.isArray(definitions)) out.tools = definitions;
    out.model = bag.takeStr('gen_ai.request.model') ?? bag.takeStr('gen_ai.response.model');
    out.provider = bag.takeStr('gen_ai.provider.name') ?? bag.takeStr('gen_ai.system');
    out.usage = usageOf(
      bag.take('gen_ai.usage.input_tokens') ?? bag.take('gen_ai.usage.prompt_tokens'),
      bag.take('gen_ai.usage.output_tokens') ?? bag.take('gen_ai.usage.completion_tokens'),
      bag.take('gen_ai.usage.cache_read.input_tokens') ?? bag.take('gen_ai.usage.cache_read_input_tokens'),
      bag.take('gen_ai.usage.reasoning_tokens'),
    );
    return out;
  },
};
