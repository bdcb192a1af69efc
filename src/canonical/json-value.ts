/**
 * Record values as data, with every number's recorded text kept. `JSON.parse` turns
 * `18446744073709551615` into 18446744073709552000 and `153133.0` into 153133, and
 * `JSON.stringify` then writes the rounded value: an export would alter training data.
 * Here a number is a `JsonNumber` holding its text, and `writeJson` writes that text back
 * verbatim. This is the one parser of record values: the export, the hashes of rebuilt
 * records and the validator all read values through it.
 *
 * `JsonNumber` extends `String` so that it survives a structured clone (worker threads):
 * a clone arrives as a `String` object, which JSON parsing never produces otherwise, so
 * `isJsonNumber` accepts any `String` object as a number's text.
 */
import { CHECKED_FROM_BYTES, checkTextRules, decodeString, JsonSyntaxError, MAX_DEPTH, skipString, skipValue, skipWhitespace } from './scan.js';
import { setOwn } from '../own.js';
import { isPlainJson } from './plain-json.js';
import { escapeInJson } from './escape-in-json.js';

export class JsonNumber extends String {
  /** The number as JavaScript sees it (rounded): for arithmetic, never for writing. */
  toNumber(): number {
    return Number(this.valueOf());
  }
  /** Code that forgets `writeJson` still gets a number (rounded), not a string. */
  toJSON(): number {
    const n = this.toNumber();
    // `writeRecordJson` lets the native serializer write numbers whose text is what it prints.
    if (!Number.isFinite(n) || String(n) !== this.valueOf()) nativeTextDiffers = true;
    return n;
  }
}

/**
 * Set when the native serializer met a value it writes otherwise than `writeJson` does: a
 * number whose recorded text is not the one JavaScript prints (`1.0`, `1e5`, `-0`, digits past
 * a double), or a number's text that a structured clone made a plain `String`.
 */
let nativeTextDiffers = false;

// A cloned number's text (a plain String object) tells the native serializer's caller so. The
// text written is the one JSON.stringify writes for a String object without this method.
Object.defineProperty(String.prototype, 'toJSON', {
  value: function stringObjectToJson(this: String): string {
    if (!(this instanceof JsonNumber)) nativeTextDiffers = true;
    return this.valueOf();
  },
  writable: true,
  configurable: true,
  enumerable: false,
});

export function isJsonNumber(value: unknown): value is String {
  return value instanceof String;
}

/** A number's value whether it was parsed here (`JsonNumber`) or is a plain number; else null. */
export function numberValue(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (value instanceof String) {
    const n = Number(value.valueOf());
    return Number.isFinite(n) ? n : null;
  }
  return null;
}

/** A JSON object (not an array, not a number's text). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof String);
}

/** Whether a number's text is an integer as written (no fraction, no exponent). */
export function isIntegerText(text: string): boolean {
  return /^-?\d+$/.test(text);
}



/**
 * Builds the JSON value at [start, end) of `b`; numbers become `JsonNumber`. Iterative, so
 * nesting depth costs heap, not stack. The bytes are taken to be validated already (a record
 * line the scanner accepted, or `parseJsonText`).
 */
export function parseJson(b: Buffer, start: number, end: number): unknown {
  return parseAt(b, start, end, -1);
}

/**
 * The value starting at `start` (no white space before it) of a text whose bytes `checkTextRules`
 * accepted, held to everything `skipValue` holds it to: structure, literals, numbers, and
 * MAX_DEPTH counting the `outerDepth` containers around it (JsonSyntaxError). What lies after
 * the value is not read: `parsedEnd()` tells where it ends. One walk where a scan to validate
 * and a parse to build took two.
 */
export function parseCheckedValue(b: Buffer, start: number, end: number, outerDepth: number): unknown {
  return parseAt(b, start, end, outerDepth);
}

/** Just past the value the last `parseCheckedValue` built. */
export function parsedEnd(): number {
  return lastEnd;
}

let lastEnd = 0;

/** `outerDepth` -1: the bytes are validated already, depth included. */
function parseAt(b: Buffer, start: number, end: number, outerDepth: number): unknown {
  // The open containers and, for objects, the key being read: two plain arrays, no frame objects.
  const containers: (unknown[] | Record<string, unknown>)[] = [];
  const keys: (string | null)[] = [];
  let p = skipWhitespace(b, start, end);
  let value: unknown;
  for (;;) {
    // Read one value at p (containers open a frame and continue with their first member).
    if (p >= end) throw new JsonSyntaxError('unexpected end of input', p);
    const c = b[p];
    if (c === 0x7b || c === 0x5b) {
      if (outerDepth >= 0 && outerDepth + containers.length >= MAX_DEPTH) throw new JsonSyntaxError(`nested deeper than ${MAX_DEPTH} levels`, p);
      const isObject = c === 0x7b;
      const container = isObject ? {} : [];
      p = skipWhitespace(b, p + 1, end);
      if (b[p] === (isObject ? 0x7d : 0x5d)) {
        value = container;
        p++;
      } else {
        containers.push(container);
        keys.push(null);
        if (isObject) p = readKey(b, p, end, keys);
        continue;
      }
    } else if (c === 0x22) {
      const stringEnd = skipString(b, p, end);
      value = stringEnd - p - 2 <= MAX_KEPT_VALUE_BYTES ? keptText(b, p, stringEnd, valueTable) : decodeString(b, p, stringEnd);
      p = stringEnd;
    } else {
      const valueEnd = skipValue(b, p, end);
      if (c === 0x74) value = true;
      else if (c === 0x66) value = false;
      else if (c === 0x6e) value = null;
      else value = new JsonNumber(b.toString('latin1', p, valueEnd));
      p = valueEnd;
    }
    // Place the value and close every container it completes.
    for (;;) {
      const top = containers.length - 1;
      if (top < 0) {
        lastEnd = p;
        return value;
      }
      const container = containers[top];
      const isObject = !Array.isArray(container);
      // A recorded `__proto__` key is data.
      if (isObject) setOwn(container as Record<string, unknown>, keys[top]!, value);
      else (container as unknown[]).push(value);
      p = skipWhitespace(b, p, end);
      if (p >= end) throw new JsonSyntaxError('unexpected end of input', p);
      if (b[p] === 0x2c) {
        p = skipWhitespace(b, p + 1, end);
        if (isObject) p = readKey(b, p, end, keys);
        break;
      }
      if (b[p] !== (isObject ? 0x7d : 0x5d)) throw new JsonSyntaxError(`expected ',' or '${isObject ? '}' : ']'}'`, p);
      p++;
      value = container;
      containers.pop();
      keys.pop();
    }
  }
}

/**
 * Keys and short values repeat (role, content, tool_calls, function, arguments, user, …): a
 * short one is looked up by its recorded bytes (escapes and all: the same bytes decode to the
 * same text) in a small table instead of decoded anew, which also hands an object the same
 * key string each time (a keyed store of a string seen before is cheaper). Parsing the
 * exported examples of the 200 MB bench tree took about 40% less time.
 */
const TABLE_SLOTS = 256;
const MAX_KEPT_BYTES = 32;
const MAX_KEPT_VALUE_BYTES = 16;

interface KeptTexts {
  bytes: (Uint8Array | null)[];
  texts: string[];
}

const keptTable = (): KeptTexts => ({ bytes: new Array(TABLE_SLOTS).fill(null), texts: new Array(TABLE_SLOTS).fill('') });
const keyTable = keptTable();
/** Short string values (roles, types, tool names) apart: the ones that do not repeat (ids) would push keys out. */
const valueTable = keptTable();

function keptText(b: Buffer, p: number, stringEnd: number, table: KeptTexts): string {
  const first = p + 1;
  const last = stringEnd - 1;
  const length = last - first;
  if (length > MAX_KEPT_BYTES) return decodeString(b, p, stringEnd);
  let hash = 0x811c9dc5;
  for (let i = first; i < last; i++) hash = Math.imul(hash ^ b[i], 0x01000193);
  const slot = (hash ^ (hash >>> 16)) & (TABLE_SLOTS - 1);
  const kept = table.bytes[slot];
  if (kept !== null && kept.length === length) {
    let same = true;
    for (let i = 0; i < length; i++) {
      if (kept[i] !== b[first + i]) {
        same = false;
        break;
      }
    }
    if (same) return table.texts[slot];
  }
  const text = decodeString(b, p, stringEnd);
  table.bytes[slot] = Uint8Array.prototype.slice.call(b, first, last);
  table.texts[slot] = text;
  return text;
}

/** Reads `"key":` at p into the last of `keys`; returns where the value starts. */
function readKey(b: Buffer, p: number, end: number, keys: (string | null)[]): number {
  if (b[p] !== 0x22) throw new JsonSyntaxError('expected object key', p);
  const keyEnd = skipString(b, p, end);
  keys[keys.length - 1] = keptText(b, p, keyEnd, keyTable);
  p = skipWhitespace(b, keyEnd, end);
  if (b[p] !== 0x3a) throw new JsonSyntaxError("expected ':'", p);
  return skipWhitespace(b, p + 1, end);
}

/**
 * Parses a JSON text held to the same strict reading as a trace line (what orjson refuses,
 * nesting past MAX_DEPTH included, throws JsonSyntaxError); numbers become `JsonNumber`.
 */
export function parseJsonText(text: string | Buffer): unknown {
  const b = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  const native = parseNatively(text, b);
  return native !== NOT_NATIVE ? native : parseJsonBytesByWalk(b);
}

/**
 * `parseJsonText` by one walk that validates as it builds (parseCheckedValue), not a scan and
 * then a parse: what it falls back to, and the reference its tests compare it with.
 */
export function parseJsonBytesByWalk(b: Buffer): unknown {
  checkTextRules(b);
  const start = skipWhitespace(b, 0, b.length);
  const value = parseCheckedValue(b, start, b.length, 0);
  const after = skipWhitespace(b, parsedEnd(), b.length);
  if (after !== b.length) throw new JsonSyntaxError('text after the JSON value', after);
  return value;
}

const NOT_NATIVE = Symbol('not native');

/**
 * `parseJsonText` by the native parser, which builds the small objects OTLP spans are made of
 * several times faster than `parseAt`: the text is first held to the same rules by one pass
 * (`isPlainJson`, which accepts only what `parseAt` accepts), and the native parser is used
 * only when every number's text is the one JavaScript prints for its value, so that each
 * number becomes the same `JsonNumber` `parseAt` makes. Anything else (a refused text, so
 * that the error is `parseAt`'s own; a number such as `1.0`; a string with lone surrogates,
 * which its UTF-8 bytes do not keep; a text long enough to hit V8's string limit) gives
 * NOT_NATIVE and is parsed as before.
 */
function parseNatively(text: string | Buffer, b: Buffer): unknown {
  if (b.length > CHECKED_FROM_BYTES) return NOT_NATIVE;
  if (typeof text === 'string' && !(text as unknown as { isWellFormed(): boolean }).isWellFormed()) return NOT_NATIVE;
  if (!isPlainJson(b)) return NOT_NATIVE;
  return withNumberTexts(JSON.parse(typeof text === 'string' ? text : b.toString('utf8')));
}

/** The native parser's value with each number as the `JsonNumber` of its text (the text it prints, checked above). */
function withNumberTexts(value: unknown): unknown {
  if (typeof value === 'number') return new JsonNumber(String(value));
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (typeof item === 'number' || (typeof item === 'object' && item !== null)) value[i] = withNumberTexts(item);
    }
    return value;
  }
  const object = value as Record<string, unknown>;
  for (const key in object) {
    const item = object[key];
    if (typeof item === 'number') setOwn(object, key, new JsonNumber(String(item)));
    else if (typeof item === 'object' && item !== null) withNumberTexts(item);
  }
  return object;
}

/**
 * Compact JSON text, as `JSON.stringify` writes it, except that a `JsonNumber` is written as
 * its recorded text. `indent` pretty-prints as `JSON.stringify(value, null, indent)` does.
 */
export function writeJson(value: unknown, indent = 0): string {
  deepest = 0;
  return write(value, indent === 0 ? null : ' '.repeat(indent), '', 1) ?? 'null';
}

/**
 * The pretty JSON of `value` as it would stand inside a larger text at `margin`: lets a file
 * too large to be one string (past about 536 MB) be written a piece at a time.
 */
export function writeJsonAt(value: unknown, indent: number, margin: string): string {
  deepest = 0;
  return write(value, ' '.repeat(indent), margin, 1) ?? 'null';
}

/**
 * `writeJson(value)` for a record value (what parseJson gives, built into plain arrays and
 * objects): the same text, written by the native serializer (several times faster) when it
 * writes the same, else by `writeJson`. Not for objects with a `toJSON` of their own, which
 * the native serializer calls and `writeJson` does not. After it, `lastWrittenDepth` is the
 * depth or, below MAX_DEPTH, a bound on it (the containers the text opens).
 */
export function writeRecordJson(value: unknown): string {
  nativeTextDiffers = false;
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    // Nested past the stack, a BigInt, a cycle: writeJson says what it says of them.
    return writeJson(value);
  }
  if (text === undefined || nativeTextDiffers) return writeJson(value);
  const opened = containersOpened(text);
  if (opened >= MAX_DEPTH) return writeJson(value);
  deepest = opened;
  return text;
}

/**
 * Characters a line-splitting reader takes for line ends although JSON lets them stand raw in a
 * string: NEL (U+0085), LINE SEPARATOR (U+2028), PARAGRAPH SEPARATOR (U+2029). Python's
 * `str.splitlines()`, which NeMo AutoModel reads local JSONL files with, splits there.
 */
const LINE_BREAKING = /[\u0085\u2028\u2029]/g;

/**
 * JSON text as one JSONL line every reader takes whole: NEL, U+2028 and U+2029 written as
 * `\u` escapes (the same string to a JSON parser).
 */
export function jsonLine(text: string): string {
  return escapeInJson(text, LINE_BREAKING);
}

/** How many `{` and `[` the text holds (strings included), counted up to MAX_DEPTH: a bound on its depth. */
function containersOpened(text: string): number {
  let n = 0;
  for (let at = text.indexOf('{'); at !== -1 && n < MAX_DEPTH; at = text.indexOf('{', at + 1)) n++;
  for (let at = text.indexOf('['); at !== -1 && n < MAX_DEPTH; at = text.indexOf('[', at + 1)) n++;
  return n;
}

/** Nesting depth of the containers in the text the last `writeJson` wrote (0: none). */
let deepest = 0;

export function lastWrittenDepth(): number {
  return deepest;
}

function write(value: unknown, step: string | null, margin: string, depth: number): string | undefined {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? JSON.stringify(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      break;
    default:
      return undefined;
  }
  if (value instanceof String) return value.valueOf();
  if (depth > deepest) deepest = depth;
  const inner = step === null ? '' : margin + step;
  const open = step === null ? '' : `\n${inner}`;
  const comma = step === null ? ',' : `,\n${inner}`;
  const close = step === null ? '' : `\n${margin}`;
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    let out = '[' + open;
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += comma;
      out += write(value[i], step, inner, depth + 1) ?? 'null';
    }
    return out + close + ']';
  }
  let out = '';
  let first = true;
  for (const key in value) {
    if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
    const text = write((value as Record<string, unknown>)[key], step, inner, depth + 1);
    if (text === undefined) continue;
    out += (first ? '' : comma) + JSON.stringify(key) + (step === null ? ':' : ': ') + text;
    first = false;
  }
  return first ? '{}' : '{' + open + out + close + '}';
}
