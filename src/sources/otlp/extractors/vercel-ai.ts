/**
 * The Vercel AI SDK: an `ai.*.doGenerate` / `ai.*.doStream` span (by `ai.operationId`, else its
 * name) is the model call; the SDK's other `ai.*` spans (generateText, toolCall, …) are none.
 * `ai.prompt.messages` (the SDK's model messages), `ai.response.text` / `.object` /
 * `.toolCalls`, `ai.prompt.tools`, `ai.settings.*`, `ai.model.id` / `.provider`, `ai.usage.*`,
 * `ai.response.finishReason`.
 */
import type { Message, ToolCall } from '../../../record.js';
import { isObject, type Json } from '../../json-values.js';
import type { Extractor } from '../call.js';
import { message, structuredQuiet, text, toolCall, toolText, usageOf } from '../shapes.js';

/** An AI SDK model message (`ai.prompt.messages`) as chat messages: tool results become one tool message each. */
function vercelMessages(list: unknown[]): Message[] {
  const out: Message[] = [];
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
      if (type === 'text') parts.push(text(part.text) ?? '');
      else if (type === 'tool-call') calls.push(toolCall(part.toolCallId, part.toolName, part.input ?? part.args));
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

export const vercelAi: Extractor = {
  name: 'vercel-ai',
  recognize(bag) {
    const operation = bag.peekStr('ai.operationId') ?? bag.name;
    if (!operation.startsWith('ai.')) return null;
    if (/^ai\.\w+\.do(Generate|Stream)$/.test(operation)) return 'call';
    return operation.startsWith('ai.') && bag.has('ai.operationId') ? 'other' : null;
  },
  extract(bag) {
    const prompt = bag.takeParsed('ai.prompt.messages');
    const responseText = bag.take('ai.response.text');
    const objectText = bag.take('ai.response.object');
    const toolCalls = bag.takeParsed('ai.response.toolCalls');
    let completion: Message | null = null;
    if (typeof responseText === 'string' || typeof objectText === 'string' || Array.isArray(toolCalls)) {
      const calls = Array.isArray(toolCalls) ? toolCalls.filter(isObject).map((c) => toolCall(c.toolCallId, c.toolName, c.input ?? c.args)) : [];
      completion = message('assistant', [typeof responseText === 'string' ? responseText : typeof objectText === 'string' ? objectText : ''], calls, null);
    }
    const toolsAttr = bag.take('ai.prompt.tools');
    const tools = Array.isArray(toolsAttr) ? toolsAttr.map((t) => (typeof t === 'string' ? structuredQuiet(t) : t)).filter((t) => t !== undefined) : null;
    const params: Json = {};
    for (const [name, value] of bag.takeWith('ai.settings.')) if (name !== 'maxRetries') params[name] = value;
    return {
      inputs: Array.isArray(prompt) ? vercelMessages(prompt) : null,
      completion,
      tools: tools !== null && tools.length > 0 ? tools : null,
      model: bag.takeStr('ai.model.id'),
      provider: bag.takeStr('ai.model.provider'),
      params,
      usage: usageOf(
        bag.take('ai.usage.inputTokens') ?? bag.take('ai.usage.promptTokens'),
        bag.take('ai.usage.outputTokens') ?? bag.take('ai.usage.completionTokens'),
        bag.take('ai.usage.cachedInputTokens'),
        bag.take('ai.usage.reasoningTokens'),
      ),
      finishReason: bag.takeStr('ai.response.finishReason'),
    };
  },
};
