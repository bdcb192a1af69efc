/**
 * Langfuse's OTel SDK (`@langfuse/tracing`, `@langfuse/openai`, the Python SDK 3+): an
 * observation is a span with `langfuse.observation.type`; a `generation` is an LLM call, any
 * other type (span, event, agent, tool, chain, retriever, evaluator, embedding, guardrail) is
 * none. Names as langfuse-js writes them (`LangfuseOtelSpanAttributes`):
 * `langfuse.observation.input` (JSON: the request `{messages, tools, tool_choice, …}` as
 * `@langfuse/openai` records it, a message list, or a prompt text), `langfuse.observation.output`
 * (the answer message, a response body, or a text), `langfuse.observation.model.name`,
 * `langfuse.observation.model.parameters` (JSON), `langfuse.observation.usage_details` (JSON:
 * `{input, output, total, input_<detail>, output_<detail>}`, where `input` / `output` are what is
 * left after the details, or OpenAI's own names), `langfuse.observation.level` (`ERROR` for a
 * failed call, with the span status unset) and `langfuse.observation.status_message`. No finish
 * reason is recorded: outcome.ts infers a cut answer from the tokens.
 */
import type { Message, Usage } from '../../../record.js';
import { isObject, type Json } from '../../json-values.js';
import { numberValue } from '../../../canonical/json-value.js';
import type { CallFields, Extractor } from '../call.js';
import { chatMessages, requestMessages, responseMessage, text, usageOf } from '../shapes.js';

const PREFIX = 'langfuse.observation.';

/** The request's messages: a chat request body, a message list, or a prompt text. */
function inputMessages(input: unknown): Message[] | null {
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  if (Array.isArray(input)) return input.length > 0 && input.every((m) => isObject(m) && typeof m.role === 'string') ? chatMessages(input) : null;
  if (!isObject(input)) return null;
  if (Array.isArray(input.messages)) return requestMessages(input) ?? chatMessages(input.messages, input.system);
  return typeof input.prompt === 'string' ? [{ role: 'user', content: input.prompt }] : null;
}

/** The answer: a message (`{role, content, tool_calls}`), a response body, or a text. */
function outputMessage(output: unknown): Message | null {
  if (typeof output === 'string') return { role: 'assistant', content: output };
  if (!isObject(output)) return null;
  if (typeof output.role === 'string') return chatMessages([{ ...output, role: 'assistant' }])[0] ?? null;
  return responseMessage(output);
}

/** Token counts: OpenAI's names as recorded, else Langfuse's `input` / `output` with the details split off them added back. */
function usageOfDetails(details: unknown): Usage | null {
  if (!isObject(details)) return null;
  if (details.prompt_tokens !== undefined || details.completion_tokens !== undefined) return usageOf(details.prompt_tokens, details.completion_tokens);
  const sum = (side: 'input' | 'output'): number | null => {
    const base = numberValue(details[side]);
    if (typeof base !== 'number') return null;
    let n = base;
    for (const [key, value] of Object.entries(details)) {
      const v = numberValue(value);
      if (key.startsWith(`${side}_`) && typeof v === 'number') n += v;
    }
    return n;
  };
  return usageOf(sum('input'), sum('output'), details.input_cached_tokens ?? details.input_cache_read, details.output_reasoning_tokens);
}

export const langfuse: Extractor = {
  name: 'langfuse',
  recognize(bag) {
    const type = bag.peekStr(`${PREFIX}type`);
    if (type === null) return null;
    return type.toLowerCase() === 'generation' ? 'call' : 'other';
  },
  extract(bag) {
    const out: CallFields = {};
    const input = bag.takeParsed(`${PREFIX}input`);
    out.inputs = inputMessages(input);
    if (out.inputs === null && input !== undefined) out.unreadable = `${PREFIX}input holds no chat request read here`;
    if (isObject(input) && Array.isArray(input.tools) && input.tools.length > 0) out.tools = input.tools;
    out.completion = outputMessage(bag.takeParsed(`${PREFIX}output`));
    out.model = bag.takeStr(`${PREFIX}model.name`);
    const params = bag.takeParsed(`${PREFIX}model.parameters`);
    out.params = isObject(params) ? (params as Json) : {};
    out.usage = usageOfDetails(bag.takeParsed(`${PREFIX}usage_details`));
    const level = bag.takeStr(`${PREFIX}level`);
    const message = bag.takeStr(`${PREFIX}status_message`);
    if (level !== null && level.toUpperCase() === 'ERROR') out.error = text(message) ?? 'level ERROR';
    return out;
  },
};
