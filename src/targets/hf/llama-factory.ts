/**
 * LLaMA-Factory's rows, for a dataset whose examples call tools. Its sharegpt converter
 * (hiyouga/LLaMA-Factory `src/llamafactory/data/converter.py`, `SharegptDatasetConverter`) keeps
 * each message's role and content only, so OpenAI `tool_calls` would be read as an empty
 * assistant turn. A tool call is a turn of its own there: `function_call`, whose content is the
 * call `{"name", "arguments"}` (a list of them for parallel calls) as JSON text, the arguments an
 * object (`formatter.py` `FunctionFormatter` `json.dumps`-es them again). Roles must alternate:
 * user or tool at even places (after an optional leading system message), assistant or
 * function_call at odd ones, and the last must be the latter; a row that breaks it is skipped
 * by the converter ("Invalid role tag"). Rows here are written only where they are read whole:
 * one tool result per call turn, no text beside the calls; the card counts the others.
 * Its converter keeps no reasoning field: recorded reasoning is written into the answer between
 * its templates' default thought words (`template.py` `thought_words`, `<think>\n` and
 * `\n</think>\n\n`, Qwen3's own), where its ReasoningTemplate and FunctionFormatter find it.
 * Weights are not written (`mask_history` is its `--train-on last`).
 */
import { isJsonObject, parseJsonText, writeJson } from '../../canonical/json-value.js';
import type { JsonObject } from '../target.js';

/** LLaMA-Factory's default thought words (`template.py`), around the reasoning put before an answer. */
export const THOUGHT_WORDS = ['<think>\n', '\n</think>\n\n'] as const;

/** An assistant turn's content with its recorded reasoning before it, as LLaMA-Factory's templates read it. */
function withThought(m: JsonObject, content: string): string {
  const reasoning = m.reasoning_content;
  return typeof reasoning === 'string' && reasoning !== '' ? `${THOUGHT_WORDS[0]}${reasoning}${THOUGHT_WORDS[1]}${content}` : content;
}

export type SharegptRow = { ok: true; row: JsonObject } | { ok: false; reason: string };

/** The tags of LLaMA-Factory's dataset_info.json entry for these rows (OpenAI role names, its own function_call). */
export const SHAREGPT_TAGS = {
  role_tag: 'role',
  content_tag: 'content',
  user_tag: 'user',
  assistant_tag: 'assistant',
  observation_tag: 'tool',
  function_tag: 'function_call',
  system_tag: 'system',
} as const;

/** A written hf row (messages, or prompt and completion) as LLaMA-Factory reads it whole, or why it cannot be. */
export function sharegptRow(row: JsonObject): SharegptRow {
  const messages = (Array.isArray(row.messages) ? row.messages : [...((row.prompt as unknown[]) ?? []), ...((row.completion as unknown[]) ?? [])]).filter(isJsonObject);
  const out: JsonObject[] = [];
  for (const m of messages) {
    const calls = Array.isArray(m.tool_calls) ? m.tool_calls.filter(isJsonObject) : [];
    if (m.role === 'assistant' && calls.length > 0) {
      if (typeof m.content === 'string' && m.content !== '') return { ok: false, reason: 'an assistant turn with text beside its tool calls' };
      const parsed: JsonObject[] = [];
      for (const call of calls) {
        const fn = call.function as JsonObject;
        let args: unknown;
        try {
          args = parseJsonText(String(fn.arguments));
        } catch {
          return { ok: false, reason: 'tool-call arguments that are no JSON object' };
        }
        if (!isJsonObject(args)) return { ok: false, reason: 'tool-call arguments that are no JSON object' };
        parsed.push({ name: fn.name, arguments: args });
      }
      out.push({ role: 'function_call', content: withThought(m, writeJson(parsed.length === 1 ? parsed[0] : parsed)) });
    } else if (m.role === 'tool' && out.at(-1)?.role === 'tool') {
      return { ok: false, reason: 'several tool results in a row (one observation a turn)' };
    } else out.push({ role: m.role, content: m.role === 'assistant' ? withThought(m, String(m.content ?? '')) : (m.content ?? '') });
  }
  if (!alternates(out)) return { ok: false, reason: 'turns that do not alternate (user or tool, then assistant)' };
  return { ok: true, row: { messages: out, ...(typeof row.tools === 'string' ? { tools: row.tools } : {}) } };
}

/** Whether LLaMA-Factory's converter reads the messages whole: after a leading system message, user or tool then assistant or function_call, to the end. */
export function alternates(messages: readonly JsonObject[]): boolean {
  const turns = messages[0]?.role === 'system' ? messages.slice(1) : messages;
  const even = new Set(['user', 'tool']);
  const odd = new Set(['assistant', 'function_call']);
  return turns.length > 0 && turns.length % 2 === 0 && turns.every((m, i) => (i % 2 === 0 ? even : odd).has(m.role as string));
}
