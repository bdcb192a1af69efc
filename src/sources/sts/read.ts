/**
 * The Hugging Face Hub's Session Traces Format (STS, docs/hub/session-traces-format.md): one
 * session per `.jsonl` file, a header `{"type":"session","harness","id","name"?}` then
 * `{"type":"message","message":{role, content, reasoningContent?, toolCalls?, toolCallId?,
 * timestamp? (epoch ms), model?}}` lines. Every assistant message is a record whose input is
 * the messages before it; its program is the header's `harness`. Lines of another `type` are
 * counted; a header's `tools` (OpenAI function tools, as `export --format sts` writes them) are
 * the records' offered tools. The format keeps no usage, no stop reason and no failed call.
 */
import type { Message, ToolCall } from '../../record.js';
import type { TraceFile } from '../trace-file.js';
import { isObject, str } from '../json-values.js';
import { contentOf, readSessionLines, sessionTime, SessionConversation, type SessionLineReader } from '../session-records.js';
import type { SourceBatch } from '../source.js';

const KIND = 'sts';
const ROLES = new Set(['user', 'assistant', 'system', 'tool']);

class StsReader implements SessionLineReader {
  private readonly session: SessionConversation;

  constructor(file: TraceFile) {
    this.session = new SessionConversation(file, KIND, KIND);
  }

  line(value: unknown, lineNo: number, out: SourceBatch, damage: (reason: string) => void): void {
    if (!isObject(value) || typeof value.type !== 'string') {
      damage('not a Session Traces Format line (no "type")');
      return;
    }
    if (value.type === 'session') {
      if (typeof value.harness === 'string' && value.harness !== '') this.session.program = value.harness;
      this.session.setSession(str(value.id), str(value.name));
      // Extra metadata the format allows: `export --format sts` keeps the tool definitions here.
      if (Array.isArray(value.tools) && value.tools.length > 0) this.session.setTools(value.tools.filter(isObject));
      return;
    }
    if (value.type !== 'message') {
      this.session.noted(value.type);
      return;
    }
    const message = isObject(value.message) ? value.message : null;
    const role = message === null ? null : str(message.role);
    if (message === null || role === null || !ROLES.has(role)) {
      damage(`a message line needs "message" with "role" one of ${[...ROLES].join(', ')}`);
      return;
    }
    const timestamp = sessionTime(message.timestamp);
    this.session.seen(timestamp);
    const written: Message = { role, content: contentOf(message.content) };
    if (typeof message.reasoningContent === 'string' && message.reasoningContent !== '') written.reasoning_content = message.reasoningContent;
    if (role === 'tool') written.tool_call_id = str(message.toolCallId) ?? '';
    if (Array.isArray(message.toolCalls) && message.toolCalls.length > 0) {
      written.tool_calls = message.toolCalls.filter(isObject).map(
        (call, i): ToolCall => {
          const fn = isObject(call.function) ? call.function : {};
          return { id: str(call.id) ?? `call_${i}`, type: 'function', function: { name: str(fn.name) ?? '', arguments: fn.arguments ?? '' } };
        },
      );
    }
    if (role === 'assistant') this.session.answer({ message: written, line: lineNo, model: str(message.model), timestamp }, out);
    else this.session.add(written);
  }

  end(out: SourceBatch): void {
    out.runs!.push(this.session.run());
  }
}

export async function* readStsFile(file: TraceFile): AsyncGenerator<SourceBatch> {
  yield* readSessionLines(file, new StsReader(file));
}
