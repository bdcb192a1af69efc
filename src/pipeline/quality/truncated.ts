/**
 * `truncated`: an answer cut at the token limit. Ask and klieo record why the model stopped;
 * Synalinks records no reason, so `--max-completion-tokens N` (the limit the program ran with)
 * makes a completion of N tokens or more, by the recorded usage, count as cut.
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
  if (maxCompletionTokens === null) return null;
  const tokens = record.usage?.completion_tokens;
  if (tokens === undefined || tokens < maxCompletionTokens) return null;
  return `${tokens} completion tokens >= --max-completion-tokens ${maxCompletionTokens}`;
}
