/**
 * The rows of the `hf` target: the example the export's stages work on (`messages`, tool
 * definitions as a list), the row as written, and back.
 *
 * Written, a row holds `messages` (or, `--hf-shape prompt-completion`, `prompt` and
 * `completion`: every message before the last assistant turn, and that turn) and, when it calls
 * tools, `tools`: the definitions as one JSON text. Tool-call arguments are JSON text too, the
 * model's own when it was recorded as text. Neither is a struct, so no loader that infers one
 * schema for a file (Arrow's JSON reader, `datasets`, DuckDB) can merge the keys of different
 * tools' arguments or definitions into one struct and hand a row keys it never had, as nulls.
 * The loader step that turns them back into mappings is `asChat` (and its Python twin in the
 * snippets the target writes): keys whose value is null are left out (a columnar file holds
 * every message key in every message), arguments and tools are parsed.
 */
import { isJsonObject, parseJsonText, writeJson } from '../../canonical/json-value.js';
import type { JsonObject } from '../target.js';

export type Shape = 'messages' | 'prompt-completion';
export const SHAPES: readonly Shape[] = ['messages', 'prompt-completion'];

/** Index of the last assistant message, or -1. */
export function lastAssistant(messages: readonly unknown[]): number {
  for (let i = messages.length - 1; i >= 0; i--) if (isJsonObject(messages[i]) && (messages[i] as JsonObject).role === 'assistant') return i;
  return -1;
}

/** The example as written: tools as JSON text, the messages split at the last assistant turn for prompt-completion. */
export function writtenRow(example: JsonObject, shape: Shape): JsonObject {
  const messages = example.messages as JsonObject[];
  const tools = Array.isArray(example.tools) && example.tools.length > 0 ? { tools: writeJson(example.tools) } : {};
  if (shape === 'messages') return { messages, ...tools };
  const last = lastAssistant(messages);
  return { prompt: messages.slice(0, last), completion: messages.slice(last), ...tools };
}

/**
 * A written row as a list of messages and tools, as the template gets them: for
 * prompt-completion, the prompt's assistant turns weigh 0 (only the completion is trained).
 * Arguments stay as written (`asChat` parses them); the tools' text is parsed, and
 * left as it is when it does not parse (validation says so).
 */
export function rowMessages(row: JsonObject): JsonObject {
  let messages: unknown[];
  if (Array.isArray(row.prompt) && Array.isArray(row.completion) && row.messages === undefined) {
    messages = [...row.prompt.map((m) => (isJsonObject(m) && m.role === 'assistant' ? { ...m, weight: 0 } : m)), ...row.completion];
  } else messages = row.messages as unknown[];
  let tools: unknown = row.tools;
  if (typeof tools === 'string') {
    try {
      tools = parseJsonText(tools);
    } catch {
      // Left as text: the line check reports it.
    }
  }
  return tools === undefined || tools === null ? { messages } : { messages, tools };
}

/** A value with every key whose value is null left out, at any depth: what a columnar file's row held before. */
export function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (isJsonObject(value)) {
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(value)) if (v !== null) out[k] = withoutNulls(v);
    return out;
  }
  return value;
}

/**
 * The loader step every snippet runs before the chat template: null keys left out, arguments
 * that hold a JSON object parsed into a mapping (Qwen2.5's and Llama 3.1's templates `tojson`
 * them, and would print text as a quoted string), tools parsed. Text that is no JSON object
 * stays text.
 */
export function asChat(row: JsonObject): { messages: JsonObject[]; tools: unknown[] | null } {
  const { messages, tools } = rowMessages(withoutNulls(row) as JsonObject);
  const chat = (messages as unknown[]).filter(isJsonObject).map((m) => {
    if (!Array.isArray(m.tool_calls)) return m;
    return {
      ...m,
      tool_calls: m.tool_calls.map((c: unknown) => {
        if (!isJsonObject(c) || !isJsonObject(c.function) || typeof c.function.arguments !== 'string') return c;
        let parsed: unknown;
        try {
          parsed = parseJsonText(c.function.arguments);
        } catch {
          return c;
        }
        return isJsonObject(parsed) ? { ...c, function: { ...c.function, arguments: parsed } } : c;
      }),
    };
  });
  return { messages: chat, tools: Array.isArray(tools) && tools.length > 0 ? tools : null };
}
