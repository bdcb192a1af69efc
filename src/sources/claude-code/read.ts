/**
 * Claude Code sessions: `~/.claude/projects/<project folder, / as ->/<session id>.jsonl`, one
 * JSON object per line, each with a `type`:
 *
 * - `user`: a turn sent to the model, `message.content` a string or Anthropic content blocks;
 *   `tool_result` blocks become tool messages (one per block, in the file's order, which is the
 *   order Claude Code sends them in), text and image blocks a user message;
 * - `assistant`: one content block of an answer per line, the lines of one answer sharing
 *   `message.id`: joined back into one assistant message (text, `thinking` as reasoning,
 *   `tool_use` as tool calls), with the answer's `model`, `usage` and `stop_reason`. Claude
 *   Code's own error turns (`isApiErrorMessage`, model `<synthetic>`) are failed calls;
 * - lines of a subagent (`isSidechain`) in its parent's session belong to another conversation:
 *   not read as turns there; a subagent's own file (every turn `isSidechain`) is read as its run;
 * - a `system` line with subtype `compact_boundary` (after /compact): later calls see only the
 *   turns after it, the first of which holds the summary;
 * - every other type (`attachment`, `system`, `summary`, `queue-operation`, `last-prompt`,
 *   `file-history-snapshot`, `mode`, …) is counted and not read as a message.
 *
 * Each answer is a record whose input is the conversation up to it. What the file does not keep:
 * the system prompt, the tool definitions, the `<system-reminder>` texts Claude Code renders
 * from attachments into the user turn, calls retried after an error, and side calls (titles).
 */
import type { Message, ToolCall } from '../../record.js';
import type { TraceFile } from '../trace-file.js';
import { count, isObject, str, type Json } from '../json-values.js';
import { blockText, contentOf, readSessionLines, sessionTime, sessionUsage, SessionConversation, type SessionLineReader } from '../session-records.js';
import type { SourceBatch } from '../source.js';

const KIND = 'claude-code';

interface OpenAnswer {
  id: string;
  line: number;
  uuid: string | null;
  lastUuid: string | null;
  text: string[];
  reasoning: string[];
  calls: ToolCall[];
  entry: Json;
  message: Json;
}

class ClaudeCodeReader implements SessionLineReader {
  private readonly session: SessionConversation;
  private open: OpenAnswer | null = null;
  /** Whether the file is a subagent's own (`subagents/agent-*.jsonl`, every line `isSidechain`): set by its first turn. */
  private sidechainFile: boolean | null = null;

  constructor(file: TraceFile) {
    this.session = new SessionConversation(file, KIND, KIND);
  }

  line(value: unknown, lineNo: number, out: SourceBatch, damage: (reason: string) => void): void {
    if (!isObject(value) || typeof value.type !== 'string') {
      damage('not a Claude Code session entry (no "type")');
      return;
    }
    const entry = value;
    this.session.setSession(str(entry.sessionId));
    if (typeof entry.version === 'string') this.session.version = entry.version;
    this.session.seen(sessionTime(entry.timestamp));
    const message = isObject(entry.message) ? entry.message : null;
    if (entry.type === 'user' || entry.type === 'assistant') {
      this.sidechainFile ??= entry.isSidechain === true;
      if ((entry.isSidechain === true) !== this.sidechainFile) {
        this.session.noted('sidechain');
        return;
      }
    }
    if (entry.type === 'assistant' && message !== null) {
      this.assistant(entry, message, lineNo, out);
      return;
    }
    this.close(out);
    if (entry.type === 'user' && message !== null) this.user(entry, message);
    else if (entry.type === 'system' && entry.subtype === 'compact_boundary') {
      // After /compact the model sees the summary (the next user turn) and what follows only.
      this.session.compact(null, null);
      this.session.mark(str(entry.uuid));
    } else {
      this.session.noted(String(entry.type));
      this.session.mark(str(entry.uuid));
    }
  }

  private user(entry: Json, message: Json): void {
    const content = message.content;
    const blocks = Array.isArray(content) ? content.filter(isObject) : null;
    const results = blocks?.filter((block) => block.type === 'tool_result') ?? [];
    if (results.length === 0) this.session.rewindTo(str(entry.parentUuid));
    for (const result of results) {
      const text = typeof result.content === 'string' || Array.isArray(result.content) ? contentOf(result.content) : '';
      this.session.add({ role: 'tool', content: text, tool_call_id: str(result.tool_use_id) ?? '' }, 'tool_result');
    }
    const rest = blocks === null ? content : blocks.filter((block) => block.type !== 'tool_result');
    if (blocks === null || (rest as Json[]).length > 0) this.session.add({ role: 'user', content: contentOf(rest) }, entry.isMeta === true ? 'meta_user' : 'user');
    this.session.mark(str(entry.uuid));
  }

  private assistant(entry: Json, message: Json, lineNo: number, out: SourceBatch): void {
    const id = str(message.id) ?? str(entry.uuid) ?? String(lineNo);
    if (this.open !== null && this.open.id !== id) this.close(out);
    if (entry.isApiErrorMessage === true || message.model === '<synthetic>') {
      this.session.failure(
        { exception: blockText(message.content) || str(entry.error) || 'API error', line: lineNo, callId: str(entry.uuid), timestamp: sessionTime(entry.timestamp) },
        out,
      );
      return;
    }
    const open = (this.open ??= { id, line: lineNo, uuid: str(entry.uuid), lastUuid: null, text: [], reasoning: [], calls: [], entry, message });
    open.lastUuid = str(entry.uuid);
    // Usage and the stop reason grow as the answer streams: the last line's are the answer's.
    open.message = message;
    const blocks = Array.isArray(message.content) ? message.content.filter(isObject) : typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : [];
    for (const block of blocks) {
      if (block.type === 'text' && typeof block.text === 'string') open.text.push(block.text);
      else if (block.type === 'thinking' && typeof block.thinking === 'string') open.reasoning.push(block.thinking);
      else if (block.type === 'tool_use' || block.type === 'server_tool_use') {
        open.calls.push({ id: str(block.id) ?? `call_${open.calls.length}`, type: 'function', function: { name: str(block.name) ?? '', arguments: block.input ?? {} } });
      }
    }
  }

  /** Ends the answer being joined: its record, then its place in the conversation. */
  private close(out: SourceBatch): void {
    const open = this.open;
    if (open === null) return;
    this.open = null;
    const message: Message = { role: 'assistant', content: open.text.join('\n') };
    if (open.reasoning.length > 0) message.reasoning_content = open.reasoning.join('\n');
    if (open.calls.length > 0) message.tool_calls = open.calls;
    const usage = isObject(open.message.usage) ? open.message.usage : {};
    this.session.answer(
      {
        message,
        line: open.line,
        callId: open.uuid,
        model: str(open.message.model),
        provider: 'anthropic',
        usage: sessionUsage({
          input: count(usage.input_tokens),
          output: count(usage.output_tokens),
          cacheRead: count(usage.cache_read_input_tokens),
          cacheWrite: count(usage.cache_creation_input_tokens),
          inputIncludesCache: false,
        }),
        stopReason: str(open.message.stop_reason),
        timestamp: sessionTime(open.entry.timestamp),
      },
      out,
    );
    this.session.mark(open.lastUuid);
  }

  end(out: SourceBatch): void {
    this.close(out);
    out.runs!.push(this.session.run());
  }
}

export async function* readClaudeCodeFile(file: TraceFile): AsyncGenerator<SourceBatch> {
  yield* readSessionLines(file, new ClaudeCodeReader(file));
}
