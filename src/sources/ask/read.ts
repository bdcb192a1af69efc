/**
 * Ask (Ruby) recordings: `<dir>/<test>/recording.yml` (pretty-printed JSON despite the
 * name) or `recording.json`, `{"test", "recorded_at", "interactions": [...]}`.
 *
 * Each provider interaction becomes a record. The recorded `messages` are a lossy history
 * (assistant tool calls dropped, tool output as Ruby `inspect` text, empty user turns
 * after tool turns), so the conversation is rebuilt from the results instead:
 *
 * - the completion from the result: a stream's chunks concatenated (content, thinking as
 *   reasoning, tool-call deltas joined per index), or a message result's content, tool
 *   calls and metadata (never its `raw` provider body);
 * - when a call's recorded history begins with the previous call's, its input is the
 *   previous call's rebuilt conversation (completion included) followed by the tool
 *   interactions recorded in between, as tool messages answering the completion's tool
 *   calls (`result.output`, real JSON, as content; ids generated where the provider gave
 *   none), then any further recorded turns; empty user turns are dropped;
 * - otherwise the history starts a new conversation, taken as recorded; assistant or tool
 *   turns that cannot be rebuilt from a result make the record `partial`.
 *
 * `ref.line` is the 1-based position of the interaction in the file.
 */
import { JsonStreamError, JsonTooLongError, streamJson } from '../json-stream.js';
import { canonicalValueText } from '../../canonical/canonical.js';
import { writeJson } from '../../canonical/json-value.js';
import { epochSecondsOf } from '../../time.js';
import type { DamagedLine, Message, Status, ToolCall, TraceRecord, Usage } from '../../record.js';
import type { TraceFile } from '../trace-file.js';
import { derivedUuid, RebuiltRecord } from '../rebuilt-record.js';
import type { SourceRun } from '../source-run.js';
import { count, isObject, num, str, type Json } from '../json-values.js';


export interface AskBatch {
  records: TraceRecord[];
  damaged: DamagedLine[];
  runs: SourceRun[];
}


/** `Ask::Tools::Bash` → `bash`, `Ask::Tools::WebSearch` → `web_search`. */
export function toolNameOfClass(rubyClass: string): string {
  const last = rubyClass.split('::').pop() ?? rubyClass;
  return last
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase();
}

/** `bash` → `Ask::Tools::Bash`: the inverse, for writing recordings. */
export function classOfToolName(name: string): string {
  const camel = name
    .split(/[_-]+/)
    .filter((p) => p !== '')
    .map((p) => p[0].toUpperCase() + p.slice(1))
    .join('');
  return `Ask::Tools::${camel || 'Tool'}`;
}

function isEmptyUserTurn(message: Json): boolean {
  if (message.role !== 'user') return false;
  const content = message.content;
  return content === null || content === undefined || (typeof content === 'string' && content.trim() === '');
}

/** A recorded history message as a record message: `{role, content}` as recorded. */
function recordedMessage(message: Json): Message {
  const out: Message = { role: typeof message.role === 'string' ? message.role : 'user' };
  out.content = message.content ?? '';
  return out;
}

function sameRecorded(a: Json, b: Json): boolean {
  return a.role === b.role && canonicalValueText(a.content ?? null) === canonicalValueText(b.content ?? null);
}

interface Completion {
  message: Message | null;
  status: Status;
  exception: string | null;
  usage: Usage | null;
  model: string | null;
  stopReason: string | null;
}

function joinReasoning(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) {
    const texts = value
      .map((block) => (typeof block === 'string' ? block : isObject(block) ? (str(block.thinking) ?? str(block.text)) : null))
      .filter((t): t is string => t !== null);
    return texts.length > 0 ? texts.join('\n') : null;
  }
  return null;
}

function toolCallOf(call: Json): ToolCall {
  const fn = isObject(call.function) ? call.function : call;
  return {
    ...(typeof call.id === 'string' && call.id !== '' ? { id: call.id } : {}),
    type: str(call.type) ?? 'function',
    function: { name: str(fn.name) ?? '', arguments: fn.arguments ?? '' },
  };
}

/** A streamed result: text and reasoning concatenated, tool-call deltas joined per index. */
function streamCompletion(result: Json): Message {
  const chunks = Array.isArray(result.chunks) ? result.chunks.filter(isObject) : [];
  let content = '';
  let reasoning = '';
  const calls = new Map<number, { id: string | null; name: string | null; args: string; type: string | null }>();
  let lastIndex = -1;
  for (const chunk of chunks) {
    if (typeof chunk.content === 'string') content += chunk.content;
    if (typeof chunk.thinking === 'string') reasoning += chunk.thinking;
    if (!Array.isArray(chunk.tool_calls)) continue;
    for (const delta of chunk.tool_calls.filter(isObject)) {
      let index = num(delta.index);
      // Without an index, a delta with an id starts a call and one without continues the last.
      if (index === null) index = typeof delta.id === 'string' || lastIndex === -1 ? calls.size : lastIndex;
      lastIndex = index;
      let call = calls.get(index);
      if (call === undefined) calls.set(index, (call = { id: null, name: null, args: '', type: null }));
      const fn = isObject(delta.function) ? delta.function : delta;
      if (call.id === null && typeof delta.id === 'string' && delta.id !== '') call.id = delta.id;
      if (call.name === null && typeof fn.name === 'string' && fn.name !== '') call.name = fn.name;
      if (call.type === null && typeof delta.type === 'string') call.type = delta.type;
      if (typeof fn.arguments === 'string') call.args += fn.arguments;
    }
  }
  if (chunks.length === 0 && typeof result.accumulated_text === 'string') content = result.accumulated_text;
  const message: Message = { role: 'assistant', content };
  if (reasoning !== '') message.reasoning_content = reasoning;
  if (calls.size > 0) {
    message.tool_calls = [...calls]
      .sort(([a], [b]) => a - b)
      .map(([, c]) => ({
        ...(c.id !== null ? { id: c.id } : {}),
        type: c.type ?? 'function',
        function: { name: c.name ?? '', arguments: c.args },
      }));
  }
  return message;
}

function messageUsage(metadata: Json): Usage | null {
  const input = count(metadata.input_tokens);
  const output = count(metadata.output_tokens);
  if (input === null && output === null) return null;
  const cacheRead = count(metadata.cache_read_input_tokens);
  const cacheCreation = count(metadata.cache_creation_input_tokens);
  // Anthropic counts cache reads and writes apart from input_tokens; OpenAI-style counts include them.
  const anthropic = cacheRead !== null || cacheCreation !== null;
  const prompt = (input ?? 0) + (anthropic ? (cacheRead ?? 0) + (cacheCreation ?? 0) : 0);
  const completion = output ?? 0;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    cached_tokens: anthropic ? (cacheRead ?? 0) : (count(metadata.cached_tokens) ?? 0),
    cache_creation_tokens: cacheCreation ?? 0,
    reasoning_tokens: count(metadata.reasoning_tokens) ?? 0,
  };
}

function messageCompletion(result: Json): { message: Message; usage: Usage | null; model: string | null } {
  const metadata = isObject(result.metadata) ? result.metadata : {};
  const message: Message = { role: 'assistant', content: typeof result.content === 'string' ? result.content : (result.content ?? '') };
  const reasoning = joinReasoning(result.thinking ?? metadata.thinking);
  if (reasoning !== null && reasoning !== '') message.reasoning_content = reasoning;
  if (Array.isArray(result.tool_calls) && result.tool_calls.length > 0) message.tool_calls = result.tool_calls.filter(isObject).map(toolCallOf);
  return { message, usage: messageUsage(metadata), model: str(metadata.model) };
}

/**
 * Why the provider stopped: a stream's last `finish_reason`, else the message metadata's
 * `finish_reason` (OpenAI-style) or `stop_reason` (Anthropic), as recorded.
 */
function stopReasonOf(result: Json): string | null {
  if (result.type === 'stream') {
    const chunks = Array.isArray(result.chunks) ? result.chunks.filter(isObject) : [];
    let reason: string | null = null;
    for (const chunk of chunks) reason = str(chunk.finish_reason) ?? reason;
    return reason;
  }
  const metadata = isObject(result.metadata) ? result.metadata : {};
  return str(metadata.finish_reason) ?? str(metadata.stop_reason) ?? str(result.finish_reason) ?? str(result.stop_reason) ?? rawStopReason(metadata.raw);
}

/** The reason in the provider's own body (read, never exported): Anthropic, OpenAI chat, Gemini. */
function rawStopReason(raw: unknown): string | null {
  if (!isObject(raw)) return null;
  const first = (list: unknown): Json | null => (Array.isArray(list) && isObject(list[0]) ? list[0] : null);
  return str(raw.stop_reason) ?? str(first(raw.choices)?.finish_reason) ?? str(first(raw.candidates)?.finishReason);
}

function completionOf(result: unknown): Completion {
  const none = { message: null, usage: null, model: null, stopReason: null };
  if (!isObject(result)) return { ...none, status: 'no_output', exception: null };
  if (result.type === 'stream') return { ...none, message: streamCompletion(result), status: 'ok', exception: null, stopReason: stopReasonOf(result) };
  if (result.type === 'message' || (result.type === undefined && ('content' in result || 'tool_calls' in result))) {
    return { ...messageCompletion(result), status: 'ok', exception: null, stopReason: stopReasonOf(result) };
  }
  const error = result.error ?? (result.type === 'error' ? (result.message ?? 'error') : undefined);
  if (error !== undefined && error !== null) {
    return { ...none, status: 'exception', exception: typeof error === 'string' ? error : writeJson(error) };
  }
  return { ...none, status: 'no_output', exception: null };
}

/** A tool interaction's result as tool message content: its JSON output, else its error. */
function toolContent(interaction: Json): unknown {
  const result = isObject(interaction.result) ? interaction.result : {};
  if (result.output !== undefined && result.output !== null) return result.output;
  if (result.error !== undefined && result.error !== null) return { error: result.error };
  return '';
}

function isToolInteraction(item: Json): boolean {
  return item.type === 'tool' || (item.type === undefined && !('messages' in item) && 'args' in item);
}

/** Rebuilds the conversations of one recording, interaction by interaction. */
export class AskRebuilder {
  private test: string | null = null;
  private recordedAt: string | null = null;
  private sawRecordedAt = false;
  private drained = false;
  private timestamp: number | null = null;
  private previousRecorded: Json[] | null = null;
  private previousConversation: Message[] = [];
  private previousCompletion: Message | null = null;
  private pendingTools: Json[] = [];
  private providerCalls = 0;
  private toolCalls = 0;
  private readonly lines: number[] = [];
  private readonly statuses: Status[] = [];
  /** Interactions seen before the test name (when `test` comes after `interactions`). */
  private readonly waiting: { index: number; value: unknown }[] = [];

  constructor(private readonly file: TraceFile) {}

  setTest(value: unknown): void {
    this.test = typeof value === 'string' ? value : String(value ?? '');
  }

  setRecordedAt(value: unknown): void {
    this.sawRecordedAt = true;
    this.recordedAt = str(value);
    this.timestamp = this.recordedAt === null ? null : epochSecondsOf(this.recordedAt);
  }

  /**
   * Takes interaction `index` (0-based). Ask writes `test` and `recorded_at` first; in a
   * file where they come later, interactions wait for them (ids and times depend on them).
   */
  add(index: number, value: unknown, out: AskBatch): void {
    if (!this.drained && (this.test === null || !this.sawRecordedAt)) {
      this.waiting.push({ index, value });
      return;
    }
    const line = index + 1;
    const ref = { file: this.file.display, line, offset: 0 };
    if (!isObject(value)) {
      out.damaged.push({ ...ref, reason: 'interaction is not a JSON object' });
      return;
    }
    if (isToolInteraction(value)) {
      this.pendingTools.push(value);
      this.toolCalls++;
      return;
    }
    if (value.type !== undefined && value.type !== 'provider') {
      out.damaged.push({ ...ref, reason: `unknown interaction type ${JSON.stringify(value.type)}` });
      return;
    }
    out.records.push(this.provider(value, index, ref));
  }

  /** Hands out waiting interactions once the header is known, or at the end of the document (`final`). */
  drain(out: AskBatch, final = false): void {
    if (final) {
      this.drained = true;
      this.test ??= '';
    }
    if (this.test === null || !(this.sawRecordedAt || this.drained)) return;
    for (const { index, value } of this.waiting.splice(0)) this.add(index, value, out);
  }

  private provider(item: Json, index: number, ref: { file: string; line: number; offset: number }): TraceRecord {
    const recorded = (Array.isArray(item.messages) ? item.messages.filter(isObject) : []).filter((m) => !isEmptyUserTurn(m));
    let partial = false;
    let inputs: Message[];
    const previous = this.previousRecorded;
    if (previous !== null && recorded.length >= previous.length && previous.every((m, i) => sameRecorded(m, recorded[i]))) {
      ({ inputs, partial } = this.continueConversation(recorded.slice(previous.length)));
    } else {
      inputs = recorded.map(recordedMessage);
      // Turns other calls' results would rebuild are only known here in their lossy form.
      partial = recorded.some((m) => m.role === 'assistant' || m.role === 'tool');
    }
    const completion = completionOf(item.result);
    const model = str(item.model) ?? completion.model;
    const callIndex = this.providerCalls++;
    if (completion.message?.tool_calls !== undefined) {
      completion.message.tool_calls.forEach((call, j) => {
        call.id ??= `call_${callIndex}_${j}`;
      });
    }
    const record = new RebuiltRecord({
      source: 'ask',
      ref,
      callId: derivedUuid('ask', this.test!, this.recordedAt ?? '', String(index)),
      parentCallId: null,
      program: this.test!,
      module: model ?? '',
      timestamp: this.timestamp,
      duration: null,
      usage: completion.usage,
      cost: null,
      status: completion.status,
      model,
      provider: null,
      inputs,
      completion: completion.message,
      exception: completion.exception,
      partial,
      stopReason: completion.stopReason,
    });
    this.previousRecorded = recorded;
    this.previousCompletion = completion.message;
    this.previousConversation = completion.message !== null ? [...inputs, completion.message] : inputs;
    this.pendingTools = [];
    this.lines.push(ref.line);
    this.statuses.push(completion.status);
    return record;
  }

  /**
   * The input of a call whose history continues the previous call's: the previous
   * conversation, then the recorded turns after it, the first assistant slot standing for
   * the previous completion and the tool slots after it for the tool interactions recorded
   * in between (paired with the completion's tool calls by name, else in order).
   */
  private continueConversation(rest: Json[]): { inputs: Message[]; partial: boolean } {
    const completion = this.previousCompletion;
    const inputs = completion !== null ? this.previousConversation.slice(0, -1) : this.previousConversation.slice();
    let placed = false;
    let partial = false;
    let unanswered: ToolCall[] = [];
    let used = 0;
    for (const message of rest) {
      if (message.role === 'assistant' && completion !== null && !placed) {
        inputs.push(completion);
        placed = true;
        unanswered = [...(completion.tool_calls ?? [])];
        continue;
      }
      if (message.role !== 'tool' || !placed) {
        if (message.role === 'assistant' || message.role === 'tool') partial = true;
        inputs.push(recordedMessage(message));
        continue;
      }
      // Older files recorded no tool interactions: the history's text is all there is.
      const interaction = used < this.pendingTools.length ? this.pendingTools[used] : null;
      used++;
      const name = interaction !== null ? toolNameOfClass(String(interaction.name ?? '')) : null;
      const byName = name === null ? -1 : unanswered.findIndex((c) => c.function.name === name);
      const call = unanswered.length > 0 ? unanswered.splice(byName >= 0 ? byName : 0, 1)[0] : null;
      inputs.push({
        role: 'tool',
        content: interaction !== null ? toolContent(interaction) : (message.content ?? ''),
        tool_call_id: call?.id ?? `call_${this.providerCalls - 1}_result_${used - 1}`,
      });
    }
    return { inputs, partial };
  }

  run(): SourceRun {
    const status: Status = this.statuses.includes('exception') ? 'exception' : this.statuses.includes('no_output') ? 'no_output' : 'ok';
    return {
      id: this.test ?? '',
      source: 'ask',
      program: this.test ?? '',
      recorderStatus: null,
      status,
      startedAt: this.timestamp,
      finishedAt: null,
      lines: this.lines.slice(),
      stepKinds: { provider: this.providerCalls, tool: this.toolCalls },
      reportedTokens: null,
      reportedCost: null,
      overhead: null,
    };
  }
}

/** Records of one Ask recording, in batches. */
export async function* readAskFile(file: TraceFile): AsyncGenerator<AskBatch & { bytes: number }> {
  const rebuilder = new AskRebuilder(file);
  let sawInteractions = false;
  let last = 0;
  try {
    for await (const events of streamJson(file.path, { streamed: new Set(['interactions']) })) {
      const out: AskBatch = { records: [], damaged: [], runs: [] };
      for (const event of events) {
        if (event.kind === 'member') {
          if (event.key === 'test') rebuilder.setTest(event.value);
          else if (event.key === 'recorded_at') rebuilder.setRecordedAt(event.value);
          else if (event.key === 'interactions') sawInteractions = true; // not an array: nothing to read
          rebuilder.drain(out);
        } else if (event.kind === 'element' && event.key === 'interactions') {
          sawInteractions = true;
          last = event.index + 1;
          rebuilder.add(event.index, event.value, out);
        } else if (event.kind === 'end') {
          rebuilder.drain(out, true);
          if (!sawInteractions) out.damaged.push({ file: file.display, line: 0, offset: 0, reason: 'no interactions list: not an Ask recording' });
          out.runs.push(rebuilder.run());
        } else if (event.kind === 'document') {
          out.damaged.push({ file: file.display, line: 0, offset: 0, reason: 'not a JSON object: not an Ask recording' });
        }
      }
      yield { ...out, bytes: 0 };
    }
  } catch (error) {
    if (!(error instanceof JsonStreamError)) throw error;
    const out: AskBatch = { records: [], damaged: [], runs: [] };
    rebuilder.drain(out, true);
    out.damaged.push({ file: file.display, line: last + 1, offset: 0, reason: `${error instanceof JsonTooLongError ? 'unreadable' : 'broken JSON'} after interaction ${last}: ${error.message}` });
    out.runs.push(rebuilder.run());
    yield { ...out, bytes: 0 };
  }
}
