/** Helpers shared by the JSON walkers (redaction and scanning). */
import { parseStrictJson } from '../canonical/scan.js';

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * The object or array a string holds as JSON text (OpenAI tool-call `arguments`), or
 * undefined. Only strings shaped like a container are parsed, so plain prose costs nothing.
 */
export function parseEmbeddedJson(text: string): object | undefined {
  const first = text.trimStart()[0];
  const last = text.trimEnd().slice(-1);
  if (!((first === '{' && last === '}') || (first === '[' && last === ']'))) return undefined;
  try {
    // Strict and depth-bounded, as records are: the walkers recurse.
    const parsed: unknown = parseStrictJson(text);
    return typeof parsed === 'object' && parsed !== null ? parsed : undefined;
  } catch {
    return undefined;
  }
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/** messages[3].content, args["odd key"] */
export function childPath(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  if (IDENTIFIER.test(key)) return parent === '' ? key : `${parent}.${key}`;
  return `${parent}[${JSON.stringify(key)}]`;
}
