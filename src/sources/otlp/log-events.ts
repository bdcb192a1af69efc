/**
 * Log records joined to their span (log-index.ts) read as the span's own events (seeded into
 * its bag, bag.ts; gen-ai-events.ts reads them): the GenAI log
 * events (`gen_ai.system.message` … `gen_ai.choice`) hold what the span events of the same name
 * hold, the fields in a `body` (a kvlist, or a JSON text) instead of attributes. The event's
 * name is the record's `eventName` (OTLP 1.5), else its `event.name` attribute (earlier SDKs).
 * With content capture off the instrumentations still write the events, their bodies empty of
 * any message (`{}`, a choice's `{finish_reason, index, message: {}}`): such a record says nothing
 * the span's attributes do not, and read as a message it would be an empty one, so it is left.
 */
import { isObject, type Json } from '../json-values.js';
import { anyValue, attributeMap } from './values.js';

export function logAsSpanEvent(record: Json): Json | null {
  const attributes = Array.isArray(record.attributes) ? record.attributes : [];
  const name = typeof record.eventName === 'string' && record.eventName !== '' ? record.eventName : (attributeMap(attributes).str('event.name') ?? null);
  if (name === null) return null;
  if (isObject(record.body) && !holdsMessage(anyValue(record.body))) return null;
  const body = isObject(record.body) ? [{ key: 'body', value: record.body }] : [];
  return { name, timeUnixNano: record.timeUnixNano ?? record.time_unix_nano, attributes: [...attributes, ...body] };
}

/** Whether a body holds any of a message: its content or tool calls, or a choice's message holding them. */
function holdsMessage(body: unknown): boolean {
  if (typeof body === 'string') return body !== '';
  if (!isObject(body)) return false;
  if (body.content !== undefined && body.content !== null) return true;
  if (Array.isArray(body.tool_calls) && body.tool_calls.length > 0) return true;
  return isObject(body.message) && holdsMessage(body.message);
}

/** The log records written in a span as events, seeded into its bag after its own (SpanBag.seedEvents). */
export function logEvents(records: readonly Json[]): Json[] {
  return records.map(logAsSpanEvent).filter((e): e is Json => e !== null);
}
