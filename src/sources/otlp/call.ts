/** What one span says about an LLM call, as the extractors (extractors/*.ts) fill it in. */
import type { Message, Usage } from '../../record.js';
import type { Json } from '../json-values.js';
import type { SpanBag } from './bag.js';

export interface SpanCall {
  /** The extractor that recognized the span as an LLM call first: its dialect. */
  dialect: string;
  /** The extractors that wrote a field of the call, in chain order (`mapped_by` of the record). */
  mappedBy: string[];
  /** Input messages as an OpenAI chat request holds them, or null when the span kept none. */
  inputs: Message[] | null;
  /** The system instructions kept apart from the input messages (`gen_ai.system_instructions`): put first in `inputs`, never in their place. */
  system: Message | null;
  /** The input messages were recorded but could not be read (not a message list): why, or null. */
  unreadable: string | null;
  /** The answer, or null when the span kept none. */
  completion: Message | null;
  /** Tool definitions offered to the model, as recorded. */
  tools: unknown[] | null;
  model: string | null;
  provider: string | null;
  /** Request parameters (temperature, max_tokens, …) as recorded. */
  params: Json;
  usage: Usage | null;
  finishReason: string | null;
  /** The finish reason was not recorded but inferred (output tokens reached the max_tokens asked): why. */
  finishInferred: string | null;
  /** Why the call failed, or null: a level ERROR, a finish reason `error`, error.type, an exception event, or the span's ERROR status. */
  error: string | null;
  /** Which recorded value looks cut (a JSON text that ends early), or null. */
  cut: string | null;
  /** USD the recorder reported for the call (MLflow's `mlflow.llm.cost`), when it did. */
  cost: number | null;
  /** The recorder's own call ids (Synalinks' Monitor: `synalinks.call_id`), which a Synalinks tree of the same run shares. */
  ownIds: { callId: string; parentCallId: string | null } | null;
}

/** What an extractor found: the fields it read (a field another extractor filled first stays as that one wrote it). */
export type CallFields = Partial<Omit<SpanCall, 'dialect' | 'mappedBy'>>;

/**
 * One dialect (or one place a dialect keeps content): recognizes its spans by a marker and
 * reads the fields it knows, taking from the bag what it reads.
 */
export interface Extractor {
  /** Its name, as `mapped_by` shows it. */
  readonly name: string;
  /**
   * `call`: the span is an LLM call this extractor reads. `other`: the dialect marks the span as
   * no LLM call (a tool, agent, chain or workflow span): when it is the first to say so, the span
   * is no record. null: not a span of this dialect.
   */
  recognize(bag: SpanBag): 'call' | 'other' | null;
  /** The fields read from the bag; `call` holds what the extractors before it filled, so what is known already need not be read. */
  extract(bag: SpanBag, call: Readonly<SpanCall>): CallFields;
}
