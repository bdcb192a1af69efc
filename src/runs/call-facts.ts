/**
 * The part of run grouping that looks at one record alone, where records are read (this
 * thread or a worker): its usage, cost, timing and the digests that chain agent steps.
 */
import type { TraceRecord } from '../record.js';
import { trajectoryDigests } from '../pipeline/collapse.js';
import type { PriceTable } from '../pricing/table.js';

/** What grouping keeps of a record. */
export interface CallFacts {
  fileIndex: number;
  line: number;
  callId: string;
  program: string;
  module: string;
  status: TraceRecord['status'];
  timestamp: number | null;
  duration: number | null;
  prompt: number | null;
  completion: number | null;
  total: number | null;
  reportedCost: number | null;
  estimatedCost: number | null;
  partial: boolean;
  /** Synalinks chaining: digest of the whole conversation (ok records) and of input prefixes ending at an assistant turn. */
  conversation: string | null;
  prefixes: string[];
}

function hexOf(words: ArrayLike<number>, at: number): string {
  let out = '';
  for (let i = at; i < at + 4; i++) out += words[i].toString(16).padStart(8, '0');
  return out;
}

export function factsOf(record: TraceRecord, fileIndex: number, prices: PriceTable | null): CallFacts {
  const usage = record.usage;
  const cost = record.cost;
  const facts: CallFacts = {
    fileIndex,
    line: record.ref.line,
    callId: record.callId,
    program: record.program,
    module: record.module,
    status: record.status,
    timestamp: record.timestamp,
    duration: record.duration,
    prompt: usage?.prompt_tokens ?? null,
    completion: usage?.completion_tokens ?? null,
    total: usage === null ? null : (usage.total_tokens ?? (usage.prompt_tokens ?? 0) + (usage.completion_tokens ?? 0)),
    reportedCost: cost,
    estimatedCost: cost === null && usage !== null && prices !== null ? prices.costOf(record).usd : null,
    partial: record.partial,
    conversation: null,
    prefixes: [],
  };
  if (record.source === 'synalinks') {
    const digests = trajectoryDigests(record);
    if (digests !== null) {
      if (record.status === 'ok') facts.conversation = hexOf(digests.conversation, 0);
      for (let i = 0; i < digests.prefixes.length; i += 4) facts.prefixes.push(hexOf(digests.prefixes, i));
    }
  }
  return facts;
}
