/**
 * Codex CLI rollouts: `~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl`, one
 * `{timestamp, type, payload}` per line:
 *
 * - `session_meta`: the thread's id, `cwd`, `cli_version` and `base_instructions` (the
 *   instructions every request carries: the system message of every record);
 * - `turn_context`: the model the turn's calls use;
 * - `response_item`: the Responses API items of the conversation, as sent and received.
 *   Developer and user `message`s and tool outputs (`function_call_output`,
 *   `custom_tool_call_output`) are input; assistant `message`s, `reasoning` (its summary text)
 *   and tool calls (`function_call`, `custom_tool_call`, `local_shell_call`) make up an answer;
 * - `token_usage_record`: ends a model call, with its `response_id` and `usage`; without one
 *   (older rollouts), the next input item or the turn's end does;
 * - `event_msg`: the turn's progress; a `task_complete` whose error says the response was
 *   incomplete gives the last answer its stop reason (`max_output_tokens`), one with another
 *   error in a turn that got no answer is a failed call (its message the exception); the rest
 *   (`item_completed`, `token_count`, `task_started`, …) is counted, never read as turns;
 * - `world_state`, `compacted` and other types: counted.
 *
 * What the rollout does not keep: the tool definitions, reasoning's encrypted content, calls
 * retried after an error, and what a compaction replaced the history with.
 */
import type { Message, ToolCall } from '../../record.js';
import type { TraceFile } from '../trace-file.js';
import { count, isObject, str, type Json } from '../json-values.js';
import { contentOf, readSessionLines, sessionTime, sessionUsage, SessionConversation, type SessionAnswer, type SessionLineReader } from '../session-records.js';
import type { SourceBatch } from '../source.js';

const KIND = 'codex';
const INCOMPLETE = /Incomplete response returned, reason: (\w+)/;

interface OpenAnswer {
  line: number;
  text: string[];
  reasoning: string[];
  calls: ToolCall[];
  timestamp: number | null;
}

class CodexReader implements SessionLineReader {
  private readonly session: SessionConversation;
  private open: OpenAnswer | null = null;
  /** An answer whose call ended, held until the turn says whether it was cut. */
  private held: SessionAnswer | null = null;
  private model: string | null = null;
  private provider: string | null = null;
  /** Whether the turn under way got an answer; a turn ending in an error without one is a failed call. */
  private answered = false;
  private lastLine = 0;
  private lastTime: number | null = null;

  constructor(file: TraceFile) {
    this.session = new SessionConversation(file, KIND, KIND);
  }

  line(value: unknown, lineNo: number, out: SourceBatch, damage: (reason: string) => void): void {
    if (!isObject(value) || typeof value.type !== 'string') {
      damage('not a Codex rollout line (no "type")');
      return;
    }
    const payload = isObject(value.payload) ? value.payload : {};
    const timestamp = sessionTime(value.timestamp);
    this.lastLine = lineNo;
    this.lastTime = timestamp;
    this.session.seen(timestamp);
    switch (value.type) {
      case 'session_meta':
        this.meta(payload);
        return;
      case 'turn_context':
        this.model = str(payload.model) ?? this.model;
        this.session.noted('turn_context');
        return;
      case 'response_item':
        this.item(payload, lineNo, timestamp, out);
        return;
      case 'token_usage_record':
        this.endCall(payload);
        return;
      case 'event_msg':
        this.event(payload, out);
        return;
      default:
        this.session.noted(value.type);
    }
  }

  private meta(payload: Json): void {
    this.session.setSession(str(payload.id) ?? str(payload.session_id));
    if (typeof payload.cli_version === 'string') this.session.version = payload.cli_version;
    this.provider = str(payload.model_provider) ?? this.provider;
    const instructions = isObject(payload.base_instructions) ? str(payload.base_instructions.text) : str(payload.instructions);
    if (instructions !== null) this.session.setSystem(instructions);
  }

  private item(item: Json, lineNo: number, timestamp: number | null, out: SourceBatch): void {
    const type = str(item.type);
    if (type === 'message' && item.role === 'assistant') {
      this.answerPart(lineNo, timestamp, out).text.push(String(contentOf(item.content)));
      return;
    }
    if (type === 'reasoning') {
      const summary = Array.isArray(item.summary) ? item.summary.filter(isObject).map((s) => str(s.text) ?? '').join('\n') : '';
      const text = Array.isArray(item.content) ? item.content.filter(isObject).map((s) => str(s.text) ?? '').join('\n') : '';
      const open = this.answerPart(lineNo, timestamp, out);
      if (text !== '' || summary !== '') open.reasoning.push(text !== '' ? text : summary);
      return;
    }
    if (type === 'function_call' || type === 'custom_tool_call' || type === 'local_shell_call') {
      const open = this.answerPart(lineNo, timestamp, out);
      const args = type === 'function_call' ? (item.arguments ?? '') : type === 'custom_tool_call' ? (item.input ?? '') : (item.action ?? {});
      open.calls.push({ id: str(item.call_id) ?? str(item.id) ?? `call_${open.calls.length}`, type: 'function', function: { name: str(item.name) ?? type, arguments: args } });
      return;
    }
    // Anything else is input: the call before it has ended.
    this.endCall(null);
    this.flush(out);
    if (type === 'message') {
      const role = item.role === 'developer' || item.role === 'system' ? 'system' : str(item.role) ?? 'user';
      this.session.add({ role, content: contentOf(item.content) }, `${str(item.role) ?? 'user'}_message`);
    } else if (type === 'function_call_output' || type === 'custom_tool_call_output' || type === 'local_shell_call_output') {
      const output = isObject(item.output) ? (item.output.content ?? item.output) : item.output;
      this.session.add({ role: 'tool', content: typeof output === 'string' ? output : contentOf(output), tool_call_id: str(item.call_id) ?? '' }, type);
    } else this.session.noted(type ?? 'unknown_item');
  }

  private answerPart(lineNo: number, timestamp: number | null, out: SourceBatch): OpenAnswer {
    if (this.open === null) this.flush(out);
    this.answered = true;
    return (this.open ??= { line: lineNo, text: [], reasoning: [], calls: [], timestamp });
  }

  /** The call whose answer was being gathered ends (`usage` from its token_usage_record). */
  private endCall(record: Json | null): void {
    const open = this.open;
    if (open === null) return;
    this.open = null;
    const message: Message = { role: 'assistant', content: open.text.join('\n') };
    if (open.reasoning.length > 0) message.reasoning_content = open.reasoning.join('\n');
    if (open.calls.length > 0) message.tool_calls = open.calls;
    const usage = record !== null && isObject(record.usage) ? record.usage : null;
    this.held = {
      message,
      line: open.line,
      model: this.model,
      provider: this.provider,
      usage:
        usage === null
          ? null
          : sessionUsage({
              input: count(usage.input_tokens),
              output: count(usage.output_tokens),
              cacheRead: count(usage.cached_input_tokens),
              cacheWrite: count(usage.cache_write_input_tokens),
              reasoning: count(usage.reasoning_output_tokens),
              inputIncludesCache: true,
            }),
      timestamp: open.timestamp,
    };
  }

  /** Hands the held answer to the conversation (a record, then a turn of it). */
  private flush(out: SourceBatch): void {
    if (this.held === null) return;
    this.session.answer(this.held, out);
    this.held = null;
  }

  private event(payload: Json, out: SourceBatch): void {
    const type = str(payload.type) ?? 'event';
    this.session.noted(type);
    if (type === 'task_started') this.answered = false;
    if (type !== 'task_complete' && type !== 'turn_aborted') return;
    this.endCall(null);
    const error = isObject(payload.error) ? str(payload.error.message) : str(payload.error);
    const cut = error !== null ? INCOMPLETE.exec(error)?.[1] : undefined;
    if (this.held !== null && cut !== undefined) this.held.stopReason = cut;
    this.flush(out);
    // The turn's call failed and Codex gave up: the error is all the rollout keeps of it.
    if (error !== null && cut === undefined && !this.answered) {
      this.session.failure({ exception: error, line: this.lastLine, model: this.model, provider: this.provider, timestamp: this.lastTime }, out);
    }
  }

  end(out: SourceBatch): void {
    this.endCall(null);
    this.flush(out);
    out.runs!.push(this.session.run());
  }
}

export async function* readCodexFile(file: TraceFile): AsyncGenerator<SourceBatch> {
  yield* readSessionLines(file, new CodexReader(file));
}
