/**
 * The clean-up every target shares: Synalinks messages are OpenAI-like but
 * looser (dict content, parsed or string arguments, `developer` and `function`
 * roles, tool results without ids). `normalizeMessages` turns them into one
 * strict shape; each target module then only decides how to write it.
 */
import { isJsonObject, writeJson } from '../canonical/json-value.js';
import type { Message, ToolCall } from '../record.js';
import type { JsonObject, Projection, ReasoningMode } from './target.js';
import { NotRepresentable, normalizeContent, type ContentPart } from '../message-content.js';
import { parseArguments, TOOL_NAME_PATTERN } from '../tool-calls.js';

export type NormalRole = 'system' | 'user' | 'assistant' | 'tool';

export interface NormalToolCall {
  id: string;
  name: string;
  /** The arguments as an object, whichever form was recorded; numbers are `JsonNumber`. */
  arguments: JsonObject;
  /**
   * The recorded string when arguments were recorded as a string holding a JSON
   * object; kept so string-argument targets write the model's exact text.
   */
  argumentsText: string | null;
}

export interface NormalMessage {
  role: NormalRole;
  /** A string, or parts only when the message holds images (text-only parts are joined). */
  content: string | ContentPart[];
  /** Provider reasoning with some text (not white space only), assistant messages only. */
  reasoning: string | null;
  toolCalls: NormalToolCall[];
  /** Tool messages only: the id of the call this result answers (recorded or paired). */
  toolCallId: string | null;
  name: string | null;
}

export type Normalized =
  | { ok: true; messages: NormalMessage[] }
  | { ok: false; reason: 'empty' | 'no_completion' | 'not_representable' | 'tool_sequence'; detail: string };

/**
 * `developer` is OpenAI's newer name for `system`; `function` is the deprecated
 * form of a tool result, so it becomes `tool` and is paired with a call like
 * any tool result lacking an id.
 */
const ROLE_MAP: Record<string, NormalRole> = {
  system: 'system',
  developer: 'system',
  user: 'user',
  assistant: 'assistant',
  tool: 'tool',
  function: 'tool',
};

export function normalizeMessages(messages: readonly Message[]): Normalized {
  if (messages.length === 0) return { ok: false, reason: 'empty', detail: 'no messages' };
  // Recorded JSON of another shape (null, a list, a number where a message stands): no message to write.
  const odd = messages.findIndex((m: unknown) => typeof m !== 'object' || m === null || Array.isArray(m));
  if (odd !== -1) return { ok: false, reason: 'not_representable', detail: `message ${odd} is ${JSON.stringify(messages[odd])}, not a message object` };
  const last = messages[messages.length - 1];
  if (last.role !== 'assistant') {
    return { ok: false, reason: 'no_completion', detail: `last message is ${JSON.stringify(last.role)}, not the assistant's` };
  }
  let normal: NormalMessage[];
  try {
    normal = messages.map((m, i) => normalizeMessage(m, i));
    pairToolResults(normal, messages);
  } catch (e) {
    if (e instanceof NotRepresentable) return { ok: false, reason: 'not_representable', detail: e.message };
    throw e;
  }
  const sequence = toolSequenceProblem(normal.map((m) => ({ role: m.role, callIds: m.toolCalls.map((c) => c.id), answers: m.toolCallId })));
  if (sequence !== null) return { ok: false, reason: 'tool_sequence', detail: sequence };
  const completion = normal[normal.length - 1];
  if (contentIsEmpty(completion.content) && completion.toolCalls.length === 0) {
    return { ok: false, reason: 'empty', detail: 'the completion has neither content nor tool calls' };
  }
  return { ok: true, messages: normal };
}

/**
 * Whether a recorded message carries provider reasoning a target writes, drops or inlines.
 * White space only is no reasoning, as the quality stages count it: kept, it wrote
 * `<think>  </think>` or a blank field to train on.
 */
export function holdsReasoning(m: Message): boolean {
  return typeof m.reasoning_content === 'string' && m.reasoning_content.trim() !== '';
}

function normalizeMessage(m: Message, index: number): NormalMessage {
  const role = ROLE_MAP[m.role];
  if (role === undefined) throw new NotRepresentable(`message ${index}: unknown role ${JSON.stringify(m.role)}`);
  const toolCalls = role === 'assistant' && Array.isArray(m.tool_calls)
    ? m.tool_calls.map((c, j) => normalizeToolCall(c, index, j))
    : [];
  const reasoning = role === 'assistant' && holdsReasoning(m) ? (m.reasoning_content as string) : null;
  return {
    role,
    content: normalizeContent(m.content, index),
    reasoning,
    toolCalls,
    toolCallId: role === 'tool' && typeof m.tool_call_id === 'string' && m.tool_call_id !== '' ? m.tool_call_id : null,
    name: typeof m.name === 'string' && m.name !== '' ? m.name : null,
  };
}

function normalizeToolCall(call: ToolCall, index: number, j: number): NormalToolCall {
  const fn = isObject(call) && isObject(call.function) ? call.function : null;
  if (fn === null || typeof fn.name !== 'string' || fn.name === '') {
    throw new NotRepresentable(`message ${index}: tool call ${j} has no function name`);
  }
  // Every target declares tools in OpenAI's shape, whose names trainers check against this pattern.
  if (!TOOL_NAME_PATTERN.test(fn.name)) {
    throw new NotRepresentable(`message ${index}: tool name ${JSON.stringify(fn.name)} does not match ${TOOL_NAME_PATTERN.source}`);
  }
  const parsed = parseArguments(fn.arguments);
  if (parsed === null) {
    throw new NotRepresentable(`message ${index}: arguments of ${fn.name} are not a JSON object`);
  }
  return {
    // A missing id is synthesized from the position, so the same call gets the
    // same id in every record of an agent trajectory.
    id: typeof call.id === 'string' && call.id !== '' ? call.id : `call_${index}_${j}`,
    name: fn.name,
    arguments: parsed.value,
    argumentsText: parsed.text,
  };
}

/**
 * Gives every tool result without an id the id of the call it answers: the next
 * unanswered call of the latest assistant turn, preferring a call of the same name
 * when the result is a legacy `function` message carrying `name`. A result that
 * answers no call is left for `toolSequenceProblem` to name.
 */
function pairToolResults(normal: NormalMessage[], recorded: readonly Message[]): void {
  let pending: NormalToolCall[] = [];
  normal.forEach((m, i) => {
    if (m.role === 'assistant') {
      pending = m.toolCalls.slice();
      return;
    }
    if (m.role !== 'tool') return;
    if (m.toolCallId !== null) {
      pending = pending.filter((c) => c.id !== m.toolCallId);
      return;
    }
    if (pending.length === 0) return;
    const wantedName = recorded[i].role === 'function' ? m.name : null;
    const byName = wantedName === null ? -1 : pending.findIndex((c) => c.name === wantedName);
    const k = byName >= 0 ? byName : 0;
    m.toolCallId = pending[k].id;
    pending.splice(k, 1);
  });
}

/** `<think>…</think>` immediately before the content: the form Nemotron-style templates produce. */
export function inlineReasoning(reasoning: string | null, content: string): string {
  return reasoning === null ? content : `<think>${reasoning}</think>${content}`;
}

export function contentIsEmpty(content: string | ContentPart[]): boolean {
  return typeof content === 'string' ? content === '' : content.length === 0;
}

/** Distinct names of the tools the example calls, sorted. */
export function calledToolNames(messages: readonly NormalMessage[]): string[] {
  const names = new Set<string>();
  for (const m of messages) for (const c of m.toolCalls) names.add(c.name);
  return [...names].sort();
}

export function isObject(value: unknown): value is JsonObject {
  return isJsonObject(value);
}

/**
 * The arguments as a JSON string: the recorded string when there was one (the model's
 * exact text), else the recorded object written compactly with each number's recorded text.
 */
export function argumentsString(call: NormalToolCall): string {
  return call.argumentsText ?? writeJson(call.arguments);
}

/** The NeMo formats hold content as strings only: the first message with image parts makes the example unrepresentable. */
export function imageFailure(messages: readonly NormalMessage[]): { ok: false; reason: 'not_representable'; detail: string } | null {
  const index = messages.findIndex((m) => typeof m.content !== 'string');
  return index < 0 ? null : { ok: false, reason: 'not_representable', detail: `message ${index}: images cannot be written as string content` };
}

/** A message as the tool-call sequence rule sees it: its role, its calls' ids (null: none given), the id it answers. */
export interface SequenceTurn {
  role: unknown;
  callIds: readonly (string | null)[];
  answers: string | null;
}

/**
 * What breaks OpenAI's rule for tool calls, or null: "an assistant message with 'tool_calls'
 * must be followed by tool messages responding to each 'tool_call_id'" (the chat API answers
 * 400 otherwise). Every call id is used once in the example; an assistant turn with calls
 * that is not the completion is followed at once by one tool message per call, each answering
 * a call of that turn (a result without an id takes the next unanswered one), and by nothing
 * else until every call is answered; a tool message stands nowhere else. One rule, for the
 * exporter (which drops the example, `tool_sequence`) and for `validate`.
 */
export function toolSequenceProblem(turns: readonly SequenceTurn[]): string | null {
  const firstUse = new Map<string, number>();
  for (const [i, turn] of turns.entries()) {
    for (const id of turn.callIds) {
      if (id === null) continue;
      const earlier = firstUse.get(id);
      if (earlier !== undefined) return `message ${i}: tool call id ${JSON.stringify(id)} is used again (first in message ${earlier}); each call needs an id of its own`;
      firstUse.set(id, i);
    }
  }
  const answeredAt = (id: string, from: number) => turns.findIndex((t, k) => k >= from && t.role === 'tool' && t.answers === id);
  let i = 0;
  while (i < turns.length) {
    const turn = turns[i];
    if (turn.role === 'tool') return `message ${i}: a tool result that does not follow the assistant turn whose call it answers`;
    const at = i++;
    if (turn.role !== 'assistant' || turn.callIds.length === 0 || i === turns.length) continue;
    const open = turn.callIds.map((id, j) => ({ id, j }));
    for (; i < turns.length && turns[i].role === 'tool' && open.length > 0; i++) {
      const answers = turns[i].answers;
      const k = answers === null ? 0 : open.findIndex((c) => c.id === answers);
      if (k < 0) {
        const what = turn.callIds.includes(answers) ? 'answers a call already answered' : 'answers no call of the assistant turn before it';
        return `message ${i}: tool_call_id ${JSON.stringify(answers)} ${what} (message ${at})`;
      }
      open.splice(k, 1);
    }
    if (open.length > 0) {
      const missing = open[0];
      const name = missing.id === null ? `tool call ${missing.j}` : `tool call ${JSON.stringify(missing.id)}`;
      const later = missing.id === null ? -1 : answeredAt(missing.id, i);
      if (later >= 0) return `message ${i} (${String(turns[i].role)}) comes between ${name} of message ${at} and its result (message ${later})`;
      return `${name} of message ${at} is not answered by the tool messages right after it (${turn.callIds.length - open.length} of ${turn.callIds.length} answered)`;
    }
  }
  return null;
}

/**
 * A message as the OpenAI-style JSONL of the open trainers holds it (nemo, hf): string content,
 * `reasoning_content` kept, dropped or inlined as `<think>…</think>`, tool calls with an id, a
 * type and arguments as a JSON string (`argumentsString`). `name` is not written.
 */
export function chatMessage(m: NormalMessage, reasoning: ReasoningMode): JsonObject {
  const content = m.content as string;
  switch (m.role) {
    case 'system':
    case 'user':
      return { role: m.role, content };
    case 'tool':
      return { role: 'tool', content, tool_call_id: m.toolCallId };
    case 'assistant': {
      const out: JsonObject = { role: 'assistant', content: reasoning === 'inline' ? inlineReasoning(m.reasoning, content) : content };
      if (reasoning === 'keep' && m.reasoning !== null) out.reasoning_content = m.reasoning;
      if (m.toolCalls.length > 0) {
        out.tool_calls = m.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: argumentsString(c) } }));
      }
      return out;
    }
  }
}

/**
 * The chat targets' example (nemo, hf): the normalized messages as OpenAI-style chat messages,
 * reasoning as `reasoning` says; images refused, as neither writes them.
 */
export function chatProjection(messages: readonly Message[], reasoning: ReasoningMode): Projection {
  const normal = normalizeMessages(messages);
  if (!normal.ok) return normal;
  const images = imageFailure(normal.messages);
  if (images !== null) return images;
  return { ok: true, example: { messages: normal.messages.map((m) => chatMessage(m, reasoning)) }, toolNames: calledToolNames(normal.messages) };
}
