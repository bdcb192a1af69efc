/**
 * The part of curation that looks at one record alone: its selection verdict, its key,
 * its trajectory digests and tool calls. It runs where records are read (the main thread
 * or a worker), and only this small summary travels to the stage that compares records.
 */
import type { Message, Status, TraceRecord } from '../record.js';
import { trajectoryDigests, type TrajectoryDigests } from './collapse.js';
import { keyOf, type KeyKind } from './keys.js';
import { conversationWords, signatureOf } from './minhash.js';
import { selectionVerdict, type Selection } from './selection.js';

export interface CandidateOptions {
  selection: Selection;
  key: KeyKind;
  collapse: boolean;
  /** Collect the assistant turns that call tools (export infers tool definitions from them). */
  toolCalls: boolean;
  /** Compute the near-duplicate signature (minhash.ts). */
  nearDuplicates: boolean;
}

export interface Candidate {
  callId: string;
  /** The call_id's uuid bits, when the summary has them at hand (saves parsing `callId`). */
  readonly callIdWords?: Uint32Array | null;
  /** The file is `files[fileIndex]`: its name is not repeated in every record's summary. */
  line: number;
  fileIndex: number;
  status: Status;
  /** Epoch seconds; 0 when unknown. */
  timestamp: number;
  /** Why selection drops the record, or null. */
  verdict: { reason: 'status' | 'filter'; detail: string } | null;
  /** Dedupe key, 4 words (absent when selection drops the record). */
  key: Uint32Array | null;
  trajectory: TrajectoryDigests | null;
  toolCalls: Message[] | null;
  /** Near-duplicate signature (band hashes, then sketch), or null. */
  signature: Uint32Array | null;
}

export function candidateOf(record: TraceRecord, fileIndex: number, options: CandidateOptions): Candidate {
  const status = record.status;
  const candidate: Candidate = {
    callId: record.callId,
    line: record.ref.line,
    fileIndex,
    status,
    timestamp: record.timestamp ?? 0,
    verdict: selectionVerdict(options.selection, record),
    key: null,
    trajectory: null,
    toolCalls: null,
    signature: null,
  };
  if (candidate.verdict !== null) return candidate;
  candidate.key = keyOf(record, options.key);
  if (status !== 'ok') return candidate;
  if (options.collapse) candidate.trajectory = trajectoryDigests(record);
  const messages = options.nearDuplicates ? record.messages() : null;
  if (messages !== null) candidate.signature = signatureOf(conversationWords(messages));
  if (options.toolCalls && record.raw.includes('"tool_calls"')) {
    candidate.toolCalls = (messages ?? record.messages()).filter((m) => m.role === 'assistant' && Array.isArray(m.tool_calls));
  }
  return candidate;
}
