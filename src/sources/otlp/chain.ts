/**
 * What one span says about an LLM call: an ordered chain of extractors (extractors/*.ts), one
 * per dialect or place a dialect keeps content, over one bag of the span's attributes and
 * events (bag.ts). The order below is the precedence, written once:
 *
 * - The first extractor that recognizes the span by its marker decides whether it is an LLM
 *   call (`call`) or a span of its dialect that is none (`other`: a tool, agent, chain or
 *   workflow span), and its name is the call's dialect.
 * - Every later extractor that recognizes the span as a call reads what is still in the bag,
 *   and fills only the fields still empty: an attribute an extractor took is never read again,
 *   and a field is written by the first extractor that holds it.
 * - The fallback runs on a span no named extractor recognized, or one they found no input in.
 * - outcome.ts then reads the status the emitter left (failed, cut).
 *
 * The extractors that wrote a field are the call's `mappedBy` (`mapped_by` in record views).
 * Content an emitter keeps in related records (a parent span, log records) is seeded into the
 * bag before the chain runs (SpanBag.seed / seedEvents), and read as the span's own.
 */
import type { Json } from '../json-values.js';
import { SpanBag } from './bag.js';
import type { CallFields, Extractor, SpanCall } from './call.js';
import { fallback } from './extractors/fallback.js';
import { genAiEvents } from './extractors/gen-ai-events.js';
import { genAi } from './extractors/gen-ai.js';
import { langfuse } from './extractors/langfuse.js';
import { mastra } from './extractors/mastra.js';
import { mlflow } from './extractors/mlflow.js';
import { openInference } from './extractors/openinference.js';
import { openLlmetry } from './extractors/openllmetry.js';
import { outcome } from './extractors/outcome.js';
import { vercelAi } from './extractors/vercel-ai.js';
import type { Attributes } from './values.js';

export type { SpanCall } from './call.js';

/** The named extractors, in precedence order. */
export const EXTRACTORS: readonly Extractor[] = [openInference, vercelAi, mlflow, langfuse, mastra, genAi, openLlmetry, genAiEvents];

function emptyCall(dialect: string): SpanCall {
  return {
    dialect,
    mappedBy: [],
    inputs: null,
    system: null,
    unreadable: null,
    completion: null,
    tools: null,
    model: null,
    provider: null,
    params: {},
    usage: null,
    finishReason: null,
    finishInferred: null,
    error: null,
    cut: null,
    cost: null,
    ownIds: null,
  };
}

/** The fields an extractor may write (`params` merged by name, the others written when still empty). */
const FIELDS = ['params', 'inputs', 'system', 'unreadable', 'completion', 'tools', 'model', 'provider', 'usage', 'finishReason', 'finishInferred', 'error', 'cut', 'cost', 'ownIds'] as const;

/** Writes the fields still empty in `call`; true when one was written. */
function fill(call: SpanCall, fields: CallFields): boolean {
  let wrote = false;
  for (const key of FIELDS) {
    const value = fields[key];
    // An empty finish reason is none recorded (OpenLLMetry's Anthropic streams write `""`).
    if (value === null || value === undefined || (key === 'finishReason' && value === '')) continue;
    if (key === 'params') {
      for (const [name, v] of Object.entries(value as Json)) {
        if (name in call.params || v === undefined) continue;
        call.params[name] = v;
        wrote = true;
      }
    } else if (call[key] === null) {
      (call as unknown as Record<string, unknown>)[key] = value;
      wrote = true;
    }
  }
  return wrote;
}

/** The span's kind by dialect marker: the first extractor that recognizes it, and whether as a call; `none` when none does. */
export function spanKind(bag: SpanBag): string {
  for (const extractor of EXTRACTORS) {
    const said = extractor.recognize(bag);
    if (said !== null) return said === 'call' ? extractor.name : `${extractor.name} (not an LLM call)`;
  }
  return fallback.recognize(bag) === 'call' ? 'with input or output attributes of no chat shape' : 'none';
}

/** Reads the call out of one span, or null when the span is no LLM call. */
export function callOfSpan(span: Json, attrs: Attributes, bag = new SpanBag(span, attrs)): SpanCall | null {
  let call: SpanCall | null = null;
  for (const extractor of EXTRACTORS) {
    const said = extractor.recognize(bag);
    if (said === null || (said === 'other' && call !== null)) continue;
    if (said === 'other') return null;
    call ??= emptyCall(extractor.name);
    if (fill(call, extractor.extract(bag, call))) call.mappedBy.push(extractor.name);
  }
  // The fallback: on a span no dialect recognized, or one whose dialect found no input in it.
  if ((call === null || call.inputs === null) && fallback.recognize(bag) === 'call') {
    const fields = fallback.extract(bag, call ?? emptyCall(fallback.name));
    if (fields.inputs !== undefined && fields.inputs !== null) {
      call ??= emptyCall(fallback.name);
      if (fill(call, fields)) call.mappedBy.push(fallback.name);
    }
  }
  if (call === null) return null;
  fill(call, outcome.extract(bag, call));
  return finished(call, bag);
}

/** The system instructions first in the input messages, the cut noted. */
function finished(call: SpanCall, bag: SpanBag): SpanCall {
  if (call.system !== null && call.inputs !== null && call.inputs[0]?.role !== 'system') call.inputs = [call.system, ...call.inputs];
  if (call.inputs === null && call.system !== null) call.unreadable ??= 'only the system instructions were recorded, not the input messages';
  if (call.inputs !== null) call.unreadable = null;
  call.cut ??= bag.cutAt;
  return call;
}
