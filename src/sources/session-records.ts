/**
 * Coding-agent sessions (Claude Code, Codex CLI, pi, the Hub's Session Traces Format) as runs of
 * records: a session file is one run, and each model call in it one record whose input is the
 * conversation the model saw up to that call (as far as the session kept it) and whose completion
 * is its answer. Each harness's reader (its folder) only says what each line is, through a
 * `SessionConversation`; the lines are read and parsed here (`readSessionLines`), strictly: a
 * line orjson rejects is a damaged line and the rest of the file is still read.
 *
 * A session holds one conversation at a time, but its entries may form a tree (Claude Code's
 * `parentUuid`, pi's `parentId`): a user turn whose parent is an earlier entry than the last
 * one (a rewind, an edited prompt, a branch) goes back to the conversation as it stood after
 * that entry, so a record never sees turns of another branch.
 */
import type { DamagedLine, Message, SourceKind, Status, TraceRecord, Usage } from '../record.js';
import { addCount } from '../own.js';
import type { TraceFile } from './trace-file.js';
import { isObject, type Json } from './json-values.js';
import { readLineBatches } from './lines.js';
import { parsedLine } from './damage.js';
import { derivedUuid, RebuiltRecord } from './rebuilt-record.js';
import type { SourceBatch } from './source.js';
import type { SourceRun } from './source-run.js';

/** One model call's answer, as a harness reader gives it. */
export interface SessionAnswer {
  /** The assistant message (content, reasoning_content, tool_calls). */
  message: Message;
  /** 1-based line of the file the answer starts on: the record's `ref.line`. */
  line: number;
  /** The harness's id of the call or its answer (a response id, an entry uuid), else one is derived. */
  callId?: string | null;
  model?: string | null;
  provider?: string | null;
  usage?: Usage | null;
  cost?: number | null;
  stopReason?: string | null;
  /** Epoch seconds. */
  timestamp?: number | null;
}

/** A failed model call the session kept (an API error the harness wrote down). */
export interface SessionFailure {
  exception: string;
  line: number;
  callId?: string | null;
  model?: string | null;
  provider?: string | null;
  timestamp?: number | null;
}

/** Token counts as the harnesses name them; `inputIncludesCache` false: Anthropic-style, cache reads and writes counted apart. */
export function sessionUsage(counts: {
  input: number | null;
  output: number | null;
  cacheRead?: number | null;
  cacheWrite?: number | null;
  reasoning?: number | null;
  inputIncludesCache: boolean;
}): Usage | null {
  if (counts.input === null && counts.output === null) return null;
  const cacheRead = counts.cacheRead ?? 0;
  const cacheWrite = counts.cacheWrite ?? 0;
  const prompt = (counts.input ?? 0) + (counts.inputIncludesCache ? 0 : cacheRead + cacheWrite);
  const completion = counts.output ?? 0;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    cached_tokens: cacheRead,
    cache_creation_tokens: cacheWrite,
    reasoning_tokens: counts.reasoning ?? 0,
  };
}

/** The conversation of one session file, turned into records call by call. */
export class SessionConversation {
  private conversation: Message[] = [];
  private system: Message | null = null;
  private tools: unknown[] | null = null;
  /** Conversation length after each entry id (for rewinds). */
  private readonly lengthAfter = new Map<string, number>();
  /** Conversation length before each entry id (for compactions). */
  private readonly startOf = new Map<string, number>();
  private readonly lines: number[] = [];
  private readonly statuses: Status[] = [];
  private readonly stepKinds: Record<string, number> = {};
  private sessionId: string | null = null;
  private name: string | null = null;
  private startedAt: number | null = null;
  private finishedAt: number | null = null;
  private calls = 0;
  /** The harness's version, when its lines carry one (Claude Code and Codex do). */
  version: string | null = null;

  constructor(
    private readonly file: TraceFile,
    private readonly source: SourceKind,
    /** The records' program: the harness (`claude-code`, `codex`, `pi`), or an STS file's `harness`. */
    public program: string,
  ) {}

  setSession(id: string | null, name?: string | null): void {
    if (id !== null && id !== '') this.sessionId ??= id;
    if (name !== undefined && name !== null) this.name ??= name;
  }

  /** The system prompt the session kept (Codex's base instructions, an STS system message). */
  setSystem(content: unknown): void {
    this.system = { role: 'system', content };
  }

  /** The tool definitions the session kept, as OpenAI function tools. */
  setTools(tools: unknown[] | null): void {
    this.tools = tools;
  }

  /** Counts a line of a kind read but kept as no message (Claude Code's attachments, pi's model changes). */
  noted(kind: string): void {
    addCount(this.stepKinds, kind);
  }

  seen(timestamp: number | null): void {
    if (timestamp === null) return;
    if (this.startedAt === null || timestamp < this.startedAt) this.startedAt = timestamp;
    if (this.finishedAt === null || timestamp > this.finishedAt) this.finishedAt = timestamp;
  }

  /** Goes back to the conversation as it stood after entry `parentId`, when that is an earlier point. */
  rewindTo(parentId: string | null | undefined): void {
    if (parentId === null || parentId === undefined) return;
    const length = this.lengthAfter.get(parentId);
    if (length !== undefined && length < this.conversation.length) this.conversation = this.conversation.slice(0, length);
  }

  /** Marks the conversation's length after entry `id` (a later rewind to it comes back here). */
  mark(id: string | null | undefined): void {
    if (id !== null && id !== undefined && id !== '') this.lengthAfter.set(id, this.conversation.length);
  }

  /** Marks where entry `id` starts in the conversation (a compaction keeps the entries from one on). */
  markStart(id: string | null | undefined): void {
    if (id !== null && id !== undefined && id !== '') this.startOf.set(id, this.conversation.length);
  }

  /**
   * A compaction: from here on the model sees `summary` (null: the turns that follow carry it)
   * in place of the conversation before entry `keptFrom` (everything, when it is unknown).
   * Earlier entries cannot be gone back to.
   */
  compact(summary: Message | null, keptFrom: string | null): void {
    const start = keptFrom === null ? undefined : this.startOf.get(keptFrom);
    this.conversation = [...(summary === null ? [] : [summary]), ...(start === undefined ? [] : this.conversation.slice(start))];
    this.lengthAfter.clear();
    this.startOf.clear();
    addCount(this.stepKinds, 'compaction');
  }

  /** A message sent to the model that is not an answer: a user turn, a tool result, an instruction. */
  add(message: Message, kind = message.role): void {
    addCount(this.stepKinds, kind);
    this.conversation.push(message);
  }

  /** A model call's answer: a record of the conversation so far, then part of it. */
  answer(answer: SessionAnswer, out: SourceBatch): void {
    this.seen(answer.timestamp ?? null);
    const record = this.record('ok', answer.message, null, answer);
    out.records.push(record);
    this.conversation.push(answer.message);
  }

  /** A failed call: a record with the exception; the conversation goes on without it. */
  failure(failure: SessionFailure, out: SourceBatch): void {
    this.seen(failure.timestamp ?? null);
    out.records.push(this.record('exception', null, failure.exception, failure));
  }

  private record(status: Status, completion: Message | null, exception: string | null, call: SessionAnswer | SessionFailure): TraceRecord {
    const index = this.calls++;
    addCount(this.stepKinds, status === 'ok' ? 'model_call' : 'failed_call');
    const inputs = this.system !== null ? [this.system, ...this.conversation] : this.conversation.slice();
    const answer = call as SessionAnswer;
    const record = new RebuiltRecord({
      source: this.source,
      ref: { file: this.file.display, line: call.line, offset: 0 },
      callId: call.callId ?? derivedUuid(this.source, this.sessionId ?? this.file.display, String(index)),
      parentCallId: null,
      program: this.program,
      module: call.model ?? '',
      timestamp: call.timestamp ?? null,
      duration: null,
      usage: answer.usage ?? null,
      cost: answer.cost ?? null,
      status,
      model: call.model ?? null,
      provider: call.provider ?? null,
      inputs,
      completion,
      exception,
      partial: false,
      stopReason: answer.stopReason ?? null,
      offeredTools: this.tools,
      version: this.version,
    });
    this.lines.push(call.line);
    this.statuses.push(status);
    return record;
  }

  run(): SourceRun {
    const status: Status = this.statuses.includes('exception') ? 'exception' : 'ok';
    return {
      id: this.sessionId ?? this.file.display,
      source: this.source,
      program: this.name !== null ? `${this.program}: ${this.name}` : this.program,
      recorderStatus: null,
      status,
      startedAt: this.startedAt,
      finishedAt: this.finishedAt,
      lines: this.lines.slice(),
      stepKinds: { ...this.stepKinds },
      reportedTokens: null,
      reportedCost: null,
      overhead: null,
    };
  }
}

/** What a harness reader does with each parsed line of a session file. */
export interface SessionLineReader {
  /** One line's value (any JSON); `damage` reports it as a damaged line, with why. */
  line(value: unknown, lineNo: number, out: SourceBatch, damage: (reason: string) => void): void;
  /** After the last line: answers held back, then the run. */
  end(out: SourceBatch): void;
}

/** Epoch seconds of an ISO time or epoch milliseconds, or null. */
export function sessionTime(value: unknown): number | null {
  if (typeof value === 'string') {
    const ms = Date.parse(value);
    return Number.isNaN(ms) ? null : ms / 1000;
  }
  const n = typeof value === 'number' ? value : value instanceof String ? Number(value) : NaN;
  return Number.isFinite(n) ? n / 1000 : null;
}

/** Reads a session file line by line, handing each parsed line to `reader`. */
export async function* readSessionLines(file: TraceFile, reader: SessionLineReader): AsyncGenerator<SourceBatch> {
  let pending: SourceBatch | null = null;
  for await (const lines of readLineBatches(file.path, { stamp: file.stamp })) {
    if (pending !== null) yield pending;
    const out: SourceBatch = { records: [], damaged: [], runs: [], bytes: 0 };
    for (const line of lines) {
      out.bytes! += line.length + 1;
      const damaged = (reason: string): void => {
        out.damaged.push({ file: file.display, line: line.number, offset: line.offset, reason } satisfies DamagedLine);
      };
      const parsed = parsedLine(line);
      if ('damage' in parsed) damaged(parsed.damage);
      else reader.line(parsed.value, line.number, out, damaged);
    }
    pending = out;
  }
  const last: SourceBatch = pending ?? { records: [], damaged: [], runs: [], bytes: 0 };
  reader.end(last);
  yield last;
}

/** Text of content blocks (`{type: 'text', text}`), joined; a string as it is. */
export function blockText(content: unknown, textTypes: readonly string[] = ['text']): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter(isObject)
    .filter((block: Json) => textTypes.includes(String(block.type)) && typeof block.text === 'string')
    .map((block) => block.text as string)
    .join('\n');
}

/**
 * Message content from content blocks: a string when they are all text (one block: its text,
 * several: joined by a line break, as the harnesses show them), else OpenAI-style parts (text,
 * and images as data URLs).
 */
export function contentOf(content: unknown, textTypes: readonly string[] = ['text', 'input_text', 'output_text']): unknown {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return content ?? '';
  const blocks = content.filter(isObject);
  const images = blocks.filter((block) => block.type === 'image' || block.type === 'input_image');
  if (images.length === 0) return blockText(blocks, textTypes);
  return blocks.flatMap((block): Json[] => {
    if (textTypes.includes(String(block.type)) && typeof block.text === 'string') return [{ type: 'text', text: block.text }];
    const url = imageUrl(block);
    return url === null ? [] : [{ type: 'image_url', image_url: { url } }];
  });
}

function imageUrl(block: Json): string | null {
  if (typeof block.image_url === 'string') return block.image_url;
  const source = isObject(block.source) ? block.source : block;
  const data = typeof source.data === 'string' ? source.data : null;
  const media = typeof source.media_type === 'string' ? source.media_type : typeof source.mimeType === 'string' ? source.mimeType : null;
  if (data !== null && media !== null) return `data:${media};base64,${data}`;
  return typeof source.url === 'string' ? source.url : null;
}
