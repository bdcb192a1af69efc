/**
 * How the call ended, from whatever the emitter left, run after every dialect on every call:
 * a failed call is one with the span status ERROR, an `error.type`, an exception event, a
 * finish reason `error` (Mastra's chat span has status OK then), or a level ERROR (Langfuse,
 * read by langfuse.ts); the reason said is the first of the exception, the status message, the
 * error type. With no finish reason recorded, an answer whose output tokens reach the
 * `max_tokens` asked was cut: finish reason `length`, said to be inferred.
 */
import { numberValue } from '../../../canonical/json-value.js';
import { isObject, str } from '../../json-values.js';
import type { CallFields, Extractor } from '../call.js';
import { attributeMap } from '../values.js';

/** The request's output-token limit, by the names the dialects give it. */
const MAX_TOKENS = ['max_tokens', 'max_completion_tokens', 'maxTokens', 'maxOutputTokens', 'max_output_tokens', 'max_new_tokens'];

export const outcome: Extractor = {
  name: 'outcome',
  recognize: () => 'call',
  extract(bag, call) {
    const out: CallFields = {};
    const status = isObject(bag.span.status) ? bag.span.status : null;
    const code = status === null ? null : status.code;
    const isError = code === 2 || code === 'STATUS_CODE_ERROR' || (code instanceof String && code.valueOf() === '2') || numberValue(code) === 2;
    const errorType = bag.peekStr('error.type');
    let exception: string | null = null;
    let excepted = false;
    for (const e of bag.events()) {
      if (e === null || e.name !== 'exception') continue;
      excepted = true;
      const ea = attributeMap(e.attributes);
      const parts = [ea.str('exception.type'), ea.str('exception.message')].filter((p) => p !== null);
      if (parts.length > 0) exception = parts.join(': ');
      break;
    }
    const finish = call.finishReason;
    if (isError || errorType !== null || excepted || finish === 'error') {
      out.error = exception ?? (status !== null ? str(status.message) : null) ?? errorType ?? (isError ? 'span status ERROR' : 'finish reason error');
    }
    if (finish === null && call.usage !== null && call.completion !== null) {
      for (const name of MAX_TOKENS) {
        const max = numberValue(call.params[name]);
        if (typeof max !== 'number') continue;
        // Equal on a real server; at least, on one that counts more than it was allowed to send.
        if (max > 0 && call.usage.completion_tokens >= max) {
          out.finishReason = 'length';
          out.finishInferred = `no finish reason recorded; the answer's ${call.usage.completion_tokens} output tokens reach the ${name} of ${max} asked`;
        }
        break;
      }
    }
    return out;
  },
};
