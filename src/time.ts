/**
 * Times given as text, read the same on every machine. `Date.parse` reads an ISO 8601 date
 * alone as UTC but a date-time without a zone as the machine's local time, so `--since
 * 2026-07-07T10:00` kept other records in Tokyo than in CI, and a recorder's zone-less
 * timestamps moved with the reader's TZ. Here a time without a zone is UTC, always.
 */

/** An ISO 8601 date-time with no zone designator (`T` or a space between date and time). */
const ZONELESS_DATE_TIME = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)$/;

/** A date at the start of ISO 8601 text: `Date.parse` rolls a day the month lacks over (`2026-02-30` is March 2). */
const LEADING_DATE = /^\s*(\d{4})-(\d{2})-(\d{2})(?![\d])/;

function isCalendarDate(text: string): boolean {
  const date = LEADING_DATE.exec(text);
  if (date === null) return true;
  const [year, month, day] = [Number(date[1]), Number(date[2]), Number(date[3])];
  // setUTCFullYear, not Date.UTC, which reads years 0-99 as 1900-1999.
  const at = new Date(0);
  at.setUTCFullYear(year, month - 1, day);
  return at.getUTCMonth() === month - 1 && at.getUTCDate() === day;
}

/** Epoch seconds of a time written as text (ISO 8601, or what `Date.parse` reads with its zone); null when unreadable. */
export function epochSecondsOf(text: string): number | null {
  if (!isCalendarDate(text)) return null;
  const zoneless = ZONELESS_DATE_TIME.exec(text.trim());
  const ms = Date.parse(zoneless !== null ? `${zoneless[1]}T${zoneless[2]}Z` : text);
  return Number.isNaN(ms) ? null : ms / 1000;
}

/**
 * Epoch seconds as ISO 8601 text in UTC, or null for none, or for a time no Date can hold: a
 * recorded start plus a recorded duration of 1e308 s ended `traces runs --json` with a stack.
 */
export function isoTime(epochSeconds: number | null): string | null {
  if (possibleTime(epochSeconds) === null) return null;
  const date = new Date(epochSeconds! * 1000);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

/** The farthest time from 1970 a JavaScript Date can hold, in seconds (±8.64e15 ms). */
export const MAX_EPOCH_SECONDS = 8.64e12;

/**
 * The range check every source's times pass (Synalinks, Ask, klieo alike): a time no Date can
 * hold (`1e300`, or a start plus nanoseconds read as milliseconds) is unknown, null. Left as
 * it was, it ended `export --format ask-recording` and `dedupe` with `Invalid time value`, and
 * `sql … to_timestamp(timestamp)` with an out-of-range error on the klieo rows.
 */
export function possibleTime(epochSeconds: number | null): number | null {
  return epochSeconds !== null && Number.isFinite(epochSeconds) && Math.abs(epochSeconds) <= MAX_EPOCH_SECONDS ? epochSeconds : null;
}

/** The range check of every source's durations, in seconds: a negative one, or one longer than any Date spans, is unknown, null. */
export function possibleDuration(seconds: number | null): number | null {
  return seconds !== null && Number.isFinite(seconds) && seconds >= 0 && seconds <= MAX_EPOCH_SECONDS ? seconds : null;
}
