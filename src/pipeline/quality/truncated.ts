/**
 * `truncated`: an answer cut at the token limit. Ask and klieo record why the model stopped;
 * Synalinks records no reason, so the limit the request ran with decides: `--max-completion-tokens N`,
 * else the limit the record holds (a LanguageModel's `max_tokens` in the recorded config, an
 * OTLP span's `max_tokens`); a completion of that many tokens or more, by the recorded usage,
 * counts as cut. A record that holds neither a stop reason nor a limit cannot be checked
 * (`truncationUnchecked`), and the run says how many.
 */
import type { TraceRecord } from '../../record.js';

/**
 * Stop reasons that mean the token limit, compared lower-cased: OpenAI-style `length`,
 * Anthropic and Bedrock `max_tokens`, Gemini and Cohere `MAX_TOKENS`, the Responses API's
 * `max_output_tokens`, vLLM's `model_length`.
 */
export const TRUNCATING_STOP_REASONS: ReadonlySet<string> = new Set(['length', 'max_tokens', 'max_output_tokens', 'model_length']);

export function truncatedDetail(record: TraceRecord, maxCompletionTokens: number | null): string | null {
  if (record.cutValue) return `recorded value cut: ${record.cutValue}`;
  const reason = record.stopReason;
  if (reason !== null) return TRUNCATING_STOP_REASONS.has(reason.toLowerCase()) ? `stop reason ${JSON.stringify(reason)}` : null;
  const limit = maxCompletionTokens ?? record.requestMaxTokens ?? null;
  if (limit === null) return null;
  const tokens = record.usage?.completion_tokens;
  if (tokens === undefined || tokens < limit) return null;
  return `${tokens} completion tokens >= ${maxCompletionTokens !== null ? '--max-completion-tokens' : 'the recorded max_tokens'} ${limit}`;
}

/** True when nothing tells whether the answer was cut: no cut value, no stop reason, no limit to compare the usage with. */
export function truncationUnchecked(record: TraceRecord, maxCompletionTokens: number | null): boolean {
  if (record.cutValue || record.stopReason !== null) return false;
  return (maxCompletionTokens ?? record.requestMaxTokens ?? null) === null || record.usage?.completion_tokens === undefined;
}
