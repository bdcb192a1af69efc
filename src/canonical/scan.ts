/**
 * A validating JSON scanner over UTF-8 bytes that finds where values start and end
 * without building them. Records are mostly long strings, so string bodies are
 * skipped with `indexOf` (memchr) and only the bytes between strings are examined;
 * what string bodies may not hold (invalid UTF-8, raw control characters, bad escapes,
 * lone surrogates) is checked by `checkTextRules`, a separate pass that is nearly free
 * on the text recorders write. Together they accept exactly what Python's orjson loads:
 * a line orjson rejects is a damaged line for every command.
 */
import { isUtf8 } from 'node:buffer';
import { formatBytes } from '../format.js';

/**
 * A text that is not strict JSON. Thrown for every damaged line and for every cut JSON value a
 * span attribute holds (thousands in a large OTLP file): it carries no stack trace, whose
 * capture cost more than the parse that failed, and none is ever shown for what a user feeds in.
 */
export class JsonSyntaxError extends Error {
  readonly position: number;
  constructor(message: string, position: number) {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      super(`${message} at byte ${position}`);
    } finally {
      Error.stackTraceLimit = limit;
    }
    this.position = position;
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Deepest nesting of arrays and objects a JSON text may have (the outermost container is
 * depth 1). orjson refuses deeper texts since 3.9.15 ("Recursion limit reached"); the
 * recorder cannot write them either (orjson.dumps stops at 255). Every walker after the
 * scan may recurse, since nothing deeper than this gets past it.
 */
export const MAX_DEPTH = 1024;

/** Why a text starting with a byte order mark is refused (orjson: "byte order mark (BOM) is not supported"). */
export const BOM_REASON = 'starts with a byte order mark (BOM), which strict JSON parsers refuse: save the file as UTF-8 without BOM';

/**
 * What a line that is not JSON in UTF-8 may be instead: UTF-8 behind a byte order mark (named
 * as the BOM, not as the parser's "invalid number at byte 0"), zero bytes a crash left, or text
 * saved as UTF-16 (Windows PowerShell's `>` writes it), whose first line starts with the byte
 * order mark FF FE or FE FF and whose ASCII characters each sit beside a NUL byte: `reason`,
 * with a hint when the line looks so. Every reader of lines names a refused line through here.
 */
export function withEncodingHint(reason: string, b: Uint8Array): string {
  if (startsWithBom(b)) return BOM_REASON;
  // Text in UTF-16 has no two zero bytes in a row before its first character; a crash or a full
  // disk leaves runs of them where a record was being written.
  let zeros = 0;
  while (zeros < b.length && b[zeros] === 0) zeros++;
  if (zeros >= 2) {
    return `${reason}: the line ${zeros === b.length ? 'is' : 'starts with'} ${zeros} zero bytes, as a crash or a full disk leaves where a record was being written; the rest of the file is read`;
  }
  const bom = b.length >= 2 && ((b[0] === 0xff && b[1] === 0xfe) || (b[0] === 0xfe && b[1] === 0xff));
  let nul = 0;
  const checked = Math.min(b.length, 64);
  for (let i = 0; i < checked; i++) if (b[i] === 0) nul++;
  return bom || (checked > 0 && nul * 3 >= checked) ? `${reason}: the file looks UTF-16, not UTF-8 (as Windows PowerShell's > writes it): save it as UTF-8` : reason;
}

export function startsWithBom(b: Uint8Array): boolean {
  return b.length >= 3 && b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf;
}

export function isWhitespace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

export function skipWhitespace(b: Uint8Array, p: number, end: number): number {
  while (p < end && isWhitespace(b[p])) p++;
  return p;
}

/** Short strings are cheaper to walk in JavaScript than to hand to a native `indexOf` call. */
const INLINE_SCAN_BYTES = 64;

/** `p` is at the opening quote; returns the index just past the closing quote. */
export function skipString(b: Buffer, p: number, end: number): number {
  let q = p + 1;
  const inlineLimit = Math.min(end, q + INLINE_SCAN_BYTES);
  while (q < inlineLimit) {
    const c = b[q];
    if (c === QUOTE) return q + 1;
    q += c === BACKSLASH ? 2 : 1;
  }
  q--;
  for (;;) {
    q = b.indexOf(QUOTE, q + 1);
    if (q === -1 || q >= end) throw new JsonSyntaxError('unterminated string', p);
    // A quote is escaped when an odd number of backslashes precede it.
    let k = q - 1;
    while (b[k] === BACKSLASH) k--;
    if ((q - 1 - k) % 2 === 0) return q + 1;
  }
}

/**
 * Whether the string at [p, stringEnd) holds any escape (so its raw bytes are not its text).
 * The search stops at the string's end: `indexOf` alone would run on to the next backslash
 * of the line, for every key and field of a record, about seven times the line's length each.
 */
export function stringHasEscape(b: Buffer, p: number, stringEnd: number): boolean {
  const last = stringEnd - 1;
  if (last - p <= INLINE_SCAN_BYTES) {
    for (let i = p + 1; i < last; i++) if (b[i] === BACKSLASH) return true;
    return false;
  }
  return b.subarray(p + 1, last).indexOf(BACKSLASH) !== -1;
}

/** Without an exponent, a number needs 309 digits to overflow a double. */
const MAX_PLAIN_NUMBER_LENGTH = 308;

function skipNumber(b: Buffer, p: number, end: number): number {
  const start = p;
  if (b[p] === 0x2d) p++;
  if (b[p] === 0x30) p++;
  else if (b[p] >= 0x31 && b[p] <= 0x39) while (p < end && b[p] >= 0x30 && b[p] <= 0x39) p++;
  else throw new JsonSyntaxError('invalid number', start);
  const fraction = b[p] === 0x2e;
  if (fraction) {
    p++;
    const digits = p;
    while (p < end && b[p] >= 0x30 && b[p] <= 0x39) p++;
    if (p === digits) throw new JsonSyntaxError('invalid number', start);
  }
  let exponent = false;
  if (b[p] === 0x65 || b[p] === 0x45) {
    exponent = true;
    p++;
    if (b[p] === 0x2b || b[p] === 0x2d) p++;
    const digits = p;
    while (p < end && b[p] >= 0x30 && b[p] <= 0x39) p++;
    if (p === digits) throw new JsonSyntaxError('invalid number', start);
  }
  if (p > end) throw new JsonSyntaxError('truncated number', start);
  // orjson refuses a number that is infinite as a double; only an exponent or 309 digits get there.
  if ((exponent || p - start > MAX_PLAIN_NUMBER_LENGTH) && !Number.isFinite(Number(b.toString('latin1', start, p)))) {
    throw new JsonSyntaxError('number too large for a double', start);
  }
  return p;
}

function skipLiteral(b: Buffer, p: number, end: number, word: string): number {
  if (p + word.length > end) throw new JsonSyntaxError('truncated literal', p);
  for (let i = 0; i < word.length; i++) {
    if (b[p + i] !== word.charCodeAt(i)) throw new JsonSyntaxError('invalid literal', p);
  }
  return p + word.length;
}

/** A string, number or literal at `p`; returns the index just past it. */
function skipScalar(b: Buffer, p: number, end: number): number {
  if (p >= end) throw new JsonSyntaxError('unexpected end of input', p);
  switch (b[p]) {
    case QUOTE:
      return skipString(b, p, end);
    case 0x74:
      return skipLiteral(b, p, end, 'true');
    case 0x66:
      return skipLiteral(b, p, end, 'false');
    case 0x6e:
      return skipLiteral(b, p, end, 'null');
    default:
      return skipNumber(b, p, end);
  }
}

/**
 * `p` must be at the first byte of a value (no leading whitespace); returns the index just
 * past it. `outerDepth` is how many containers already enclose the value.
 */
export function skipValue(b: Buffer, p: number, end: number, outerDepth = 0): number {
  const c = b[p];
  if (p < end && (c === 0x7b || c === 0x5b)) return skipContainer(b, p, end, outerDepth);
  return skipScalar(b, p, end);
}

/** Closing byte of each open container of `skipContainer`, which never nests. */
const closers = new Uint8Array(MAX_DEPTH + 1);

/** `p` at an object key's opening quote; returns where its value starts. */
function skipKey(b: Buffer, p: number, end: number): number {
  if (b[p] !== QUOTE || p >= end) throw new JsonSyntaxError('expected object key', p);
  p = skipWhitespace(b, skipString(b, p, end), end);
  if (b[p] !== 0x3a) throw new JsonSyntaxError("expected ':'", p);
  return skipWhitespace(b, p + 1, end);
}

/**
 * Where the last element of the last array `skipValue` skipped whole starts and ends (-1 for
 * an empty array or another value), and where that container starts (-1 until one is skipped;
 * a caller may reset it): a record's completion is its messages' last element, which the
 * quality stages parse, and finding it again cost a second walk over every message (9% of
 * `dedupe`).
 */
export const lastSkippedElement = { container: -1, start: -1, end: -1 };

/**
 * Iterative, so no nesting can exhaust the stack: a text nested deeper than MAX_DEPTH is
 * refused, as orjson refuses it.
 */
function skipContainer(b: Buffer, p: number, end: number, outerDepth: number): number {
  const container = p;
  let open = 0;
  // The outermost container's element (or member value) at hand.
  let elementStart = -1;
  let elementEnd = -1;
  for (;;) {
    // `p` is at the start of a value.
    const c = b[p];
    if (p < end && (c === 0x7b || c === 0x5b)) {
      if (outerDepth + open >= MAX_DEPTH) throw new JsonSyntaxError(`nested deeper than ${MAX_DEPTH} levels`, p);
      // '{' + 2 is '}', '[' + 2 is ']'.
      const close = c + 2;
      closers[open++] = close;
      p = skipWhitespace(b, p + 1, end);
      if (b[p] !== close || p >= end) {
        if (close === 0x7d) p = skipKey(b, p, end);
        if (open === 1) elementStart = p;
        continue;
      }
      open--;
      p++;
    } else {
      p = skipScalar(b, p, end);
    }
    // After a value: close what ends here, then move on to the next value.
    for (;;) {
      if (open === 0) {
        const array = b[p - 1] === 0x5d && elementStart !== -1;
        lastSkippedElement.container = container;
        lastSkippedElement.start = array ? elementStart : -1;
        lastSkippedElement.end = array ? elementEnd : -1;
        return p;
      }
      if (open === 1) elementEnd = p;
      p = skipWhitespace(b, p, end);
      if (p >= end) throw new JsonSyntaxError('unexpected end of input', p);
      const close = closers[open - 1];
      if (b[p] === close) {
        open--;
        p++;
        continue;
      }
      if (b[p] !== 0x2c) throw new JsonSyntaxError(`expected ',' or '${String.fromCharCode(close)}'`, p);
      p = skipWhitespace(b, p + 1, end);
      if (close === 0x7d) p = skipKey(b, p, end);
      if (open === 1) elementStart = p;
      break;
    }
  }
}

/** Throws unless [start, end) is exactly one JSON value (with whitespace around) that orjson loads. */
export function checkJsonText(b: Buffer, start = 0, end = b.length): void {
  checkTextRules(b, start, end);
  const p = skipWhitespace(b, start, end);
  const valueEnd = skipValue(b, p, end);
  const after = skipWhitespace(b, valueEnd, end);
  if (after !== end) throw new JsonSyntaxError('text after the JSON value', after);
}

/**
 * A text longer than a JavaScript string may be (2^29 - 24 UTF-16 units, about 536 MB):
 * a record orjson loads may hold one (a tool's output, an image as base64), and is no
 * damaged line, but what needs it as a string (a message to export, `--grep`, the privacy
 * scan) cannot have it. Each says so for that record and goes on.
 */
export class TextTooLongError extends Error {
  constructor(readonly bytes: number | null) {
    super(`a text${bytes !== null ? ` of ${formatBytes(bytes)}` : ''} in it is longer than traces can hold as a string (about 536 MB of text, JavaScript's limit)`);
  }
}

/** The error as a TextTooLongError when it is V8 refusing to make a string that long, else null. */
export function textTooLong(error: unknown, bytes: number | null = null): TextTooLongError | null {
  if (error instanceof TextTooLongError) return error;
  // Node's Buffer#toString says ERR_STRING_TOO_LONG; V8 itself (JSON.stringify, concatenation) a RangeError.
  const tooLong = (error as { code?: unknown } | null)?.code === 'ERR_STRING_TOO_LONG' || (error instanceof RangeError && error.message === 'Invalid string length');
  if (tooLong) return new TextTooLongError(bytes);
  return null;
}

/**
 * What `work` returns, or the TextTooLongError it met (a stage that needs a text as a string
 * drops the record and says why); any other error is thrown.
 */
export function unlessTooLong<T>(work: () => T): T | TextTooLongError {
  try {
    return work();
  } catch (error) {
    const tooLong = textTooLong(error);
    if (tooLong === null) throw error;
    return tooLong;
  }
}

/** `TRACES_TEST_MAX_TEXT=<units>`: a lower limit than V8's, so tests reach the too-long path without half a gigabyte. */
const TEST_MAX_TEXT = Number(process.env.TRACES_TEST_MAX_TEXT ?? Infinity);
/** A token of fewer bytes decodes to fewer UTF-16 units, so it cannot be too long: only longer ones take the checked path. */
export const CHECKED_FROM_BYTES = Math.min(2 ** 26, TEST_MAX_TEXT);

/** Decodes a string token's text; `p` at the opening quote, `stringEnd` past the closing quote. */
export function decodeString(b: Buffer, p: number, stringEnd: number): string {
  return stringEnd - p > CHECKED_FROM_BYTES ? decodeLongString(b, p, stringEnd) : decodeToken(b, p, stringEnd);
}

function decodeToken(b: Buffer, p: number, stringEnd: number): string {
  if (!stringHasEscape(b, p, stringEnd)) return b.toString('utf8', p + 1, stringEnd - 1);
  return JSON.parse(b.toString('utf8', p, stringEnd)) as string;
}

/** `decodeToken` for a token long enough that V8 may refuse its text: the refusal becomes a TextTooLongError. */
function decodeLongString(b: Buffer, p: number, stringEnd: number): string {
  let text: string;
  try {
    text = decodeToken(b, p, stringEnd);
  } catch (error) {
    throw textTooLong(error, stringEnd - p) ?? error;
  }
  if (text.length > TEST_MAX_TEXT) throw new TextTooLongError(stringEnd - p);
  return text;
}

/**
 * Calls `visit` for each member of the object at `p`, giving the key's token range and
 * the value's range. Returns the index just past the object.
 */
export function forEachMember(
  b: Buffer,
  p: number,
  end: number,
  visit: (keyStart: number, keyEnd: number, valueStart: number, valueEnd: number) => void,
  /** Nesting depth of this object (1 for a whole line), so its values are held to MAX_DEPTH. */
  depth = 1,
  /**
   * Reads a member's value instead of the validating skip, when it wants the value built: the
   * value's end, or -1 to have it skipped. It must refuse all the skip refuses (`parseCheckedValue`).
   */
  readValue?: (keyStart: number, keyEnd: number, valueStart: number, depth: number) => number,
): number {
  if (b[p] !== 0x7b) throw new JsonSyntaxError('expected an object', p);
  p = skipWhitespace(b, p + 1, end);
  if (b[p] === 0x7d) return p + 1;
  for (;;) {
    if (b[p] !== QUOTE) throw new JsonSyntaxError('expected object key', p);
    const keyStart = p;
    const keyEnd = skipString(b, p, end);
    p = skipWhitespace(b, keyEnd, end);
    if (b[p] !== 0x3a) throw new JsonSyntaxError("expected ':'", p);
    const valueStart = skipWhitespace(b, p + 1, end);
    const read = readValue === undefined ? -1 : readValue(keyStart, keyEnd, valueStart, depth);
    const valueEnd = read !== -1 ? read : skipValue(b, valueStart, end, depth);
    visit(keyStart, keyEnd, valueStart, valueEnd);
    p = skipWhitespace(b, valueEnd, end);
    if (p >= end) throw new JsonSyntaxError('unexpected end of input', p);
    if (b[p] === 0x7d) return p + 1;
    if (b[p] !== 0x2c) throw new JsonSyntaxError("expected ',' or '}'", p);
    p = skipWhitespace(b, p + 1, end);
  }
}

/** Calls `visit` with the range of each element of the array at `p`; returns the index past it. */
export function forEachElement(
  b: Buffer,
  p: number,
  end: number,
  visit: (valueStart: number, valueEnd: number) => void,
  depth = 1,
): number {
  if (b[p] !== 0x5b) throw new JsonSyntaxError('expected an array', p);
  p = skipWhitespace(b, p + 1, end);
  if (b[p] === 0x5d) return p + 1;
  for (;;) {
    const valueEnd = skipValue(b, p, end, depth);
    visit(p, valueEnd);
    p = skipWhitespace(b, valueEnd, end);
    if (p >= end) throw new JsonSyntaxError('unexpected end of input', p);
    if (b[p] === 0x5d) return p + 1;
    if (b[p] !== 0x2c) throw new JsonSyntaxError("expected ',' or ']'", p);
    p = skipWhitespace(b, p + 1, end);
  }
}

/**
 * Recognises a fixed set of object keys straight from their bytes, so walking an object
 * costs no string decoding per key. Keys with escapes are decoded first.
 */
export class KeyMatcher {
  /** The names by UTF-8 length (a dense array: indexing beats a map lookup per key). */
  private readonly byLength: { bytes: Buffer; index: number }[][] = [];
  private readonly byName = new Map<string, number>();

  constructor(names: readonly string[]) {
    names.forEach((name, index) => {
      const bytes = Buffer.from(name, 'utf8');
      // A raw match then proves the key has no escape: see `match`.
      if (bytes.includes(BACKSLASH) || bytes.includes(QUOTE)) throw new Error(`KeyMatcher: ${name} needs escaping in JSON`);
      while (this.byLength.length <= bytes.length) this.byLength.push([]);
      this.byLength[bytes.length].push({ bytes, index });
      this.byName.set(name, index);
    });
  }

  /** Index of the key token at [keyStart, keyEnd) (quotes included), or -1. */
  match(b: Buffer, keyStart: number, keyEnd: number): number {
    const length = keyEnd - keyStart - 2;
    // Bytes equal to a name's hold no backslash, so they are that name: no escape check first.
    if (length < this.byLength.length) {
      outer: for (const { bytes, index } of this.byLength[length]) {
        for (let i = 0, j = keyStart + 1; i < length; i++, j++) if (bytes[i] !== b[j]) continue outer;
        return index;
      }
    }
    // A name written with escapes (`"st\u0061tus"`) has other bytes.
    if (!stringHasEscape(b, keyStart, keyEnd)) return -1;
    return this.byName.get(decodeString(b, keyStart, keyEnd)) ?? -1;
  }
}

/** Bytes that may follow a backslash as they stand: `" \ / b f n r t`. (`u` needs its digits checked.) */
export const PLAIN_ESCAPE = new Uint8Array(256);
for (const c of '"\\/bfnrt') PLAIN_ESCAPE[c.charCodeAt(0)] = 1;

/** `0x80808080` as an int32, so the word tests below stay in int32 arithmetic. */
const HIGH_BITS = 0x80808080 | 0;

/**
 * Whether [start, end) holds a byte below 0x20, eight bytes at a time (the "has less than"
 * word test). JSON allows none in strings, and only TAB and CR (LF ends the line) between
 * tokens, which recorders never write: nearly every line answers no.
 */
function hasControlByte(b: Buffer, start: number, end: number): boolean {
  const base = b.byteOffset;
  let i = start;
  for (; i < end && ((base + i) & 7) !== 0; i++) if (b[i] < 0x20) return true;
  if (end - i >= 8) {
    const count = ((end - i) >> 3) << 1;
    const words = new Int32Array(b.buffer, base + i, count);
    for (let k = 0; k < count; k += 2) {
      const w = words[k];
      const v = words[k + 1];
      if (((((w - 0x20202020) | 0) & ~w) | (((v - 0x20202020) | 0) & ~v)) & HIGH_BITS) return true;
    }
    i += count << 2;
  }
  for (; i < end; i++) if (b[i] < 0x20) return true;
  return false;
}

/** Whether some escape in [start, end) is not one of the plain two-byte ones (`\u` included). */
function hasUnusualEscape(b: Buffer, start: number, end: number): boolean {
  for (let k = b.indexOf(BACKSLASH, start); k !== -1 && k < end; k = b.indexOf(BACKSLASH, k + 2)) {
    if (PLAIN_ESCAPE[b[k + 1]] !== 1) return true;
  }
  return false;
}

function hexDigit(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const lower = c | 0x20;
  if (lower >= 0x61 && lower <= 0x66) return lower - 0x57;
  return -1;
}

/** The code unit of the four hex digits at `p`, or -1. */
export function hexUnit(b: Uint8Array, p: number, end: number): number {
  if (p + 4 > end) return -1;
  const d0 = hexDigit(b[p]);
  const d1 = hexDigit(b[p + 1]);
  const d2 = hexDigit(b[p + 2]);
  const d3 = hexDigit(b[p + 3]);
  if ((d0 | d1 | d2 | d3) < 0) return -1;
  return (d0 << 12) | (d1 << 8) | (d2 << 4) | d3;
}

/** The byte-by-byte check of string bodies; `b` is structurally valid JSON or will be refused for that. */
function checkStringBodies(b: Buffer, start: number, end: number): void {
  let inString = false;
  for (let i = start; i < end; i++) {
    const c = b[i];
    if (!inString) {
      if (c === QUOTE) inString = true;
      continue;
    }
    if (c === QUOTE) {
      inString = false;
      continue;
    }
    if (c < 0x20) {
      throw new JsonSyntaxError(`raw control character 0x${c.toString(16).padStart(2, '0')} in a string (JSON requires it escaped)`, i);
    }
    if (c !== BACKSLASH) continue;
    const e = b[i + 1];
    if (PLAIN_ESCAPE[e] === 1) {
      i++;
      continue;
    }
    if (e !== 0x75) throw new JsonSyntaxError('invalid escape in a string', i);
    const unit = hexUnit(b, i + 2, end);
    if (unit === -1) throw new JsonSyntaxError('invalid \\u escape in a string', i);
    if (unit >= 0xdc00 && unit <= 0xdfff) throw new JsonSyntaxError('lone surrogate escape (a low surrogate with no high one before it)', i);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const low = b[i + 6] === BACKSLASH && b[i + 7] === 0x75 ? hexUnit(b, i + 8, end) : -1;
      if (low < 0xdc00 || low > 0xdfff) throw new JsonSyntaxError('lone surrogate escape (a high surrogate with no low one after it)', i);
      i += 11;
      continue;
    }
    i += 5;
  }
}

/**
 * The rules the structural scan leaves to this pass, as orjson applies them: the text is
 * valid UTF-8 (no overlongs, no encoded surrogates, nothing cut short), and its strings
 * hold no raw control character, no unknown escape and no lone surrogate escape.
 */
export function checkTextRules(b: Buffer, start = 0, end = b.length): void {
  const whole = start === 0 && end === b.length;
  if (!isUtf8(whole ? b : b.subarray(start, end))) throw new JsonSyntaxError('invalid UTF-8', firstInvalidUtf8(b, start, end));
  // Exact when both answer no; when either says yes, the slow check decides.
  if (hasControlByte(b, start, end) || hasUnusualEscape(b, start, end)) checkStringBodies(b, start, end);
}

/** Where the UTF-8 of [start, end) first goes wrong, for the message (only called on invalid text). */
function firstInvalidUtf8(b: Buffer, start: number, end: number): number {
  let i = start;
  while (i < end) {
    const c = b[i];
    if (c < 0x80) {
      i++;
      continue;
    }
    // Sequence length, and the allowed range of the second byte (no overlongs, no surrogates, nothing past U+10FFFF).
    let n: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) n = 2;
    else if (c >= 0xe0 && c <= 0xef) {
      n = 3;
      if (c === 0xe0) lo = 0xa0;
      if (c === 0xed) hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      n = 4;
      if (c === 0xf0) lo = 0x90;
      if (c === 0xf4) hi = 0x8f;
    } else return i;
    if (i + n > end || b[i + 1] < lo || b[i + 1] > hi) return i;
    for (let k = 2; k < n; k++) if ((b[i + k] & 0xc0) !== 0x80) return i;
    i += n;
  }
  return end;
}
