/**
 * pi sessions (`@mariozechner/pi-coding-agent`, session format version 3):
 * `~/.pi/agent/sessions/--<cwd, / as ->--/<time>_<session id>.jsonl`. The first line is the
 * `session` header (`id`, `cwd`, `version`); every other line an entry with `id` and
 * `parentId` (a tree: a branch goes back to an earlier entry) and a `type`:
 *
 * - `message`: `message.role` `user` (a user turn), `assistant` (an answer: text, `thinking`
 *   as reasoning, `toolCall` blocks as tool calls, with `model`, `provider`, `usage` with its
 *   cost, `stopReason`; a `stopReason` of `error` or `aborted` is a failed call, its
 *   `errorMessage` the exception), `toolResult` (a tool message); `custom`, `branchSummary` and
 *   `compactionSummary` messages are user turns as pi sends them (summaries wrapped in its
 *   `<summary>` text); `bashExecution` (a `!` command the user ran) is counted, not read;
 * - `compaction`: from here on the model sees the summary, then the entries from
 *   `firstKeptEntryId` on; `branch_summary`: a user turn with the summary;
 * - `model_change`, `thinking_level_change`, `custom`, `label`, `session_info`: counted.
 *
 * What the file does not keep: the system prompt, the tool definitions, calls the provider's
 * client retried, the call that wrote a compaction's summary, and pi's version.
 */
import type { Message, ToolCall } from '../../record.js';
import type { TraceFile } from '../trace-file.js';
import { count, isObject, num, str, type Json } from '../json-values.js';
import { blockText, contentOf, readSessionLines, sessionTime, sessionUsage, SessionConversation, type SessionLineReader } from '../session-records.js';
import type { SourceBatch } from '../source.js';

const KIND = 'pi';

/** How pi puts a summary before the model (its `messages.ts`): a user turn wrapping it. */
const COMPACTION_SUMMARY = ['The conversation history before this point was compacted into the following summary:\n\n<summary>\n', '\n</summary>'] as const;
const BRANCH_SUMMARY = ['The following is a summary of a branch that this conversation came back from:\n\n<summary>\n', '</summary>'] as const;

function summaryTurn([prefix, suffix]: readonly [string, string], summary: unknown): Message {
  return { role: 'user', content: `${prefix}${typeof summary === 'string' ? summary : ''}${suffix}` };
}

class PiReader implements SessionLineReader {
  private readonly session: SessionConversation;

  constructor(file: TraceFile) {
    this.session = new SessionConversation(file, KIND, KIND);
  }

  line(value: unknown, lineNo: number, out: SourceBatch, damage: (reason: string) => void): void {
    if (!isObject(value) || typeof value.type !== 'string') {
      damage('not a pi session entry (no "type")');
      return;
    }
    this.session.seen(sessionTime(value.timestamp));
    if (value.type === 'session') {
      this.session.setSession(str(value.id));
      return;
    }
    const message = isObject(value.message) ? value.message : null;
    this.session.rewindTo(str(value.parentId));
    this.session.markStart(str(value.id));
    if (value.type === 'compaction') {
      this.session.compact(summaryTurn(COMPACTION_SUMMARY, value.summary), str(value.firstKeptEntryId));
      this.session.mark(str(value.id));
      return;
    }
    if (value.type === 'branch_summary') this.session.add(summaryTurn(BRANCH_SUMMARY, value.summary), 'branch_summary');
    if (value.type !== 'message' || message === null) {
      if (value.type !== 'branch_summary') this.session.noted(value.type);
      this.session.mark(str(value.id));
      return;
    }
    const role = str(message.role) ?? '';
    if (role === 'user' || role === 'custom') this.session.add({ role: 'user', content: contentOf(message.content) }, role);
    else if (role === 'branchSummary') this.session.add(summaryTurn(BRANCH_SUMMARY, message.summary), role);
    else if (role === 'compactionSummary') this.session.add(summaryTurn(COMPACTION_SUMMARY, message.summary), role);
    else if (role === 'toolResult') this.session.add({ role: 'tool', content: contentOf(message.content), tool_call_id: str(message.toolCallId) ?? '' }, 'tool_result');
    else if (role === 'assistant') this.assistant(message, lineNo, out);
    else this.session.noted(`${role || 'unknown'}_message`);
    this.session.mark(str(value.id));
  }

  private assistant(message: Json, lineNo: number, out: SourceBatch): void {
    const timestamp = sessionTime(message.timestamp);
    const model = str(message.model);
    const provider = str(message.provider);
    const stop = str(message.stopReason);
    if (stop === 'error' || stop === 'aborted') {
      this.session.failure({ exception: str(message.errorMessage) ?? stop, line: lineNo, model, provider, timestamp }, out);
      return;
    }
    const blocks = Array.isArray(message.content) ? message.content.filter(isObject) : [];
    const calls: ToolCall[] = blocks
      .filter((block) => block.type === 'toolCall')
      .map((block, i) => ({ id: str(block.id) ?? `call_${i}`, type: 'function', function: { name: str(block.name) ?? '', arguments: block.arguments ?? {} } }));
    const answer: Message = { role: 'assistant', content: blockText(blocks) };
    const reasoning = blocks.filter((b) => b.type === 'thinking').map((b) => str(b.thinking) ?? '').join('\n');
    if (reasoning !== '') answer.reasoning_content = reasoning;
    if (calls.length > 0) answer.tool_calls = calls;
    const usage = isObject(message.usage) ? message.usage : {};
    const cost = isObject(usage.cost) ? num(usage.cost.total) : null;
    this.session.answer(
      {
        message: answer,
        line: lineNo,
        model,
        provider,
        usage: sessionUsage({ input: count(usage.input), output: count(usage.output), cacheRead: count(usage.cacheRead), cacheWrite: count(usage.cacheWrite), inputIncludesCache: false }),
        cost,
        stopReason: stop,
        timestamp,
      },
      out,
    );
  }

  end(out: SourceBatch): void {
    out.runs!.push(this.session.run());
  }
}

export async function* readPiFile(file: TraceFile): AsyncGenerator<SourceBatch> {
  yield* readSessionLines(file, new PiReader(file));
}
