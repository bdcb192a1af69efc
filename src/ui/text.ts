/**
 * Terminal text helpers: cell widths, sanitising, truncating and wrapping. The browser lays
 * out every line itself (one string per screen row), so it can render only visible rows.
 */
import { isoTime } from '../time.js';

/** Rough East Asian Wide / emoji test, close to what string-width (used by ink) decides. */
function isWide(cp: number): boolean {
  return (
    (cp >= 0x1100 && cp <= 0x115f) ||
    (cp >= 0x2e80 && cp <= 0x303e) ||
    (cp >= 0x3041 && cp <= 0x33ff) ||
    (cp >= 0x3400 && cp <= 0x4dbf) ||
    (cp >= 0x4e00 && cp <= 0x9fff) ||
    (cp >= 0xa000 && cp <= 0xa4cf) ||
    (cp >= 0xac00 && cp <= 0xd7a3) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0xfe30 && cp <= 0xfe4f) ||
    (cp >= 0xff00 && cp <= 0xff60) ||
    (cp >= 0xffe0 && cp <= 0xffe6) ||
    // Pictographs, emoticons, transport and map symbols (🚀), supplemental symbols.
    (cp >= 0x1f300 && cp <= 0x1f6ff) ||
    (cp >= 0x1f900 && cp <= 0x1faff) ||
    (cp >= 0x20000 && cp <= 0x3fffd)
  );
}

function isZeroWidth(cp: number): boolean {
  return (
    (cp >= 0x0300 && cp <= 0x036f) ||
    (cp >= 0x200b && cp <= 0x200f) ||
    (cp >= 0xfe00 && cp <= 0xfe0f) ||
    cp === 0xfeff ||
    (cp >= 0x20d0 && cp <= 0x20ff)
  );
}

export function cellWidth(cp: number): number {
  if (isZeroWidth(cp)) return 0;
  return isWide(cp) ? 2 : 1;
}

export function textWidth(text: string): number {
  let width = 0;
  for (const ch of text) width += cellWidth(ch.codePointAt(0)!);
  return width;
}

/**
 * Makes text safe to print on one row: tabs become spaces, escape and other control
 * characters become visible Control Pictures (recorded text must never drive the terminal).
 * Newlines are kept unless `oneLine`, which folds all whitespace runs into one space.
 */
export function sanitize(text: string, oneLine = false): string {
  if (oneLine) text = text.replace(/\s+/g, ' ');
  return text.replace(CONTROLS_BUT_NEWLINE, controlPicture);
}

// Bidirectional embeddings, overrides and isolates too: they would reorder the rest of the row.
// eslint-disable-next-line no-control-regex
const CONTROLS_BUT_NEWLINE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;
const EVERY_CONTROL = new RegExp(CONTROLS.source, 'g');

function controlPicture(c: string): string {
  const code = c.charCodeAt(0);
  if (code === 0x09) return '    ';
  if (code === 0x0d) return '';
  if (code < 0x20) return String.fromCharCode(0x2400 + code);
  if (code === 0x7f) return '\u2421';
  return '\ufffd';
}

/**
 * Text for one screen row, whatever it came from: the last guard before the terminal, so a
 * recorded name, role or path that no builder sanitized still cannot move the cursor, set
 * the window title or clear the screen. A newline here would break the row: it shows as ␊.
 */
export function rowSafe(text: string): string {
  return CONTROLS.test(text) ? text.replace(EVERY_CONTROL, controlPicture) : text;
}

/** Cuts text to at most `width` cells, ending with `…` when something was cut. */
export function truncate(text: string, width: number): string {
  if (width <= 0) return '';
  let used = 0;
  let i = 0;
  const chars = Array.from(text);
  for (; i < chars.length; i++) {
    const w = cellWidth(chars[i].codePointAt(0)!);
    if (used + w > width) break;
    used += w;
  }
  if (i === chars.length) return text;
  // Make room for the ellipsis.
  while (i > 0 && used + 1 > width) {
    i--;
    used -= cellWidth(chars[i].codePointAt(0)!);
  }
  return chars.slice(0, i).join('') + '…';
}

export function padEnd(text: string, width: number): string {
  const t = truncate(text, width);
  const w = textWidth(t);
  return w < width ? t + ' '.repeat(width - w) : t;
}

export function padStart(text: string, width: number): string {
  const t = truncate(text, width);
  const w = textWidth(t);
  return w < width ? ' '.repeat(width - w) + t : t;
}

/**
 * Wraps text to `width` cells per row, breaking at spaces when it can and hard otherwise.
 * Newlines start new rows; the text must be sanitised already.
 */
export function wrap(text: string, width: number): string[] {
  const rows: string[] = [];
  const w = Math.max(1, width);
  for (const paragraph of text.split('\n')) {
    if (paragraph === '') {
      rows.push('');
      continue;
    }
    const chars = Array.from(paragraph);
    let start = 0;
    while (start < chars.length) {
      let used = 0;
      let i = start;
      let lastSpace = -1;
      for (; i < chars.length; i++) {
        const cw = cellWidth(chars[i].codePointAt(0)!);
        if (used + cw > w) break;
        used += cw;
        if (chars[i] === ' ') lastSpace = i;
      }
      if (i >= chars.length) {
        rows.push(chars.slice(start).join(''));
        break;
      }
      if (i === start) i = start + 1; // a glyph wider than the row: emit it alone
      let end = i;
      let next = i;
      if (lastSpace > start && chars[i] !== ' ') {
        end = lastSpace;
        next = lastSpace + 1;
      } else if (chars[i] === ' ') {
        next = i + 1;
      }
      rows.push(chars.slice(start, end).join(''));
      start = next;
    }
  }
  return rows;
}

export { formatBytes, formatCount, formatDuration, formatTokens, formatUsd } from '../format.js';

function two(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

/**
 * `MM-DD HH:MM:SS` in UTC, the list's time column. UTC as every other output shows times
 * (stats, runs) and as `--since` reads them: a time copied from the browser selects the same
 * records on any machine.
 */
export function formatShortTime(epochSeconds: number): string {
  if (!Number.isFinite(epochSeconds)) return '';
  const d = new Date(epochSeconds * 1000);
  return `${two(d.getUTCMonth() + 1)}-${two(d.getUTCDate())} ${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())}`;
}

/** `YYYY-MM-DD HH:MM:SS.mmm` in UTC. */
export function formatLongTime(epochSeconds: number): string {
  return isoTime(Number.isFinite(epochSeconds) ? epochSeconds : null)?.replace('T', ' ').slice(0, 23) ?? '';
}
