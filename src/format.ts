/**
 * Numbers for people, one definition each, shared by every command's report and the browser,
 * so the same figure reads the same wherever it is shown:
 *
 * - bytes in decimal units (1 KB = 1000 B, 1 MB = 10^6 B, 1 GB = 10^9 B), as `ls --si`, `du --si`
 *   and MB/s rates count them;
 * - counts with thousands separators;
 * - tokens shortened above 10,000 (`12.3k`, `4.5M`);
 * - USD with the precision a single call's cost needs;
 * - durations in ms, s, min or h.
 *
 * A figure that is estimated, not counted (a cost from the price table, a quantile from a
 * sketch), is marked with a leading `≈`.
 */

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;

/**
 * Recorded text (a model, program or file name) as it may be printed on a terminal: control
 * characters, C1 included, are written as escapes (`\x1b`, `\n`), so a record cannot move
 * the cursor, recolour the screen or set the window title of whoever reads the report.
 * `keepNewlines`: for a message of several lines of traces' own, whose parts may be such text.
 */
export function printable(text: string, keepNewlines = false): string {
  CONTROL.lastIndex = 0;
  if (!CONTROL.test(text)) return text;
  return text.replace(CONTROL, (c) =>
    c === '\n' ? (keepNewlines ? c : '\\n') : c === '\t' ? '\\t' : `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`,
  );
}

/** The mark in front of an estimated figure. */
export const APPROX = '≈';

function mark(text: string, approximate: boolean): string {
  return approximate ? `${APPROX}${text}` : text;
}

/** `512 B`, `39.5 KB`, `6.8 MB`, `1.07 GB` (decimal units). */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return '';
  if (bytes < 1000) return `${Math.round(bytes)} B`;
  // Rounding may carry into the next unit (999,960 B is 1.0 MB, not 1000.0 KB).
  if (bytes < 999_950) return `${(bytes / 1e3).toFixed(1)} KB`;
  if (bytes < 999_950_000) return `${(bytes / 1e6).toFixed(1)} MB`;
  return `${(bytes / 1e9).toFixed(2)} GB`;
}

/**
 * `3,000`. Whole numbers are grouped here rather than by `toLocaleString`, whose first call
 * loads the ICU locale data: about 25 ms, a tenth of a short run.
 */
export function formatCount(n: number): string {
  if (!Number.isSafeInteger(n)) return n.toLocaleString('en-US');
  const digits = String(Math.abs(n));
  let grouped = digits.slice(0, ((digits.length - 1) % 3) + 1);
  for (let i = grouped.length; i < digits.length; i += 3) grouped += `,${digits.slice(i, i + 3)}`;
  return n < 0 ? `-${grouped}` : grouped;
}

/** `950`, `9,999`, `12.3k`, `123k`, `4.5M`, `1.2B`; empty for an unknown (negative) count. */
export function formatTokens(n: number): string {
  if (!Number.isFinite(n) || n < 0) return '';
  if (n < 10_000) return formatCount(n);
  if (n < 99_950) return `${(n / 1e3).toFixed(1)}k`;
  if (n < 999_500) return `${(n / 1e3).toFixed(0)}k`;
  if (n < 999_950_000) return `${(n / 1e6).toFixed(1)}M`;
  return `${(n / 1e9).toFixed(1)}B`;
}

/** `$0`, `$0.0030`, `$0.012`, `$1.23`, `$123`; `≈` in front when estimated; empty when unknown. */
export function formatUsd(usd: number, approximate = false): string {
  if (!Number.isFinite(usd)) return '';
  let text: string;
  if (usd === 0) text = '$0';
  else if (usd >= 99.995) text = `$${usd.toFixed(0)}`;
  else if (usd >= 0.995) text = `$${usd.toFixed(2)}`;
  else if (usd >= 0.0001) text = `$${usd.toPrecision(2)}`;
  else text = `$${usd.toExponential(1)}`;
  return mark(text, approximate);
}

/** `850ms`, `2.3s`, `19.8s`, `12m`, `3h`; `≈` in front when estimated; `-` when unknown. */
export function formatDuration(seconds: number | null, approximate = false): string {
  if (seconds === null || !Number.isFinite(seconds)) return '-';
  let text: string;
  if (seconds < 0.9995) text = `${Math.round(seconds * 1000)}ms`;
  else if (seconds < 99.95) text = `${seconds.toFixed(1)}s`;
  else if (seconds < 99.5 * 60) text = `${Math.round(seconds / 60)}m`;
  else text = `${Math.round(seconds / 3600)}h`;
  return mark(text, approximate);
}
