/**
 * What a recorded tool call says, read one way by every stage and target: its name against
 * the pattern trainers check, its arguments as an object, and the facts (name, argument types,
 * identity) that tool definitions are inferred from (targets/tools.ts), computed where a record
 * is read (pipeline/candidate.ts, index/row.ts) and read back from an index (`parseToolCallFacts`).
 */
import { isIntegerText, isJsonObject as isObject, parseJsonText, writeJson } from './canonical/json-value.js';
import type { Message } from './record.js';

/** The key of an assistant turn's calls, as recorded JSON spells it: a line without it holds none (escaped spellings aside). */
export const TOOL_CALLS_KEY = Buffer.from('"tool_calls"');

/** OpenAI's rule for tool and function names. */
export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * Arguments as an object: a dict as is, a string when it parses as a JSON
 * object. Absent, null and "" mean a call without arguments (some providers
 * send "" for those). Anything else (a JSON array, broken JSON) returns null.
 */
export function parseArguments(args: unknown): { value: Record<string, unknown>; text: string | null } | null {
  if (args === undefined || args === null || args === '') return { value: {}, text: null };
  if (isObject(args)) return { value: args, text: null };
  if (typeof args !== 'string') return null;
  try {
    const value: unknown = parseJsonText(args);
    return isObject(value) ? { value, text: args } : null;
  } catch {
    return null;
  }
}

export type JsonSchemaType = 'string' | 'number' | 'integer' | 'boolean' | 'array' | 'object' | 'null';

export type ArgumentTypes = [name: string, type: JsonSchemaType][];

/**
 * What inference takes of each tool call in the assistant turns, one short text per call:
 * its name, its arguments' types (JSON) and what makes it distinct (its id, else its
 * arguments), a line each; the name and the JSON hold no line break. Computed where a record
 * is read (a worker thread for big trees), it crosses to the thread that infers as one
 * string, not as the call's parsed arguments, and a call seen before is not parsed again.
 */
export function toolCallFacts(messages: readonly Message[]): string[] {
  const facts: string[] = [];
  for (const m of messages) {
    if (m.role !== 'assistant' || !Array.isArray(m.tool_calls)) continue;
    for (const call of m.tool_calls) {
      const fn = isObject(call) && isObject(call.function) ? call.function : null;
      // A call no target can write (no name, or one trainers reject) describes no exported tool.
      if (fn === null || typeof fn.name !== 'string' || !TOOL_NAME_PATTERN.test(fn.name)) continue;
      // Unparseable arguments say nothing about the schema (and such calls are never exported).
      const args = parseArguments(fn.arguments);
      if (args === null) continue;
      // Calls of one agent run reappear in every later step: counted once per id, or per name and arguments when id-less.
      const key = typeof call.id === 'string' && call.id !== '' ? `id:${call.id}` : `args:${writeJson(args.value)}`;
      const types: ArgumentTypes = Object.entries(args.value).map(([arg, value]) => [arg, jsonSchemaType(value)]);
      facts.push(`${fn.name}\n${JSON.stringify(types)}\n${key}`);
    }
  }
  return facts;
}

const SCHEMA_TYPES: ReadonlySet<string> = new Set<JsonSchemaType>(['string', 'number', 'integer', 'boolean', 'array', 'object', 'null']);

/**
 * The facts of an index's `tool_calls` cell (a JSON list of `toolCallFacts` texts), checked as
 * `toolCallFacts` writes them: an index is a file anyone may have written or edited, so a cell
 * of another shape is refused (null) rather than inferred from. No name, JSON or type that
 * `toolCallFacts` would not write reaches the tool definitions.
 */
export function parseToolCallFacts(cell: string): string[] | null {
  let facts: unknown;
  try {
    facts = JSON.parse(cell);
  } catch {
    return null;
  }
  if (!Array.isArray(facts)) return null;
  for (const text of facts) {
    if (typeof text !== 'string') return null;
    const nameEnd = text.indexOf('\n');
    const typesEnd = nameEnd === -1 ? -1 : text.indexOf('\n', nameEnd + 1);
    if (typesEnd === -1 || !TOOL_NAME_PATTERN.test(text.slice(0, nameEnd))) return null;
    let types: unknown;
    try {
      types = JSON.parse(text.slice(nameEnd + 1, typesEnd));
    } catch {
      return null;
    }
    const wellFormed = Array.isArray(types) && types.every((t) => Array.isArray(t) && t.length === 2 && typeof t[0] === 'string' && typeof t[1] === 'string' && SCHEMA_TYPES.has(t[1]));
    if (!wellFormed) return null;
  }
  return facts as string[];
}

/** A number is an integer when written as one: `153133.0` and `1e3` were recorded as numbers. */
export function jsonSchemaType(value: unknown): JsonSchemaType {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (value instanceof String) return isIntegerText(value.valueOf()) ? 'integer' : 'number';
  switch (typeof value) {
    case 'string':
      return 'string';
    case 'boolean':
      return 'boolean';
    case 'number':
      return Number.isInteger(value) ? 'integer' : 'number';
    default:
      return 'object';
  }
}
