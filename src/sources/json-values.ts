/**
 * Reading loosely typed JSON from recorders whose fields may be missing or of another type.
 * Values come from `json-stream`, whose numbers are `JsonNumber` (their recorded text).
 */
import { isJsonObject, numberValue } from '../canonical/json-value.js';
import { isTokenCount } from '../record.js';

export type Json = Record<string, unknown>;

export function isObject(value: unknown): value is Json {
  return isJsonObject(value);
}

export function str(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

export function num(value: unknown): number | null {
  return numberValue(value);
}

/** A token count (`isTokenCount`), or null. */
export function count(value: unknown): number | null {
  const n = numberValue(value);
  return isTokenCount(n) ? n : null;
}
