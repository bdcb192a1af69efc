/**
 * One pass that answers whether a JSON text can be handed to the native parser as it stands:
 * the text is one value orjson loads (the rules `checkTextRules` and `skipValue` hold it to)
 * and every number in it is written as JavaScript prints its value, so `JSON.parse` loses no
 * number's text. It only answers yes or no: on no, the caller parses by the validating walk,
 * which says what is wrong or keeps the odd numbers' texts.
 *
 * Why a second scanner beside scan.ts: that one skips string bodies with native `indexOf`
 * calls, right for records made of a few long strings; a span line is thousands of short keys
 * and values, where the call costs more than the string. This one looks at every byte once in a
 * single loop (about 0.2 s where the two-pass check took 0.45 s on 150 MB of spans).
 */
import { isUtf8 } from 'node:buffer';
import { hexUnit, MAX_DEPTH, PLAIN_ESCAPE } from './scan.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;

/** Integers of up to 15 digits (other than `-0`) print as written. */
const PLAIN_INTEGER_LENGTH = 15;

/** Closing byte of each open container. */
const closers = new Uint8Array(MAX_DEPTH + 1);

/** What a byte is inside a string: 0 for one that stands for itself, else QUOTE, BACKSLASH or CONTROL. */
const CONTROL = 1;
const IN_STRING = new Uint8Array(256);
for (let c = 0; c < 0x20; c++) IN_STRING[c] = CONTROL;
IN_STRING[QUOTE] = QUOTE;
IN_STRING[BACKSLASH] = BACKSLASH;

/** Where the string whose body starts at `p` ends (past its closing quote), or -1 if it breaks a rule. */
function stringEnd(b: Uint8Array, p: number, end: number): number {
  while (p < end) {
    const kind = IN_STRING[b[p++]];
    if (kind === 0) continue;
    if (kind === QUOTE) return p;
    if (kind === CONTROL) return -1;
    p = escapeEnd(b, p, end);
    if (p < 0) return -1;
  }
  return -1;
}

/** `p` just past a backslash: where the escape ends, or -1 (an unknown escape, a lone surrogate). */
function escapeEnd(b: Uint8Array, p: number, end: number): number {
  const e = b[p];
  if (PLAIN_ESCAPE[e] === 1) return p + 1;
  if (e !== 0x75) return -1;
  const unit = hexUnit(b, p + 1, end);
  if (unit < 0 || (unit >= 0xdc00 && unit <= 0xdfff)) return -1;
  if (unit < 0xd800 || unit > 0xdbff) return p + 5;
  if (b[p + 5] !== BACKSLASH || b[p + 6] !== 0x75) return -1;
  const low = hexUnit(b, p + 7, end);
  return low < 0xdc00 || low > 0xdfff ? -1 : p + 11;
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/** Where the number at `p` ends, or -1 when it is not a JSON number or not written as JavaScript prints it. */
function numberEnd(b: Buffer, p: number, end: number): number {
  const start = p;
  if (b[p] === 0x2d) p++;
  if (b[p] === 0x30) p++;
  else if (p < end && b[p] >= 0x31 && b[p] <= 0x39) while (p < end && isDigit(b[p])) p++;
  else return -1;
  let plain = true;
  if (p < end && b[p] === 0x2e) {
    plain = false;
    const digits = ++p;
    while (p < end && isDigit(b[p])) p++;
    if (p === digits) return -1;
  }
  if (p < end && (b[p] === 0x65 || b[p] === 0x45)) {
    plain = false;
    p++;
    if (p < end && (b[p] === 0x2b || b[p] === 0x2d)) p++;
    const digits = p;
    while (p < end && isDigit(b[p])) p++;
    if (p === digits) return -1;
  }
  if (plain && p - start <= PLAIN_INTEGER_LENGTH && !(b[start] === 0x2d && b[start + 1] === 0x30)) return p;
  // An infinite value (orjson refuses it) prints as "Infinity", never as its text: -1 either way.
  const text = b.toString('latin1', start, p);
  return String(Number(text)) === text ? p : -1;
}

function literalEnd(b: Uint8Array, p: number, end: number, word: string): number {
  if (p + word.length > end) return -1;
  for (let i = 1; i < word.length; i++) if (b[p + i] !== word.charCodeAt(i)) return -1;
  return p + word.length;
}

function skipBlank(b: Uint8Array, p: number, end: number): number {
  while (p < end) {
    const c = b[p];
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
    p++;
  }
  return p;
}

/** Whether `b` is one JSON value (white space around allowed) that orjson loads, with every number written as JavaScript prints it. */
export function isPlainJson(b: Buffer): boolean {
  if (!isUtf8(b)) return false;
  const end = b.length;
  let open = 0;
  let p = skipBlank(b, 0, end);
  for (;;) {
    // `p` is where a value must start.
    if (p >= end) return false;
    const c = b[p];
    if (c === QUOTE) p = stringEnd(b, p + 1, end);
    else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (open >= MAX_DEPTH) return false;
      // '{' + 2 is '}', '[' + 2 is ']'.
      const close = c + 2;
      p = skipBlank(b, p + 1, end);
      if (p < end && b[p] === close) p++;
      else {
        closers[open++] = close;
        if (close === CLOSE_OBJECT) {
          p = memberValue(b, p, end);
          if (p < 0) return false;
        }
        continue;
      }
    } else if (c === 0x74) p = literalEnd(b, p, end, 'true');
    else if (c === 0x66) p = literalEnd(b, p, end, 'false');
    else if (c === 0x6e) p = literalEnd(b, p, end, 'null');
    else p = numberEnd(b, p, end);
    if (p < 0) return false;
    // After a value: close what ends here, then find the next value.
    for (;;) {
      if (open === 0) return skipBlank(b, p, end) === end;
      p = skipBlank(b, p, end);
      if (p >= end) return false;
      const close = closers[open - 1];
      const d = b[p];
      if (d === close) {
        open--;
        p++;
        continue;
      }
      if (d !== 0x2c) return false;
      p = skipBlank(b, p + 1, end);
      if (close === CLOSE_OBJECT) {
        p = memberValue(b, p, end);
        if (p < 0) return false;
      }
      break;
    }
  }
}

/** `p` at a member's key; where its value starts, or -1. */
function memberValue(b: Buffer, p: number, end: number): number {
  if (p >= end || b[p] !== QUOTE) return -1;
  p = stringEnd(b, p + 1, end);
  if (p < 0) return -1;
  p = skipBlank(b, p, end);
  if (p >= end || b[p] !== 0x3a) return -1;
  return skipBlank(b, p + 1, end);
}
