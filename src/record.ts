/**
 * The record model every source yields and every stage consumes.
 * A record is one recorded LLM call: its input messages with the completion last
 * (when there is one), its accounting, and where it came from.
 */

export type Status = 'ok' | 'exception' | 'no_output';
export const STATUSES: readonly Status[] = ['ok', 'exception', 'no_output'];

/** `synalinks`, or the `kind` of a source in src/sources/registry.ts. */
export type SourceKind = string;

/**
 * A token count as a recorder can mean it: a whole number from 0 to 2^53 - 1. A negative,
 * fractional or larger value (a double cannot even hold 18446744073709551615) is no count:
 * unknown, as an absent one is, in every total, column and filter.
 */
export function isTokenCount(value: number | null | undefined): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cached_tokens: number;
  cache_creation_tokens: number;
  reasoning_tokens: number;
}

export interface ToolCall {
  id?: string;
  type?: string;
  function: { name: string; arguments: unknown };
}

/** A message as Synalinks records it: OpenAI-like, but content may be a dict or a list of parts. */
export interface Message {
  role: string;
  content?: unknown;
  reasoning_content?: string;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  name?: string;
}

/** Where a record came from: 1-based line number and the byte offset of the line start. */
export interface SourceRef {
  file: string;
  line: number;
  offset: number;
}

export interface TraceRecord {
  readonly source: SourceKind;
  readonly ref: SourceRef;
  /** The record's original bytes (one JSONL line for Synalinks), for byte-exact copies. */
  readonly raw: Buffer;
  readonly callId: string;
  readonly parentCallId: string | null;
  readonly program: string;
  readonly module: string;
  /** Epoch seconds at call start, or null when the recorder kept none. */
  readonly timestamp: number | null;
  /** Seconds, or null when unknown. */
  readonly duration: number | null;
  /** Null when unknown (not recorded, or stale as for no_output records). */
  readonly usage: Usage | null;
  /** USD as reported by the recorder; null when unknown. Never stale values. */
  readonly cost: number | null;
  readonly status: Status;
  readonly model: string | null;
  readonly provider: string | null;
  readonly version: string | null;
  readonly inputsHash: string;
  readonly configHash: string;
  readonly exception: string | null;
  /** True when the example was rebuilt from incomplete input (e.g. only the last user turn). */
  readonly partial: boolean;
  /** Why the record can never be a training example although it was read (a klieo step without its LLM I/O); absent or null otherwise. */
  readonly notExportable?: string | null;
  /**
   * Why the model stopped, as the recorder wrote it (`finish_reason` of Ask and klieo calls,
   * Anthropic's `stop_reason`), or null: Synalinks records none.
   */
  readonly stopReason: string | null;
  /**
   * The completion-token limit the request ran with, as recorded (a Synalinks LanguageModel's
   * `max_tokens` in its config, an OTLP span's `max_tokens` parameter), or absent/null: the
   * truncated stage compares it with the completion tokens where no stop reason was recorded.
   */
  readonly requestMaxTokens?: number | null;
  /** Which recorded value looks cut at the recorder's length limit (an OTLP attribute whose JSON ends early), or absent/null. */
  readonly cutValue?: string | null;
  /**
   * The tool definitions the call offered the model, as the recorder kept them (OpenAI function
   * tools, `{type: 'function', function: {name, description?, parameters?}}`), or absent/null
   * where it kept none (Synalinks, Ask and klieo record none). Exports write them in place of
   * `--tools` and inferred definitions (targets/tools.ts `toolsFor`).
   */
  readonly offeredTools?: readonly unknown[] | null;
  /** Input messages, with the completion appended last when status is ok. Parsed on demand. */
  messages(): Message[];
  /** The completion (the last message) when status is ok, else null; cheaper than `messages()` where the source can. */
  completion(): Message | null;
}

/** Classification from the two facts Synalinks records: outputs (null or not) and exception (present or not). */
/** Stop reasons that say the answer was cut at the token limit (OpenAI-style `length`, Anthropic `max_tokens`). */
export const TRUNCATING_STOP_REASONS: ReadonlySet<string> = new Set(['length', 'max_tokens', 'model_length']);

export function classify(outputsIsNull: boolean, hasException: boolean): Status {
  if (hasException) return 'exception';
  return outputsIsNull ? 'no_output' : 'ok';
}

/** A line that could not be read as a record; reported, never fatal. */
export interface DamagedLine {
  readonly file: string;
  readonly line: number;
  readonly offset: number;
  readonly reason: string;
}

/**
 * The completion-token limit a recorded config holds: a Synalinks LanguageModel's
 * (`{config: {max_tokens}}`, its default generation arguments), or the `max_tokens` (or
 * `max_completion_tokens`) parameter of a config traces made (`{params: {max_tokens}}`, OTLP).
 * A limit that is no positive whole number is none.
 */
export function maxTokensOf(config: unknown): number | null {
  const object = (value: unknown): Record<string, unknown> | null => (typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null);
  const top = object(config);
  for (const holder of [object(top?.config), object(top?.params), top]) {
    for (const name of ['max_tokens', 'max_completion_tokens']) {
      // A recorded number may be read as its text's holder (JsonNumber, a String): Number() reads both.
      const value = holder?.[name];
      // An OTLP int64 may be written as its digits.
      const limit = typeof value === 'number' || value instanceof String || (typeof value === 'string' && /^[1-9][0-9]*$/.test(value)) ? Number(value) : NaN;
      if (Number.isInteger(limit) && limit > 0) return limit;
    }
  }
  return null;
}
