/**
 * OpenLLMetry's flattened content: `gen_ai.prompt.<i>.*` and `gen_ai.completion.<i>.*` (role,
 * content, tool_calls.<j>.*, tool_call_id, finish_reason), and the tools offered as
 * `llm.request.functions.<i>.name|description|parameters`. Its spans carry the GenAI
 * attributes too (gen-ai.ts, before it in the chain, reads those); OpenLLMetry's own workflow,
 * task, agent and tool spans (`traceloop.span.kind`) are no LLM call.
 */
import type { Message } from '../../../record.js';
import { isObject, type Json } from '../../json-values.js';
import type { SpanBag } from '../bag.js';
import type { CallFields, Extractor } from '../call.js';
import { message, structuredQuiet, text, toolCall } from '../shapes.js';

/** The fields of each message under `prefix`, by index, taken. */
function flattened(bag: SpanBag, prefix: string): Map<string, unknown>[] | null {
  const byIndex = new Map<number, Map<string, unknown>>();
  for (const [rest, value] of bag.takeWith(prefix)) {
    const m = /^(\d+)\.(.+)$/s.exec(rest);
    if (m === null) continue;
    if (!byIndex.has(Number(m[1]))) byIndex.set(Number(m[1]), new Map());
    byIndex.get(Number(m[1]))!.set(m[2], value);
  }
  if (byIndex.size === 0) return null;
  return [...byIndex].sort(([a], [b]) => a - b).map(([, f]) => f);
}

function flattenedMessage(f: Map<string, unknown>): Message {
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
  return message(role, parts, toolCalls, text(f.get('tool_call_id')));
}

/** `llm.request.functions.<i>.*` as OpenAI function tools. */
function functions(bag: SpanBag): unknown[] | null {
  const byIndex = new Map<number, Json>();
  for (const [rest, value] of bag.takeWith('llm.request.functions.')) {
    // OpenLLMetry writes the JSON schema as `arguments` (0.22) or `parameters`.
    const m = /^(\d+)\.(name|description|parameters|arguments)$/.exec(rest);
    if (m === null) continue;
    const fn = byIndex.get(Number(m[1])) ?? {};
    if (m[2] === 'name' || m[2] === 'description') fn[m[2]] = value;
    else fn.parameters = structuredQuiet(String(value)) ?? value;
    byIndex.set(Number(m[1]), fn);
  }
  if (byIndex.size === 0) return null;
  return [...byIndex].sort(([a], [b]) => a - b).map(([, fn]) => ({ type: 'function', function: fn }));
}

/** What an OpenLLMetry span with content always holds (its first message's fields, its first tool): looked up, not searched for. */
const MARKERS = ['gen_ai.prompt.0.content', 'gen_ai.prompt.0.role', 'gen_ai.completion.0.content', 'gen_ai.completion.0.role', 'gen_ai.completion.0.finish_reason', 'gen_ai.completion.0.tool_calls.0.name', 'llm.request.functions.0.name'];

export const openLlmetry: Extractor = {
  name: 'openllmetry',
  recognize(bag) {
    for (const key of MARKERS) if (bag.has(key)) return 'call';
    return bag.has('traceloop.span.kind') ? 'other' : null;
  },
  extract(bag, call) {
    const out: CallFields = {};
    if (call.inputs === null) out.inputs = flattened(bag, 'gen_ai.prompt.')?.map(flattenedMessage) ?? null;
    if (call.completion === null) {
      const first = flattened(bag, 'gen_ai.completion.')?.[0];
      if (first !== undefined) {
        out.completion = flattenedMessage(first);
        out.finishReason = text(first.get('finish_reason'));
      }
    }
    out.tools = functions(bag);
    return out;
  },
};
