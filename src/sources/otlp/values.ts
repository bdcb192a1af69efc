/**
 * OTLP/JSON values: `AnyValue` (stringValue, intValue, doubleValue, boolValue, arrayValue,
 * kvlistValue, bytesValue; the proto's snake_case names too) as plain values, attribute
 * lists as maps, and JSON texts held in string attributes.
 */
import { JsonNumber, parseJsonText } from '../../canonical/json-value.js';
import { JsonSyntaxError } from '../../canonical/scan.js';
import { isObject, type Json } from '../json-values.js';

const INTEGER = /^-?\d+$/;

/** The plain value of an OTLP `AnyValue`; numbers keep their recorded text (`JsonNumber`). */
export function anyValue(value: unknown): unknown {
  if (!isObject(value)) return null;
  // The first member that names a kind, in the order written (for…in: no entry arrays per value).
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const inner = value[key];
    switch (key) {
      case 'stringValue':
      case 'string_value':
        return typeof inner === 'string' ? inner : null;
      case 'boolValue':
      case 'bool_value':
        return typeof inner === 'boolean' ? inner : null;
      case 'intValue':
      case 'int_value':
        // int64 is written as a decimal string in OTLP/JSON; some writers give a number.
        return typeof inner === 'string' && INTEGER.test(inner) ? new JsonNumber(inner) : inner instanceof String || typeof inner === 'number' ? inner : null;
      case 'doubleValue':
      case 'double_value':
        return inner instanceof String || typeof inner === 'number' ? inner : typeof inner === 'string' ? inner : null;
      case 'arrayValue':
      case 'array_value':
        return isObject(inner) && Array.isArray(inner.values) ? inner.values.map(anyValue) : [];
      case 'kvlistValue':
      case 'kvlist_value':
        return isObject(inner) && Array.isArray(inner.values) ? attributeMap(inner.values, new Map()).toObject() : {};
      case 'bytesValue':
      case 'bytes_value':
        return typeof inner === 'string' ? inner : null;
      default:
        break;
    }
  }
  return null;
}

/** A span's (or event's) attributes by key; the first of a repeated key wins. */
export class Attributes {
  constructor(readonly map: Map<string, unknown>) {}
  get(key: string): unknown {
    return this.map.get(key);
  }
  has(key: string): boolean {
    return this.map.has(key);
  }
  str(key: string): string | null {
    const v = this.map.get(key);
    return typeof v === 'string' ? v : null;
  }
  /** Keys with `prefix`, in insertion order. */
  keysWith(prefix: string): string[] {
    const keys: string[] = [];
    for (const key of this.map.keys()) if (key.startsWith(prefix)) keys.push(key);
    return keys;
  }
  toObject(): Json {
    const out: Json = {};
    for (const [k, v] of this.map) out[k] = v;
    return out;
  }
}

export function attributeMap(list: unknown, into = new Map<string, unknown>()): Attributes {
  if (Array.isArray(list)) {
    for (const kv of list) {
      if (!isObject(kv) || typeof kv.key !== 'string' || into.has(kv.key)) continue;
      into.set(kv.key, anyValue(kv.value));
    }
  }
  return new Attributes(into);
}

/** A JSON text held in a string attribute, parsed strictly; `cut` when it ends early (a length limit), `bad` when broken otherwise. */
export type Parsed = { ok: true; value: unknown } | { ok: false; cut: boolean };

export function parseJsonAttribute(text: string): Parsed {
  try {
    return { ok: true, value: parseJsonText(text) };
  } catch (error) {
    if (!(error instanceof JsonSyntaxError)) throw error;
    return { ok: false, cut: endsEarly(text) };
  }
}

/** Whether a JSON text that does not parse is only cut short: its brackets and strings never close. */
function endsEarly(text: string): boolean {
  const t = text.trimStart();
  if (t[0] !== '[' && t[0] !== '{') return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '[' || c === '{') depth++;
    else if (c === ']' || c === '}') depth--;
  }
  return inString || depth > 0;
}

/** A value that is structured already, or a JSON text of one (instrumentations write either). */
export function structured(value: unknown, cut: { value: boolean }): unknown {
  if (typeof value !== 'string') return value;
  const t = value.trimStart();
  if (t[0] !== '[' && t[0] !== '{') return value;
  const parsed = parseJsonAttribute(value);
  if (parsed.ok) return parsed.value;
  if (parsed.cut) cut.value = true;
  return undefined;
}

/** A hex span or trace id as OTLP/JSON writes it (hex), or base64 as the proto's JSON mapping does: hex either way. */
export function hexId(value: unknown): string | null {
  if (typeof value !== 'string' || value === '') return null;
  if (/^[0-9a-fA-F]+$/.test(value) && (value.length === 16 || value.length === 32)) return value.toLowerCase();
  const bytes = Buffer.from(value, 'base64');
  return bytes.length === 8 || bytes.length === 16 ? bytes.toString('hex') : null;
}

/** Nanoseconds since the epoch (a decimal string in OTLP/JSON) as seconds, or null. */
export function nanosToSeconds(value: unknown): number | null {
  const text = value instanceof String ? value.valueOf() : typeof value === 'number' ? String(value) : typeof value === 'string' ? value : null;
  if (text === null || !INTEGER.test(text)) return null;
  const n = BigInt(text);
  if (n <= 0n) return null;
  return Number(n / 1000n) / 1e6;
}
