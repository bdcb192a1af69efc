/**
 * A validating JSON scanner over UTF-8 bytes that finds where values start and end
 * without building them. Records are mostly long strings, so string bodies are
 * skipped with `indexOf` (memchr) and only the bytes between strings are examined.
 */

export class JsonSyntaxError extends Error {
  constructor(
    message: string,
    readonly position: number,
  ) {
    super(`${message} at byte ${position}`);
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

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

/** Whether the string at [p, stringEnd) holds any escape (so its raw bytes are not its text). */
export function stringHasEscape(b: Buffer, p: number, stringEnd: number): boolean {
  const k = b.indexOf(BACKSLASH, p + 1);
  return k !== -1 && k < stringEnd - 1;
}

function skipNumber(b: Uint8Array, p: number, end: number): number {
  const start = p;
  if (b[p] === 0x2d) p++;
  if (b[p] === 0x30) p++;
  else if (b[p] >= 0x31 && b[p] <= 0x39) while (p < end && b[p] >= 0x30 && b[p] <= 0x39) p++;
  else throw new JsonSyntaxError('invalid number', start);
  if (b[p] === 0x2e) {
    p++;
    const digits = p;
    while (p < end && b[p] >= 0x30 && b[p] <= 0x39) p++;
    if (p === digits) throw new JsonSyntaxError('invalid number', start);
  }
  if (b[p] === 0x65 || b[p] === 0x45) {
    p++;
    if (b[p] === 0x2b || b[p] === 0x2d) p++;
    const digits = p;
    while (p < end && b[p] >= 0x30 && b[p] <= 0x39) p++;
    if (p === digits) throw new JsonSyntaxError('invalid number', start);
  }
  if (p > end) throw new JsonSyntaxError('truncated number', start);
  return p;
}

function skipLiteral(b: Uint8Array, p: number, end: number, word: string): number {
  if (p + word.length > end) throw new JsonSyntaxError('truncated literal', p);
  for (let i = 0; i < word.length; i++) {
    if (b[p + i] !== word.charCodeAt(i)) throw new JsonSyntaxError('invalid literal', p);
  }
  return p + word.length;
}

/** `p` must be at the first byte of a value (no leading whitespace); returns the index just past it. */
export function skipValue(b: Buffer, p: number, end: number): number {
  if (p >= end) throw new JsonSyntaxError('unexpected end of input', p);
  const c = b[p];
  switch (c) {
    case QUOTE:
      return skipString(b, p, end);
    case 0x7b: // {
      return skipContainer(b, p, end, true);
    case 0x5b: // [
      return skipContainer(b, p, end, false);
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

function skipContainer(b: Buffer, p: number, end: number, isObject: boolean): number {
  const close = isObject ? 0x7d : 0x5d;
  p = skipWhitespace(b, p + 1, end);
  if (b[p] === close) return p + 1;
  for (;;) {
    if (isObject) {
      if (b[p] !== QUOTE) throw new JsonSyntaxError('expected object key', p);
      p = skipWhitespace(b, skipString(b, p, end), end);
      if (b[p] !== 0x3a) throw new JsonSyntaxError("expected ':'", p);
      p = skipWhitespace(b, p + 1, end);
    }
    p = skipWhitespace(b, skipValue(b, p, end), end);
    if (p >= end) throw new JsonSyntaxError('unexpected end of input', p);
    if (b[p] === close) return p + 1;
    if (b[p] !== 0x2c) throw new JsonSyntaxError(`expected ',' or '${String.fromCharCode(close)}'`, p);
    p = skipWhitespace(b, p + 1, end);
  }
}

/** Decodes a string token's text; `p` at the opening quote, `stringEnd` past the closing quote. */
export function decodeString(b: Buffer, p: number, stringEnd: number): string {
  if (!stringHasEscape(b, p, stringEnd)) return b.toString('utf8', p + 1, stringEnd - 1);
  return JSON.parse(b.toString('utf8', p, stringEnd)) as string;
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
    const valueEnd = skipValue(b, valueStart, end);
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
): number {
  if (b[p] !== 0x5b) throw new JsonSyntaxError('expected an array', p);
  p = skipWhitespace(b, p + 1, end);
  if (b[p] === 0x5d) return p + 1;
  for (;;) {
    const valueEnd = skipValue(b, p, end);
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
  private readonly byLength = new Map<number, { bytes: Buffer; index: number }[]>();
  private readonly byName = new Map<string, number>();

  constructor(names: readonly string[]) {
    names.forEach((name, index) => {
      const bytes = Buffer.from(name, 'utf8');
      const list = this.byLength.get(bytes.length) ?? [];
      list.push({ bytes, index });
      this.byLength.set(bytes.length, list);
      this.byName.set(name, index);
    });
  }

  /** Index of the key token at [keyStart, keyEnd) (quotes included), or -1. */
  match(b: Buffer, keyStart: number, keyEnd: number): number {
    if (stringHasEscape(b, keyStart, keyEnd)) return this.byName.get(decodeString(b, keyStart, keyEnd)) ?? -1;
    const candidates = this.byLength.get(keyEnd - keyStart - 2);
    if (candidates === undefined) return -1;
    outer: for (const { bytes, index } of candidates) {
      for (let i = 0, j = keyStart + 1; i < bytes.length; i++, j++) if (bytes[i] !== b[j]) continue outer;
      return index;
    }
    return -1;
  }
}
