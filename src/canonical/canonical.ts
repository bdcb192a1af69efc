/**
 * Canonical JSON exactly as Python's `orjson.dumps(value, option=OPT_SORT_KEYS)` writes it,
 * which is what Synalinks hashes. Working from the source bytes keeps every number's text
 * verbatim (`1.0` stays `1.0`, big integers stay exact), which `JSON.parse` cannot do.
 *
 * One pass. Most objects hold only strings, numbers and literals under plain keys (messages,
 * tool arguments, tool results): their members are located first and then copied once, in
 * key order, each `"key":value` in one copy when it needs no rewriting. Other objects are
 * written as they are read and their members moved into key order afterwards, which costs a
 * memcpy instead of a second scan. Native copies and searches cost about as much per call as
 * a JavaScript loop costs for a few dozen bytes, so the writer makes as few calls as it can.
 */
import crypto, { createHash } from 'node:crypto';
import { ByteSink } from './byte-sink.js';
import { decodedStringBytes, writeCanonicalString } from './string-escapes.js';
import { isWhitespace, JsonSyntaxError, skipString, skipValue, skipWhitespace } from './scan.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Where the next backslash is: one native search answers for every string before it, where
 * a search per string would scan to the end of the line each time a line has none. Valid for
 * `backslashBuffer` from `backslashFrom` on; reset by each entry point, as buffers get reused.
 */
let backslashBuffer: Buffer | null = null;
let backslashFrom = 0;
let backslashAt = 0;

function nextBackslash(b: Buffer, from: number): number {
  if (b !== backslashBuffer || from < backslashFrom || backslashAt < from) {
    const k = b.indexOf(BACKSLASH, from);
    backslashBuffer = b;
    backslashFrom = from;
    backslashAt = k === -1 ? b.length : k;
  }
  return backslashAt;
}

/** Whether the string token at [start, end) holds an escape. */
function hasEscape(b: Buffer, start: number, end: number): boolean {
  return nextBackslash(b, start + 1) < end - 1;
}

/**
 * Members of the objects being written, four numbers each, as a stack nested objects share:
 * while scanning a plain object, the recorded token ranges of key and value; once written,
 * where the whole `"key":value` text and the key's text sit in the sink. Typed, so that a
 * member costs no allocation.
 */
let members = new Int32Array(4 * 256);
let top = 0;
/** The decoded UTF-8 of a written key whose canonical text holds escapes (so its bytes would sort wrongly), by slot. */
const decodedKeys: (Buffer | null)[] = [];

function push(a: number, b: number, c: number, d: number): number {
  if ((top + 1) * 4 > members.length) {
    const grown = new Int32Array(members.length * 2);
    grown.set(members);
    members = grown;
  }
  const at = top * 4;
  members[at] = a;
  members[at + 1] = b;
  members[at + 2] = c;
  members[at + 3] = d;
  return top++;
}

const keyScratch = new ByteSink(256);

/** The decoded UTF-8 of a key token that holds escapes: a copy, since slots outlive the scratch. */
function decodedKey(b: Buffer, start: number, end: number): Buffer {
  keyScratch.reset();
  decodedStringBytes(b, start, end, keyScratch);
  return Buffer.from(keyScratch.view());
}

/** UTF-8 byte order is code point order, which is how orjson sorts keys. */
function compareBytes(x: Uint8Array, xs: number, xe: number, y: Uint8Array, ys: number, ye: number): number {
  const xl = xe - xs;
  const yl = ye - ys;
  const n = xl < yl ? xl : yl;
  for (let i = 0; i < n; i++) {
    const d = x[xs + i] - y[ys + i];
    if (d !== 0) return d;
  }
  return xl - yl;
}

/** Keys of two scanned members (tokens without escapes): their texts lie between the quotes. */
function compareScanned(b: Buffer, i: number, j: number): number {
  return compareBytes(b, members[i * 4] + 1, members[i * 4 + 1] - 1, b, members[j * 4] + 1, members[j * 4 + 1] - 1);
}

/** Keys of two written members. */
function compareWritten(sink: Buffer, i: number, j: number): number {
  const x = decodedKeys[i];
  const y = decodedKeys[j];
  if (x === null && y === null) return compareBytes(sink, members[i * 4 + 2], members[i * 4 + 3], sink, members[j * 4 + 2], members[j * 4 + 3]);
  const xs = x ?? sink.subarray(members[i * 4 + 2], members[i * 4 + 3]);
  const ys = y ?? sink.subarray(members[j * 4 + 2], members[j * 4 + 3]);
  return Buffer.compare(xs, ys);
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
  for (let k = nextBackslash(b, start + 1); k < end - 1; k = nextBackslash(b, k)) {
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

/** Whether the string token's recorded bytes are its canonical text. */
function stringIsCanonical(b: Buffer, start: number, end: number): boolean {
  return !hasEscape(b, start, end) || escapesAreCanonical(b, start, end);
}

/** Writes a string token; returns whether its canonical text holds escapes. */
function writeString(b: Buffer, start: number, end: number, out: ByteSink): boolean {
  if (!hasEscape(b, start, end)) {
    out.copy(b, start, end);
    return false;
  }
  if (escapesAreCanonical(b, start, end)) {
    out.copy(b, start, end);
    return true;
  }
  writeCanonicalString(b, start, end, out);
  return true;
}

/** Slots in key order, for `writePlain` and `reorder`, which never nest. */
let order = new Int32Array(256);

/**
 * Sorts the slots [base, top) by `compare` into `order`. Objects have few keys, so an
 * insertion sort serves, with the built-in sort for big ones; both are stable, so of equal
 * keys the last recorded comes last, which is the one a Python dict (and orjson) keeps.
 */
function sortSlots(base: number, compare: (i: number, j: number) => number): number {
  const n = top - base;
  if (order.length < n) order = new Int32Array(n * 2);
  if (n > 32) {
    const sorted = Array.from({ length: n }, (_, i) => base + i).sort(compare);
    for (let i = 0; i < n; i++) order[i] = sorted[i];
    return n;
  }
  for (let k = 0; k < n; k++) {
    const slot = base + k;
    let i = k;
    while (i > 0 && compare(order[i - 1], slot) > 0) {
      order[i] = order[i - 1];
      i--;
    }
    order[i] = slot;
  }
  return n;
}

/** Writes one scanned member: in one copy when its recorded text is canonical (no space around ':', canonical escapes). */
function writeScannedMember(b: Buffer, slot: number, out: ByteSink): void {
  const at = slot * 4;
  const keyStart = members[at];
  const keyEnd = members[at + 1];
  const valueStart = members[at + 2];
  const valueEnd = members[at + 3];
  const isString = b[valueStart] === QUOTE;
  if (valueStart === keyEnd + 1 && (!isString || stringIsCanonical(b, valueStart, valueEnd))) {
    out.copy(b, keyStart, valueEnd);
    return;
  }
  out.copy(b, keyStart, keyEnd);
  out.byte(0x3a);
  if (isString) writeString(b, valueStart, valueEnd, out);
  else out.copy(b, valueStart, valueEnd);
}

/** Writes the scanned members [base, top) of a plain object, in key order, the last of a repeated key only. */
function writePlain(b: Buffer, base: number, sorted: boolean, out: ByteSink): void {
  out.byte(0x7b);
  if (sorted) {
    for (let slot = base; slot < top; slot++) {
      if (slot > base) out.byte(0x2c);
      writeScannedMember(b, slot, out);
    }
  } else {
    const n = sortSlots(base, (i, j) => compareScanned(b, i, j));
    let first = true;
    for (let k = 0; k < n; k++) {
      if (k + 1 < n && compareScanned(b, order[k], order[k + 1]) === 0) continue;
      if (!first) out.byte(0x2c);
      first = false;
      writeScannedMember(b, order[k], out);
    }
  }
  out.byte(0x7d);
}

function writeObject(b: Buffer, p: number, end: number, out: ByteSink): number {
  p = skipWhitespace(b, p + 1, end);
  if (b[p] === 0x7d) {
    out.byte(0x7b);
    out.byte(0x7d);
    return p + 1;
  }
  const base = top;
  let sorted = true;
  // Scan while the object is plain: keys without escapes, values that are no containers.
  for (;;) {
    if (b[p] !== QUOTE) throw new JsonSyntaxError('expected object key', p);
    const keyEnd = skipString(b, p, end);
    if (hasEscape(b, p, keyEnd)) break;
    let valueStart = skipWhitespace(b, keyEnd, end);
    if (b[valueStart] !== 0x3a) throw new JsonSyntaxError("expected ':'", valueStart);
    valueStart = skipWhitespace(b, valueStart + 1, end);
    const c = b[valueStart];
    if (c === 0x7b || c === 0x5b) break;
    const valueEnd = skipValue(b, valueStart, end);
    const slot = push(p, keyEnd, valueStart, valueEnd);
    // A repeated key also counts as out of order, which keeps only its last value.
    if (sorted && slot > base && compareScanned(b, slot - 1, slot) >= 0) sorted = false;
    p = skipWhitespace(b, valueEnd, end);
    if (p >= end) throw new JsonSyntaxError('unexpected end of input', p);
    if (b[p] === 0x7d) {
      writePlain(b, base, sorted, out);
      top = base;
      return p + 1;
    }
    if (b[p] !== 0x2c) throw new JsonSyntaxError("expected ',' or '}'", p);
    p = skipWhitespace(b, p + 1, end);
  }
  // Not plain: the members scanned so far are written in recorded order, the rest as they are read.
  out.byte(0x7b);
  for (let slot = base; slot < top; slot++) {
    if (slot > base) out.byte(0x2c);
    const start = out.length;
    const keyLength = members[slot * 4 + 1] - members[slot * 4];
    writeScannedMember(b, slot, out);
    members[slot * 4] = start;
    members[slot * 4 + 1] = out.length;
    members[slot * 4 + 2] = start + 1;
    members[slot * 4 + 3] = start + keyLength - 1;
    decodedKeys[slot] = null;
  }
  for (;;) {
    if (b[p] !== QUOTE) throw new JsonSyntaxError('expected object key', p);
    if (top > base) out.byte(0x2c);
    const start = out.length;
    const keyTokenEnd = skipString(b, p, end);
    const escaped = writeString(b, p, keyTokenEnd, out);
    const slot = push(start, 0, start + 1, out.length - 1);
    decodedKeys[slot] = escaped ? decodedKey(b, p, keyTokenEnd) : null;
    p = skipWhitespace(b, keyTokenEnd, end);
    if (b[p] !== 0x3a) throw new JsonSyntaxError("expected ':'", p);
    out.byte(0x3a);
    // Nested objects use the slots above this one, and leave `top` as they found it.
    p = writeValue(b, skipWhitespace(b, p + 1, end), end, out);
    members[slot * 4 + 1] = out.length;
    if (sorted && slot > base && compareWritten(out.buffer, slot - 1, slot) >= 0) sorted = false;
    p = skipWhitespace(b, p, end);
    if (p >= end) throw new JsonSyntaxError('unexpected end of input', p);
    if (b[p] === 0x7d) break;
    if (b[p] !== 0x2c) throw new JsonSyntaxError("expected ',' or '}'", p);
    p = skipWhitespace(b, p + 1, end);
  }
  if (!sorted) reorder(out, base);
  top = base;
  out.byte(0x7d);
  return p + 1;
}

/**
 * Moves the written members [base, top) into key order: the region is copied past its end in
 * the sink, then each member back from there (copyWithin: no allocation, no scratch buffer).
 */
function reorder(out: ByteSink, base: number): void {
  const regionStart = members[base * 4];
  const regionEnd = out.length;
  const shift = regionEnd - regionStart;
  const n = sortSlots(base, (i, j) => compareWritten(out.buffer, i, j));
  // Of a repeated key, only the last value stays; compared before anything is overwritten.
  if (skipped.length < n) skipped = new Uint8Array(n * 2);
  for (let k = 0; k < n; k++) skipped[k] = k + 1 < n && compareWritten(out.buffer, order[k], order[k + 1]) === 0 ? 1 : 0;
  out.reserve(shift);
  const buffer = out.buffer;
  buffer.copyWithin(regionEnd, regionStart, regionEnd);
  let at = regionStart;
  for (let k = 0; k < n; k++) {
    if (skipped[k] === 1) continue;
    if (at > regionStart) buffer[at++] = 0x2c;
    const start = members[order[k] * 4] + shift;
    const end = members[order[k] * 4 + 1] + shift;
    if (end - start < 24) for (let i = start; i < end; i++) buffer[at++] = buffer[i];
    else {
      buffer.copyWithin(at, start, end);
      at += end - start;
    }
  }
  out.length = at;
}

let skipped = new Uint8Array(256);

function writeArrayValue(b: Buffer, p: number, end: number, out: ByteSink): number {
  out.byte(0x5b);
  p = skipWhitespace(b, p + 1, end);
  if (b[p] === 0x5d) {
    out.byte(0x5d);
    return p + 1;
  }
  return writeElements(b, p, end, out, 0);
}

/**
 * Writes the elements of an array from element `count` on, and its `]`; returns the index
 * just past the array. `p` is at the first element when `count` is 0, else just past element
 * `count - 1`. `elementEnds` receives where each element's canonical text ends in `out`,
 * `sourceSpans` where it starts and ends in `b`.
 */
function writeElements(b: Buffer, p: number, end: number, out: ByteSink, count: number, elementEnds?: number[], sourceSpans?: number[]): number {
  for (; ; count++) {
    if (count > 0) {
      p = skipWhitespace(b, p, end);
      if (p >= end) throw new JsonSyntaxError('unexpected end of input', p);
      if (b[p] === 0x5d) break;
      if (b[p] !== 0x2c) throw new JsonSyntaxError("expected ',' or ']'", p);
      p = skipWhitespace(b, p + 1, end);
      out.byte(0x2c);
    }
    const valueEnd = writeValue(b, p, end, out);
    sourceSpans?.push(p, valueEnd);
    elementEnds?.push(out.length);
    p = valueEnd;
  }
  out.byte(0x5d);
  return p + 1;
}

/** The largest array kept to copy from: its bytes are held twice (recorded and canonical) until the next. */
const MAX_KEPT_ARRAY_BYTES = 1 << 20;

/**
 * The last top-level array written (`writeArray`), to copy from. Arrays read one after another
 * often begin with the same elements: consecutive calls of a module repeat its system prompt,
 * and an agent's step k+1 holds step k's whole conversation (45% of the message bytes of the
 * bench tree). An element whose recorded bytes, and those of every element before it, equal
 * the last array's has the same canonical text: it is copied, not written again.
 */
class LastArray {
  /** Its recorded bytes, from `[` to past `]`. */
  private readonly raw = new ByteSink();
  /** Where each element starts and ends in `raw`, two numbers each. */
  private readonly rawSpans: number[] = [];
  /** Its canonical text, from `[` to past `]`, no element dropped. */
  private readonly canonical = new ByteSink();
  /** Where each element's canonical text ends in `canonical`. */
  private readonly canonicalEnds: number[] = [];
  /** The array being written: its elements' spans in `b` and ends in `out`. */
  private readonly spans: number[] = [];
  private readonly ends: number[] = [];

  /** How many leading elements of the array at `start` are the last array's, byte for byte. */
  private repeated(b: Buffer, start: number, end: number): number {
    const count = this.rawSpans.length / 2;
    let from = 0;
    let same = 0;
    while (same < count) {
      const to = this.rawSpans[2 * same + 1];
      if (start + to > end || b.compare(this.raw.buffer, from, to, start + from, start + to) !== 0) break;
      from = to;
      same++;
    }
    // The bytes after the last equal element must end it here too: `12` is a prefix of `123`.
    if (same > 0) {
      const next = skipWhitespace(b, start + from, end);
      if (b[next] !== 0x2c && b[next] !== 0x5d) same--;
    }
    return same;
  }

  write(b: Buffer, start: number, end: number, out: ByteSink, dropLast: boolean, elementEnds?: number[], sourceSpans?: number[]): void {
    const base = out.length;
    const spans = this.spans;
    const ends = this.ends;
    spans.length = 0;
    ends.length = 0;
    const same = this.repeated(b, start, end);
    lastArrayWrite.generation++;
    lastArrayWrite.repeated = same;
    let arrayEnd: number;
    if (same > 0) {
      out.copy(this.canonical.buffer, 0, this.canonicalEnds[same - 1]);
      for (let i = 0; i < same; i++) {
        spans.push(start + this.rawSpans[2 * i], start + this.rawSpans[2 * i + 1]);
        ends.push(base + this.canonicalEnds[i]);
      }
      arrayEnd = writeElements(b, start + this.rawSpans[2 * same - 1], end, out, same, ends, spans);
    } else {
      out.byte(0x5b);
      const first = skipWhitespace(b, start + 1, end);
      if (b[first] === 0x5d) {
        out.byte(0x5d);
        arrayEnd = first + 1;
      } else arrayEnd = writeElements(b, first, end, out, 0, ends, spans);
    }
    this.raw.reset();
    this.canonical.reset();
    // An array too big to keep (a base64 image in a message) leaves nothing to copy from.
    const kept = arrayEnd - start <= MAX_KEPT_ARRAY_BYTES ? spans.length : 0;
    if (kept > 0) {
      this.raw.copy(b, start, arrayEnd);
      this.canonical.copy(out.buffer, base, out.length);
    }
    this.rawSpans.length = kept;
    for (let i = 0; i < kept; i++) this.rawSpans[i] = spans[i] - start;
    this.canonicalEnds.length = kept / 2;
    for (let i = 0; i < kept / 2; i++) this.canonicalEnds[i] = ends[i] - base;
    const count = ends.length;
    if (dropLast && count > 0) {
      out.length = count >= 2 ? ends[count - 2] : base + 1;
      out.byte(0x5d);
    }
    if (elementEnds !== undefined) for (const at of ends) elementEnds.push(at);
    if (sourceSpans !== undefined) for (const at of spans) sourceSpans.push(at);
  }
}

const lastArray = new LastArray();

/**
 * What the last `writeArray` or `writeCanonical` of an array found: how many leading elements
 * equal, byte for byte, those of the array written just before it, and a count of the writes
 * (a caller that saw the write before knows the comparison was with its own array).
 */
export const lastArrayWrite = { generation: 0, repeated: 0 };

/** Writes the canonical form of the value starting at `p`; returns the index just past it. */
function writeValue(b: Buffer, p: number, end: number, out: ByteSink): number {
  const c = b[p];
  if (c === QUOTE) {
    const stringEnd = skipString(b, p, end);
    writeString(b, p, stringEnd, out);
    return stringEnd;
  }
  if (c === 0x7b) return writeObject(b, p, end, out);
  if (c === 0x5b) return writeArrayValue(b, p, end, out);
  // Numbers and literals: the recorded text is the hashed text.
  const valueEnd = skipValue(b, p, end);
  out.copy(b, p, valueEnd);
  return valueEnd;
}

/** Every entry point starts here: a buffer may hold other bytes than at the last call, and a throw may have left members on the stack. */
function begin(): void {
  backslashBuffer = null;
  top = 0;
}

/** Writes the canonical form of the JSON value at [start, end) of `b` into `out`. */
export function writeCanonical(b: Buffer, start: number, end: number, out: ByteSink): void {
  begin();
  if (b[start] === 0x5b) lastArray.write(b, start, end, out, false);
  else writeValue(b, start, end, out);
}

/**
 * Writes the array at [start, end); with `dropLast`, as if its last element were absent.
 * `elementEnds` receives where each element's canonical text ends in `out`, `sourceSpans`
 * where each element starts and ends in `b` (two numbers per element).
 */
export function writeArray(b: Buffer, start: number, end: number, out: ByteSink, dropLast = false, elementEnds?: number[], sourceSpans?: number[]): void {
  if (b[start] !== 0x5b) throw new JsonSyntaxError('expected an array', start);
  begin();
  lastArray.write(b, start, end, out, dropLast, elementEnds, sourceSpans);
}

/** `crypto.hash` (Node 20.12 and later) hashes in one native call, without a Hash object: about 1 µs less per record. */
const oneShot = (crypto as { hash?: (algorithm: string, data: Uint8Array, encoding: string) => string | Buffer }).hash;

export function sha256Hex(bytes: Uint8Array): string {
  return oneShot !== undefined ? (oneShot('sha256', bytes, 'hex') as string) : createHash('sha256').update(bytes).digest('hex');
}

export function sha256(bytes: Uint8Array): Buffer {
  return oneShot !== undefined ? (oneShot('sha256', bytes, 'buffer') as Buffer) : createHash('sha256').update(bytes).digest();
}

/**
 * sha256 as 32 one-byte characters. Where every record hashes (trajectory digests, each
 * example's split group), the Buffer that native code makes for a digest costs more than
 * hashing a short record: a call took 1.3-2.0 µs with this output, 4.0-6.5 µs with a Buffer
 * (600 bytes).
 */
export function sha256Latin1(data: Uint8Array | string): string {
  // A string is hashed as its UTF-8 bytes, without a Buffer of them first.
  return oneShot !== undefined ? (oneShot('sha256', data as Uint8Array, 'latin1') as string) : createHash('sha256').update(data).digest().toString('latin1');
}

/** Big-endian 32-bit word `index` of a digest held as latin1 characters (`sha256Latin1`). */
export function latin1Word(digest: string, index: number): number {
  const at = index * 4;
  return ((digest.charCodeAt(at) << 24) | (digest.charCodeAt(at + 1) << 16) | (digest.charCodeAt(at + 2) << 8) | digest.charCodeAt(at + 3)) >>> 0;
}

/** Canonical text of a JSON text, for tests and tools. */
export function canonicalize(json: string | Buffer): Buffer {
  const b = typeof json === 'string' ? Buffer.from(json, 'utf8') : json;
  const start = skipWhitespace(b, 0, b.length);
  const out = new ByteSink(b.length + 16);
  begin();
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
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i === 0 ? '' : ',') + (i in value ? canonicalValueText(value[i]) : '');
    return out + ']';
  }
  const object = value as Record<string, unknown>;
  const keys = Object.keys(object);
  sortByUtf8(keys);
  let out = '{';
  let first = true;
  for (const key of keys) {
    const v = object[key];
    if (v === undefined) continue;
    out += (first ? '' : ',') + JSON.stringify(key) + ':' + canonicalValueText(v);
    first = false;
  }
  return out + '}';
}

/**
 * Sorts keys by their UTF-8 bytes. UTF-16 order is the same (code point order) for texts
 * without surrogates or characters past U+D7FF, which is nearly every key: those sort as
 * strings, without a Buffer per comparison; the others compare their UTF-8 bytes.
 */
function sortByUtf8(keys: string[]): void {
  if (keys.length < 2) return;
  for (const key of keys) {
    for (let i = 0; i < key.length; i++) {
      if (key.charCodeAt(i) >= 0xd800) {
        keys.sort((a, b) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')));
        return;
      }
    }
  }
  keys.sort();
}

export function canonicalValueHash(value: unknown): string {
  return oneShot !== undefined ? (oneShot('sha256', canonicalValueText(value) as unknown as Uint8Array, 'hex') as string) : sha256Hex(Buffer.from(canonicalValueText(value), 'utf8'));
}

export { JsonSyntaxError };
