/**
 * Numbers for people, one definition each, shared by every command's report and the browser,
 * so the same figure reads the same wherever it is shown:
 *
 * - bytes in decimal units (1 KB = 1000 B, 1 MB = 10^6 B, 1 GB = 10^9 B), as `ls --si`, `du --si`
 *   and MB/s rates count them;
 * - counts with thousands separators;
 * - tokens shortened above 10,000 (`12.3k`, `4.5M`);
 * - USD with the precision a single call's cost needs, never in scientific notation;
 * - a count with its noun, singular for one (`plural`);
 * - durations in ms, s, min or h.
 *
 * A figure that is estimated, not counted (a cost from the price table, a quantile from a
 * sketch), is marked with a leading `≈`.
 */

import { escapeInJson } from './canonical/escape-in-json.js';

/**
 * What a terminal acts on rather than shows: C0 and C1 controls (ESC starts every escape
 * sequence; CSI, OSC and the rest have one-character C1 forms too) and the bidirectional
 * embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069), which reorder what
 * follows them on the line, so a name could show as another.
 */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
/** The same in JSON text, where C0 controls are escaped already. */
const CONTROL_IN_JSON = /[\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/**
 * Recorded text (a model, program, file name, call id, a cell of a query) as it may be printed
 * on a terminal: the one printer every such text goes through. Controls, C1 included, and
 * bidirectional controls are written as escapes (`\x1b`, `\n`, `\u202e`), so a record cannot
 * move the cursor, recolour or clear the screen, set the window title or the clipboard, or
 * reorder a line of whoever reads the report. `keepNewlines`: for a message of several lines
 * of traces' own, whose parts may be such text, or a CSV field (quoted) that holds a newline.
 */
export function printable(text: string, keepNewlines = false): string {
  CONTROL.lastIndex = 0;
  if (!CONTROL.test(text)) return text;
  CONTROL.lastIndex = 0;
  return text.replace(CONTROL, (c) => {
    const code = c.charCodeAt(0);
    if (c === '\n') return keepNewlines ? c : '\\n';
    if (c === '\t') return '\\t';
    return code > 0xff ? `\\u${code.toString(16)}` : `\\x${code.toString(16).padStart(2, '0')}`;
  });
}

/**
 * JSON text (`--json` output) as it may be printed on a terminal: what `printable` escapes is
 * written as `\u` escapes, which JSON.stringify leaves raw for C1 and bidirectional controls.
 * The values read back the same.
 */
export function printableJson(text: string): string {
  return escapeInJson(text, CONTROL_IN_JSON);
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

/** Below this a cost is written `<$0.0001` where space is short (`short`). */
const SHORT_USD_FLOOR = 0.0001;

/**
 * `$0`, `$0.000024`, `$0.0030`, `$0.012`, `$1.23`, `$123`, `$1,234`: money as money, never in
 * scientific notation, two significant digits below a dollar (a single call's cost needs them).
 * `short`: for a narrow column, `<$0.0001` below a hundredth of a cent. `≈` in front when
 * estimated; empty when unknown. `--json` keeps the full value: this is for people only.
 */
export function formatUsd(usd: number, approximate = false, short = false): string {
  if (!Number.isFinite(usd)) return '';
  const size = Math.abs(usd);
  let text: string;
  if (size === 0) text = '$0';
  else if (short && size < SHORT_USD_FLOOR) text = `<$${SHORT_USD_FLOOR.toFixed(4)}`;
  else if (size >= 99.995) text = `$${formatCount(Math.round(size))}`;
  else if (size >= 0.995) text = `$${size.toFixed(2)}`;
  else {
    // Two significant digits: as many decimals as reach the second one (toFixed takes up to 100).
    const decimals = Math.min(100, 1 - Math.floor(Math.log10(size)));
    const fixed = size.toFixed(decimals);
    // Rounding may carry into one more digit (0.000995 is 0.0010): one decimal fewer then.
    text = `$${Number(fixed) >= 10 ** (2 - decimals) ? size.toFixed(decimals - 1) : fixed}`;
  }
  return mark(usd < 0 ? `-${text}` : text, approximate);
}

/**
 * `1 file`, `2 files`, `0 files`, `1,234 records`: a count and its noun, the count grouped
 * (formatCount). `many` for a noun whose plural is not `noun + s` (`match`, `matches`).
 */
export function plural(n: number, noun: string, many = `${noun}s`): string {
  return `${formatCount(n)} ${n === 1 ? noun : many}`;
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

/** The width summaries wrap at: 80 columns, or a wider terminal's (pipes and tests get 80). */
export const SUMMARY_WIDTH = 80;

/** 80, or more where the terminal (or the COLUMNS a shell exports, as `ls` reads it) is wider. */
export function summaryWidth(stream: NodeJS.WriteStream = process.stderr): number {
  const columns = stream.isTTY ? stream.columns : Number(process.env.COLUMNS);
  return Number.isInteger(columns) && columns > SUMMARY_WIDTH ? columns : SUMMARY_WIDTH;
}

/** Columns a text takes: one per code point (a surrogate pair is one character on screen). */
function columnsOf(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/**
 * Where a line's words start and its continuations go: after its label columns (`label  value`,
 * `  reason  6  gloss`: the last gap of two or more spaces in the line's first half), with the
 * label kept as it is; else after the line's own indent, continuations two columns further in.
 */
function lineHead(line: string, width: number): { head: string; hang: number } {
  const lead = line.length - line.trimStart().length;
  let at = -1;
  for (const gap of line.matchAll(/ {2,}(?=\S)/g)) {
    const end = gap.index + gap[0].length;
    if (gap.index > lead && end <= width / 2) at = end;
  }
  return at > 0 ? { head: line.slice(0, at), hang: at } : { head: line.slice(0, lead), hang: lead + 2 };
}

/**
 * One summary line as lines of at most `width` columns, broken only between words, each
 * continuation under the line's text (`lineHead`). A word longer than the room (a path, a
 * call_id) is never cut: it stands whole on a line of its own. A line that fits is left as it is.
 */
export function wrapLine(line: string, width = SUMMARY_WIDTH, hanging = true): string[] {
  if (columnsOf(line) <= width) return [line];
  const { head, hang } = hanging ? lineHead(line, width) : { head: '', hang: 0 };
  const indent = ' '.repeat(hang);
  const lines: string[] = [];
  let current = head;
  let bare = true;
  for (const word of line.slice(head.length).split(/ +/)) {
    if (word === '') continue;
    const candidate = bare ? `${current}${word}` : `${current} ${word}`;
    if (columnsOf(candidate) <= width || current.trim() === '') {
      current = candidate;
    } else {
      lines.push(current.trimEnd());
      current = `${indent}${word}`;
    }
    bare = false;
  }
  lines.push(current.trimEnd());
  return lines;
}

/** Each line of `text` wrapped by `wrapLine` (a trailing newline stays). */
export function wrap(text: string, width = SUMMARY_WIDTH): string {
  return text
    .split('\n')
    .flatMap((line) => wrapLine(line, width))
    .join('\n');
}

/** A paragraph of help as lines of at most `width` columns, flush left. */
export function paragraph(text: string, width = SUMMARY_WIDTH): string {
  return wrapLine(text, width, false).join('\n');
}
