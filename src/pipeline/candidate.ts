/**
 * The part of curation that looks at one record alone: its selection verdict, its key,
 * its trajectory digests and tool calls. It runs where records are read (the main thread
 * or a worker), and only this small summary travels to the stage that compares records.
 */
import { parseJson } from '../canonical/json-value.js';
import { forEachElement, TextTooLongError, unlessTooLong } from '../canonical/scan.js';
import type { Message, Status, TraceRecord } from '../record.js';
import { SynalinksRecord } from '../sources/synalinks-record.js';
import { trajectoryDigests, type TrajectoryDigests } from './collapse.js';
import { conversationKey, keyOf, mergesAcrossModules, moduleId, type KeyKind } from './keys.js';
import { canonicalValueText } from '../canonical/canonical.js';
import { ANSWER_FAULTS, type PairFacts } from './pairs.js';
import { conversationWords, signatureOf } from './minhash.js';
import { selectionVerdict, type Selection } from './selection.js';
import { qualityIsOff, qualityOf, type QualityResult, type QualitySettings, type QualityVerdict } from './quality/index.js';
import { TOOL_CALLS_KEY, toolCallFacts } from '../tool-calls.js';
import type { JobFunctions } from '../parallel/jobs.js';

export interface CandidateOptions {
  selection: Selection;
  key: KeyKind;
  collapse: boolean;
  /** Collect the assistant turns that call tools (export infers tool definitions from them). */
  toolCalls: boolean;
  /** Compute the near-duplicate signature (minhash.ts). */
  nearDuplicates: boolean;
  /**
   * Set (to an id of the run) when every selected ok record's tool calls are observed (no
   * later stage drops one first): observing a turn again changes nothing, so a turn already
   * handed over in this run can be left out.
   */
  toolCallsOnce?: string | null;
  /** The quality stages (quality/index.ts), or null when none runs. */
  quality?: QualitySettings | null;
  /**
   * Preference pairs (pairs.ts): an answer a quality stage names is kept for the pair finder
   * rather than dropped, and each selected record carries its answer's digest.
   */
  pairs?: boolean;
  /**
   * The export target's verdict on each record (a record it cannot represent, a secret with
   * --drop-on, too long, a template error), or null: run after the quality stages and before
   * any stage that compares records, so no record others give way to is one the target
   * refuses. It is a job of parallel/jobs.ts that makes the verdict from plain settings where
   * the records are read (a worker thread), so this layer imports no target.
   */
  targetVerdict?: TargetVerdictStage | null;
}

/** The target's verdict on one record: why it refuses it, or null. */
export type RecordVerdict = (record: TraceRecord) => Verdict | null;

/** Jobs (parallel/jobs.ts) whose function makes a `RecordVerdict` from its settings. */
type VerdictJobName = { [Name in keyof JobFunctions]: JobFunctions[Name] extends (settings: never) => Promise<RecordVerdict> ? Name : never }[keyof JobFunctions];

export interface TargetVerdictStage {
  job: VerdictJobName;
  /** The job's payload: what the target's verdict is made with. */
  settings: unknown;
  /** An id of the run: a thread makes the verdict once per run, not once per share. */
  run: string;
}

/** Why a record is dropped before the comparing stages: selection, a quality stage, or text too long to read. */
export interface Verdict {
  reason: string;
  detail: string;
  /** The evaluation item a `contaminated` record shares an n-gram with. */
  match?: QualityVerdict['match'];
  /** The option that avoids the drop, where there is one (a template that renders the record). */
  fix?: string;
  /** Set on the target's verdict: the export counts these drops with the target's own. */
  byTarget?: true;
  /**
   * On the target's verdict about a record whose prompt holds earlier assistant turns: the
   * digests its run's earlier steps would have (4 words each), to learn whether one was read.
   */
  earlierSteps?: number[];
}

export interface Candidate {
  callId: string;
  /** The call_id's uuid bits, when the summary has them at hand (saves parsing `callId`). */
  readonly callIdWords?: Uint32Array | null;
  /** The file is `files[fileIndex]`: its name is not repeated in every record's summary. */
  line: number;
  /** Byte offset of the line in its file (Synalinks), for a second pass that reads it alone. */
  offset: number;
  fileIndex: number;
  status: Status;
  /** Epoch seconds; 0 when unknown. */
  timestamp: number;
  /** With a key that ignores program and module: a 32-bit id of them (never 0), to count merges across modules; else 0. */
  moduleId: number;
  /** "program/module", when `moduleId` is set. */
  moduleName: string;
  /** Why selection or a quality stage drops the record, or null. */
  verdict: Verdict | null;
  /** What the flagging quality stages (refusal, identity) found in a kept record, or null. */
  flags: QualityVerdict[] | null;
  /** True when the truncated stage ran on it and nothing it holds could tell (no stop reason, no token limit). */
  truncationUnchecked?: boolean;
  /** Dedupe key, 4 words (absent when selection drops the record). */
  key: Uint32Array | null;
  trajectory: TrajectoryDigests | null;
  /** `toolCallFacts` of its tool-calling turns (those new to this thread, with `toolCallsOnce`), or null. */
  toolCalls: string[] | null;
  /** Near-duplicate signature (band hashes, then sketch), or null. */
  signature: Uint32Array | null;
  /** With `pairs`: the answer's digest and the quality stage that names it; else null. */
  pairFacts?: PairFacts | null;
}

export function candidateOf(record: TraceRecord, fileIndex: number, options: CandidateOptions, targetVerdict: RecordVerdict | null = null): Candidate {
  const candidate: Candidate = {
    callId: record.callId,
    line: record.ref.line,
    offset: record.ref.offset,
    fileIndex,
    status: record.status,
    timestamp: record.timestamp ?? 0,
    moduleId: 0,
    moduleName: '',
    verdict: null,
    flags: null,
    truncationUnchecked: false,
    key: null,
    trajectory: null,
    toolCalls: null,
    signature: null,
    pairFacts: null,
  };
  const tooLong = unlessTooLong(() => describe(record, candidate, options, targetVerdict));
  if (tooLong instanceof TextTooLongError) {
    // What a stage needs of its text cannot be had: the record is dropped, and says why.
    Object.assign(candidate, { verdict: { reason: 'text_too_long', detail: tooLong.message }, flags: null, key: null, trajectory: null, toolCalls: null, signature: null, pairFacts: null });
  }
  return candidate;
}

/** Fills in the verdict and, for a selected record, what the comparing stages need. */
function describe(record: TraceRecord, candidate: Candidate, options: CandidateOptions, targetVerdict: RecordVerdict | null): void {
  candidate.verdict = selectionVerdict(options.selection, record);
  if (candidate.verdict !== null) return;
  messageSpans.length = 0;
  // The digests walk the messages, and leave where the completion is for the quality stages
  // to parse it without a walk of their own. A record a quality stage drops needs none.
  const trajectory = candidate.status === 'ok' && options.collapse ? trajectoryAhead(record) : null;
  if (candidate.status === 'ok' && options.quality != null && !qualityIsOff(options.quality)) {
    const quality = qualityOf(record, options.quality);
    candidate.truncationUnchecked = quality.truncationUnchecked;
    const answerFault = options.pairs === true ? answerFaultOf(quality) : null;
    if (quality.drop !== null && answerFault === null) {
      candidate.verdict = quality.drop;
      return;
    }
    if (options.pairs === true) candidate.pairFacts = { answer: null, fault: answerFault };
    else candidate.flags = quality.flags;
  }
  const refusal = targetVerdict?.(record) ?? null;
  if (refusal !== null) {
    const laterStep = trajectory !== null && !(trajectory instanceof TextTooLongError) && trajectory.prefixes.length > 0;
    candidate.verdict = { ...refusal, byTarget: true, ...(laterStep ? { earlierSteps: Array.from(trajectory.prefixes) } : {}) };
    candidate.flags = null;
    return;
  }
  if (options.pairs === true) {
    candidate.pairFacts ??= { answer: null, fault: null };
    const completion = candidate.status === 'ok' ? record.completion() : null;
    if (completion !== null) candidate.pairFacts.answer = Array.from(conversationKey(Buffer.from(canonicalValueText(completion), 'utf8')));
  }
  candidate.key = options.pairs === true && options.key === 'conversation' ? promptKey(record) : keyOf(record, options.key);
  if (mergesAcrossModules(options.key)) {
    candidate.moduleId = moduleId(record.program, record.module);
    candidate.moduleName = `${record.program}/${record.module}`;
  }
  if (candidate.status !== 'ok') return;
  if (trajectory instanceof TextTooLongError) throw trajectory;
  candidate.trajectory = trajectory;
  const messages = options.nearDuplicates ? record.messages() : null;
  if (messages !== null) candidate.signature = signatureOf(conversationWords(messages));
  if (options.toolCalls && record.raw.includes(TOOL_CALLS_KEY)) {
    const turns =
      messages === null && options.toolCallsOnce != null && record instanceof SynalinksRecord
        ? newToolCallTurns(record, options.toolCallsOnce, options.collapse ? messageSpans : null)
        : (messages ?? record.messages()).filter(isToolCallTurn);
    const facts = turns === null ? [] : toolCallFacts(turns);
    candidate.toolCalls = facts.length > 0 ? facts : null;
  }
}

/** The first verdict of a quality stage about the answer (a drop, else a flag), or null. */
function answerFaultOf(quality: QualityResult): PairFacts['fault'] {
  if (quality.drop !== null) return (ANSWER_FAULTS as readonly string[]).includes(quality.drop.reason) ? { reason: quality.drop.reason, detail: quality.drop.detail } : null;
  const flag = quality.flags?.find((f) => (ANSWER_FAULTS as readonly string[]).includes(f.reason));
  return flag === undefined ? null : { reason: flag.reason, detail: flag.detail };
}

/** With `--key conversation`, a prompt is the conversation without its completion. */
function promptKey(record: TraceRecord): Uint32Array {
  const messages = record.messages();
  const prompt = record.status === 'ok' && messages.length > 0 ? messages.slice(0, -1) : messages;
  return conversationKey(Buffer.from(canonicalValueText(prompt), 'utf8'));
}

/**
 * The record's trajectory digests, with `messageSpans` filled in; a text too long to digest
 * is returned, to be thrown where the digests are taken, after the quality stages had their
 * say, as when they ran first.
 */
function trajectoryAhead(record: TraceRecord): TrajectoryDigests | null | TextTooLongError {
  let digests: TrajectoryDigests | null;
  try {
    digests = trajectoryDigests(record, messageSpans);
  } catch (error) {
    if (error instanceof TextTooLongError) return error;
    throw error;
  }
  const count = messageSpans.length;
  if (record instanceof SynalinksRecord && count >= 2) record.lastMessageAt(messageSpans[count - 2], messageSpans[count - 1]);
  return digests;
}

/** Where each message of the record at hand starts and ends in its line, when the collapse digests wrote them. */
const messageSpans: number[] = [];
const UNICODE_ESCAPE = Buffer.from('\\u');

function isToolCallTurn(m: Message): boolean {
  return m.role === 'assistant' && Array.isArray(m.tool_calls);
}

/**
 * Agent steps repeat every earlier turn of their run, so most tool-calling turns a thread
 * meets it has handed over before. Bounded: forgetting only costs observing a turn again.
 */
const handedOver = new Set<string>();
const HANDED_OVER_LIMIT = 1 << 14;
/** The run `handedOver` belongs to: a thread serves one run after another. */
let handedOverRun = '';

/**
 * The tool-calling assistant turns of the record this thread has not handed over yet, or
 * null: only the turns that hold `"tool_calls"` are parsed, not the whole conversation.
 */
function newToolCallTurns(record: SynalinksRecord, run: string, spans: number[] | null): Message[] | null {
  if (run !== handedOverRun) {
    handedOver.clear();
    handedOverRun = run;
  }
  const raw = record.raw;
  const [start, end] = record.span('messages')!;
  const escaped = raw.indexOf(UNICODE_ESCAPE, start);
  // A key may spell tool_calls with escapes: such records take the whole parse.
  if (escaped !== -1 && escaped < end) {
    const turns = record.messages().filter(isToolCallTurn);
    return turns.length > 0 ? turns : null;
  }
  let turns: Message[] | null = null;
  let next = raw.indexOf(TOOL_CALLS_KEY, start);
  const visit = (elementStart: number, elementEnd: number): void => {
    while (next !== -1 && next < elementStart) next = raw.indexOf(TOOL_CALLS_KEY, next + 1);
    if (next === -1 || next >= elementEnd) return;
    const text = raw.toString('latin1', elementStart, elementEnd);
    if (handedOver.has(text)) return;
    if (handedOver.size >= HANDED_OVER_LIMIT) handedOver.clear();
    handedOver.add(text);
    const message = parseJson(raw, elementStart, elementEnd) as Message;
    if (isToolCallTurn(message)) (turns ??= []).push(message);
  };
  // The collapse digests walked the messages already and left where each one is.
  if (spans !== null) for (let i = 0; i < spans.length && next !== -1; i += 2) visit(spans[i], spans[i + 1]);
  else forEachElement(raw, start, end, visit);
  return turns;
}
