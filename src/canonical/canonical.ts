/**
 * Canonical JSON exactly as Python's `orjson.dumps(value, option=OPT_SORT_KEYS)` writes it,
 * which is what Synalinks hashes. Working from the source bytes keeps every number's text
 * verbatim (`1.0` stays `1.0`, big integers stay exact), which `JSON.parse` cannot do.
 *
 * One pass: each value is validated and written as it is read; an object whose keys were
 * out of order has its already-written members moved into place afterwards, which costs
 * a memcpy instead of a second scan.
 */
import { createHash } from 'node:crypto';
import { ByteSink } from './byte-sink.js';
import { decodeString, isWhitespace, JsonSyntaxError, skipString, skipValue, skipWhitespace, stringHasEscape } from './scan.js';

const QUOTE = 0x22;

/**
 * Members already written to the sink, as rows of one stack shared by nested objects (an
 * object's rows sit above its parent's, and are popped when it ends): where each member's
 * key and whole `"key":value` text sit. No object per member: canonical writing runs over
 * every message of every record.
 */
const START = 0;
const END = 1;
const KEY_START = 2;
const KEY_END = 3;
let rows = new Int32Array(4 * 256);
let top = 0;
/** Per row, the key's decoded UTF-8 when its canonical text holds escapes (so bytes would sort wrongly). */
const decodedKeys: (Buffer | null)[] = [];

function pushRow(): number {
  if ((top + 1) * 4 > rows.length) {
    const grown = new Int32Array(rows.length * 2);
    grown.set(rows);
    rows = grown;
  }
  return top++;
}

/** UTF-8 byte order is code point order, which is how orjson sorts keys. */
function compareKeys(sink: Buffer, x: number, y: number): number {
  const xd = decodedKeys[x];
  const yd = decodedKeys[y];
  if (xd !== null || yd !== null) {
    const xs = xd ?? sink.subarray(rows[x * 4 + KEY_START], rows[x * 4 + KEY_END]);
    const ys = yd ?? sink.subarray(rows[y * 4 + KEY_START], rows[y * 4 + KEY_END]);
    return Buffer.compare(xs, ys);
  }
  const xStart = rows[x * 4 + KEY_START];
  const yStart = rows[y * 4 + KEY_START];
  const xl = rows[x * 4 + KEY_END] - xStart;
  const yl = rows[y * 4 + KEY_END] - yStart;
  const n = Math.min(xl, yl);
  for (let i = 0; i < n; i++) {
    const d = sink[xStart + i] - sink[yStart + i];
    if (d !== 0) return d;
  }
  return xl - yl;
}

function isLowerHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66);
}

/**
 * Whether every escape in the string token is the one orjson writes: `\" \\ \n \r \t \b \f`,
 * and `\u00xx` (lowercase) for the other control characters. Recorded text nearly always
 * is, so it can be copied as it stands instead of decoded and re-encoded.
 */
function escapesAreCanonical(b: Buffer, start: number, end: number): boolean {
  for (let k = b.indexOf(0x5c, start + 1); k !== -1 && k < end - 1; k = b.indexOf(0x5c, k)) {
    const c = b[k + 1];
    if (c === 0x22 || c === 0x5c || c === 0x6e || c === 0x72 || c === 0x74 || c === 0x62 || c === 0x66) {
      k += 2;
      continue;
    }
    if (c !== 0x75 || b[k + 2] !== 0x30 || b[k + 3] !== 0x30 || (b[k + 4] !== 0x30 && b[k + 4] !== 0x31) || !isLowerHex(b[k + 5])) return false;
    const code = (b[k + 4] - 0x30) * 16 + (b[k + 5] <= 0x39 ? b[k + 5] - 0x30 : b[k + 5] - 0x57);
    // These have the short forms above, which is what orjson writes.
    if (code === 0x08 || code === 0x09 || code === 0x0a || code === 0x0c || code === 0x0d) return false;
    k += 6;
  }
  return true;
}

function writeString(b: Buffer, start: number, end: number, out: ByteSink): boolean {
  if (!stringHasEscape(b, start, end)) {
    out.copy(b, start, end);
    return false;
  }
  if (escapesAreCanonical(b, start, end)) {
    out.copy(b, start, end);
    return true;
  }
  // JSON.stringify escapes exactly what orjson escapes for well-formed strings.
  out.text(JSON.stringify(decodeString(b, start, end)));
  return true;
}

function writeObject(b: Buffer, p: number, end: number, out: ByteSink): number {
  out.byte(0x7b);
  const base = top;
  let sorted = true;
  p = skipWhitespace(b, p + 1, end);
  if (b[p] === 0x7d) {
    out.byte(0x7d);
    return p + 1;
  }
  for (;;) {
    if (b[p] !== QUOTE) throw new JsonSyntaxError('expected object key', p);
    if (top > base) out.byte(0x2c);
    const start = out.length;
    const keyTokenEnd = skipString(b, p, end);
    const escaped = writeString(b, p, keyTokenEnd, out);
    const row = pushRow();
    rows[row * 4 + START] = start;
    rows[row * 4 + KEY_START] = start + 1;
    rows[row * 4 + KEY_END] = out.length - 1;
    decodedKeys[row] = escaped ? Buffer.from(decodeString(b, p, keyTokenEnd), 'utf8') : null;
    p = skipWhitespace(b, keyTokenEnd, end);
    if (b[p] !== 0x3a) throw new JsonSyntaxError("expected ':'", p);
    out.byte(0x3a);
    p = writeValue(b, skipWhitespace(b, p + 1, end), end, out);
    // `rows` may have grown while the value was written: index it afresh.
    rows[row * 4 + END] = out.length;
    // A repeated key also takes the reordering path, which keeps only its last value.
    if (row > base && sorted && compareKeys(out.buffer, row - 1, row) >= 0) sorted = false;
    p = skipWhitespace(b, p, end);
    if (p >= end) throw new JsonSyntaxError('unexpected end of input', p);
    if (b[p] === 0x7d) break;
    if (b[p] !== 0x2c) throw new JsonSyntaxError("expected ',' or '}'", p);
    p = skipWhitespace(b, p + 1, end);
  }
  if (!sorted) reorder(out, base, top);
  top = base;
  out.byte(0x7d);
  return p + 1;
}

/** Scratch space for `reorder`, which never nests (inner objects finish before outer ones). */
let scratch = Buffer.allocUnsafe(1 << 16);

/** Reused by `reorder`: the rows in key order. */
let order = new Int32Array(64);

/** Reused by `reorder`: 1 where the member at that sorted position gives way to a later one with its key. */
let overridden = new Uint8Array(64);

function reorder(out: ByteSink, first: number, last: number): void {
  const count = last - first;
  const regionStart = rows[first * 4 + START];
  const regionLength = out.length - regionStart;
  if (scratch.length < regionLength) scratch = Buffer.allocUnsafe(Math.max(regionLength, scratch.length * 2));
  out.buffer.copy(scratch, 0, regionStart, out.length);
  sortRows(out.buffer, first, count);
  // A key given twice keeps its last value, as a Python dict (and so orjson) does; the sort
  // is stable, so of equal keys the last written comes last. Compared before being overwritten.
  if (overridden.length < count) overridden = new Uint8Array(Math.max(count, overridden.length * 2));
  for (let i = 0; i < count; i++) overridden[i] = i + 1 < count && compareKeys(out.buffer, order[i], order[i + 1]) === 0 ? 1 : 0;
  out.length = regionStart;
  let written = 0;
  for (let i = 0; i < count; i++) {
    if (overridden[i] === 1) continue;
    const row = order[i];
    if (written++ > 0) out.byte(0x2c);
    out.copy(scratch, rows[row * 4 + START] - regionStart, rows[row * 4 + END] - regionStart);
  }
}

/**
 * Rows [first, first + count) into `order` by key. Nearly every message object needs it
 * (`content` sorts before `role`): an insertion sort (stable, which `reorder` relies on for
 * repeated keys) in a reused array, with a stable built-in sort for big objects.
 */
function sortRows(buffer: Buffer, first: number, count: number): void {
  if (order.length < count) order = new Int32Array(Math.max(count, order.length * 2));
  if (count > 32) {
    const sorted = Array.from({ length: count }, (_, i) => first + i).sort((x, y) => compareKeys(buffer, x, y));
    order.set(sorted);
    return;
  }
  for (let k = 0; k < count; k++) {
    const row = first + k;
    let i = k;
    while (i > 0 && compareKeys(buffer, order[i - 1], row) > 0) {
      order[i] = order[i - 1];
      i--;
    }
    order[i] = row;
  }
}

function writeArrayValue(b: Buffer, p: number, end: number, out: ByteSink, dropLast: boolean, elementEnds?: number[], sourceSpans?: number[]): number {
  out.byte(0x5b);
  const contentStart = out.length;
  let lastElementStart = contentStart;
  p = skipWhitespace(b, p + 1, end);
  if (b[p] === 0x5d) {
    out.byte(0x5d);
    return p + 1;
  }
  for (let count = 0; ; count++) {
    lastElementStart = out.length;
    if (count > 0) out.byte(0x2c);
    const valueEnd = writeValue(b, p, end, out);
    sourceSpans?.push(p, valueEnd);
    p = skipWhitespace(b, valueEnd, end);
    elementEnds?.push(out.length);
    if (p >= end) throw new JsonSyntaxError('unexpected end of input', p);
    if (b[p] === 0x5d) break;
    if (b[p] !== 0x2c) throw new JsonSyntaxError("expected ',' or ']'", p);
    p = skipWhitespace(b, p + 1, end);
  }
  if (dropLast) out.length = lastElementStart;
  out.byte(0x5d);
  return p + 1;
}

/** Writes the canonical form of the value starting at `p`; returns the index just past it. */
function writeValue(b: Buffer, p: number, end: number, out: ByteSink): number {
  const c = b[p];
  if (c === QUOTE) {
    const stringEnd = skipString(b, p, end);
    writeString(b, p, stringEnd, out);
    return stringEnd;
  }
  if (c === 0x7b) return writeObject(b, p, end, out);
  if (c === 0x5b) return writeArrayValue(b, p, end, out, false);
  // Numbers and literals: the recorded text is the hashed text.
  const valueEnd = skipValue(b, p, end);
  out.copy(b, p, valueEnd);
  return valueEnd;
}

/** Writes the canonical form of the JSON value at [start, end) of `b` into `out`. */
export function writeCanonical(b: Buffer, start: number, end: number, out: ByteSink): void {
  // A syntax error thrown mid-object leaves rows behind.
  top = 0;
  writeValue(b, start, end, out);
}

/**
 * Writes the array at [start, end); with `dropLast`, as if its last element were absent.
 * `elementEnds` receives where each element's canonical text ends in `out`, `sourceSpans`
 * where each element starts and ends in `b` (two numbers per element).
 */
export function writeArray(b: Buffer, start: number, end: number, out: ByteSink, dropLast = false, elementEnds?: number[], sourceSpans?: number[]): void {
  if (b[start] !== 0x5b) throw new JsonSyntaxError('expected an array', start);
  top = 0;
  writeArrayValue(b, start, end, out, dropLast, elementEnds, sourceSpans);
}

export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** Canonical text of a JSON text, for tests and tools. */
export function canonicalize(json: string | Buffer): Buffer {
  const b = typeof json === 'string' ? Buffer.from(json, 'utf8') : json;
  const start = skipWhitespace(b, 0, b.length);
  const out = new ByteSink(b.length + 16);
  top = 0;
  const end = writeValue(b, start, b.length, out);
  for (let i = end; i < b.length; i++) if (!isWhitespace(b[i])) throw new JsonSyntaxError('text after the JSON value', i);
  return Buffer.from(out.view());
}

/**
 * Canonical text of a value already parsed into JavaScript (records rebuilt from other
 * recorders). Numbers parsed as `JsonNumber` keep their recorded text; plain JavaScript
 * numbers have none, and integral ones are written as integers.
 */
export function canonicalValueText(value: unknown): string {
  // A number parsed with its recorded text (JsonNumber) hashes as that text, as from the bytes.
  if (value instanceof String) return value.valueOf();
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'number' && !Number.isFinite(value)) return 'null';
    return JSON.stringify(value) ?? 'null';
  }
  if (Array.isArray(value)) return `[${value.map(canonicalValueText).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
  entries.sort(([a], [b]) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalValueText(v)}`).join(',')}}`;
}

export function canonicalValueHash(value: unknown): string {
  return sha256Hex(Buffer.from(canonicalValueText(value), 'utf8'));
}

export { JsonSyntaxError };
