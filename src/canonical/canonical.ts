/**
 * Canonical JSON exactly as Python's `orjson.dumps(value, option=OPT_SORT_KEYS)` writes it,
 * which is what Synalinks hashes. Working from the source bytes keeps every number's text
 * verbatim (`1.0` stays `1.0`, big integers stay exact), which `JSON.parse` cannot do.
 */
import { createHash } from 'node:crypto';
import { ByteSink } from './byte-sink.js';
import { decodeString, forEachElement, forEachMember, JsonSyntaxError, skipString, stringHasEscape } from './scan.js';

const QUOTE = 0x22;

interface Member {
  keyStart: number;
  keyEnd: number;
  /** Decoded key as UTF-8 when it held escapes; raw key bytes compare correctly otherwise. */
  decodedKey: Buffer | null;
  valueStart: number;
  valueEnd: number;
}

/** Byte order of UTF-8 is code point order, which is how orjson sorts keys. */
function compareMembers(b: Buffer, x: Member, y: Member): number {
  const xs = x.decodedKey ?? b.subarray(x.keyStart + 1, x.keyEnd - 1);
  const ys = y.decodedKey ?? b.subarray(y.keyStart + 1, y.keyEnd - 1);
  return Buffer.compare(xs, ys);
}

function writeString(b: Buffer, start: number, end: number, out: ByteSink): void {
  if (!stringHasEscape(b, start, end)) {
    out.copy(b, start, end);
    return;
  }
  // JSON.stringify escapes exactly what orjson escapes for well-formed strings.
  out.text(JSON.stringify(decodeString(b, start, end)));
}

/** Writes the canonical form of the JSON value at [start, end) of `b` into `out`. */
export function writeCanonical(b: Buffer, start: number, end: number, out: ByteSink): void {
  const c = b[start];
  if (c === QUOTE) {
    writeString(b, start, skipString(b, start, end), out);
  } else if (c === 0x7b) {
    const members: Member[] = [];
    let needsSort = false;
    forEachMember(b, start, end, (keyStart, keyEnd, valueStart, valueEnd) => {
      const decodedKey = stringHasEscape(b, keyStart, keyEnd)
        ? Buffer.from(decodeString(b, keyStart, keyEnd), 'utf8')
        : null;
      const member = { keyStart, keyEnd, decodedKey, valueStart, valueEnd };
      if (members.length > 0 && compareMembers(b, members[members.length - 1], member) > 0) needsSort = true;
      members.push(member);
    });
    if (needsSort) members.sort((x, y) => compareMembers(b, x, y));
    out.byte(0x7b);
    for (let i = 0; i < members.length; i++) {
      if (i > 0) out.byte(0x2c);
      const m = members[i];
      writeString(b, m.keyStart, m.keyEnd, out);
      out.byte(0x3a);
      writeCanonical(b, m.valueStart, m.valueEnd, out);
    }
    out.byte(0x7d);
  } else if (c === 0x5b) {
    writeArray(b, start, end, out);
  } else {
    // Numbers and literals: the recorded text is the hashed text.
    out.copy(b, start, end);
  }
}

/** Writes the array at [start, end); with `dropLast`, as if its last element were absent. */
export function writeArray(b: Buffer, start: number, end: number, out: ByteSink, dropLast = false): void {
  out.byte(0x5b);
  const contentStart = out.length;
  let lastElementStart = contentStart;
  let count = 0;
  forEachElement(b, start, end, (valueStart, valueEnd) => {
    lastElementStart = out.length;
    if (count > 0) out.byte(0x2c);
    writeCanonical(b, valueStart, valueEnd, out);
    count++;
  });
  if (dropLast) out.length = lastElementStart;
  out.byte(0x5d);
}

export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** Canonical text of a JSON text, for tests and tools. */
export function canonicalize(json: string | Buffer): Buffer {
  const b = typeof json === 'string' ? Buffer.from(json, 'utf8') : json;
  let start = 0;
  while (start < b.length && (b[start] === 0x20 || b[start] === 0x0a || b[start] === 0x0d || b[start] === 0x09)) start++;
  const out = new ByteSink(b.length + 16);
  writeCanonical(b, start, b.length, out);
  return Buffer.from(out.view());
}

/**
 * Canonical bytes of a value already parsed into JavaScript (records rebuilt from other
 * recorders, which have no original number text). Integral numbers are written as integers.
 */
export function canonicalValueText(value: unknown): string {
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
