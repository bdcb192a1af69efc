/**
 * What a trainer does to a line before the chat template sees it: the target's own loader
 * (`Target.trainer`, e.g. nemo/trainer.ts) where it has one, else the line as written; and
 * Python's `json.dumps`, `str` and `repr` of JSON values, which loaders apply.
 */
import { isJsonNumber, isJsonObject } from '../../canonical/json-value.js';
import type { TrainerLoader } from '../target.js';
import { pythonNumber } from './python-numbers.js';

export { pythonFloatRepr } from './python-numbers.js';

export class TrainerRejects extends Error {}

export interface TrainerInput {
  messages: Record<string, unknown>[];
  tools: unknown[] | null;
}

/**
 * What the template gets from a line: its target's trainer's loader's input (`Target.trainer`),
 * else, without one, the line as written. Throws `TrainerRejects` where the loader raises.
 */
export function trainerInput(loader: TrainerLoader | undefined, example: Record<string, unknown>): TrainerInput {
  if (loader !== undefined) return loader.input(example);
  const messages = (example.messages as unknown[]).filter(isJsonObject);
  const tools: unknown = example.tools ?? null;
  return { messages, tools: Array.isArray(tools) && tools.length > 0 ? tools : null };
}

/** Python's `json.dumps(value)` with its defaults: ASCII-only, `", "` and `": "`, floats by `repr`. */
export function pythonJsonDumps(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (value === true) return 'true';
  if (value === false) return 'false';
  if (typeof value === 'string') return asciiOnly(JSON.stringify(value));
  if (isJsonNumber(value) || typeof value === 'number') return pythonNumber(String(value.valueOf()));
  if (Array.isArray(value)) return `[${value.map(pythonJsonDumps).join(', ')}]`;
  if (typeof value === 'object') {
    return `{${Object.entries(value).map(([k, v]) => `${asciiOnly(JSON.stringify(k))}: ${pythonJsonDumps(v)}`).join(', ')}}`;
  }
  return 'null';
}

function asciiOnly(json: string): string {
  return json.replace(/[\u007f-\uffff]/g, (c) => (c === '\u007f' ? c : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));
}

/** Python's `str()` of a JSON value, as AutoModel applies it to content that is not a string. */
export function pythonStr(value: unknown): string {
  return typeof value === 'string' ? value : pythonRepr(value);
}

export function pythonRepr(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'string') {
    const quote = value.includes("'") && !value.includes('"') ? '"' : "'";
    const body = value
      .replace(/\\/g, '\\\\')
      .replace(/\n/g, '\\n')
      .replace(/\r/g, '\\r')
      .replace(/\t/g, '\\t')
      .replace(/[\x00-\x1f\x7f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
    return quote + (quote === "'" ? body.replace(/'/g, "\\'") : body) + quote;
  }
  if (isJsonNumber(value) || typeof value === 'number') return pythonNumber(String(value.valueOf()));
  if (Array.isArray(value)) return `[${value.map(pythonRepr).join(', ')}]`;
  return `{${Object.entries(value as object).map(([k, v]) => `${pythonRepr(k)}: ${pythonRepr(v)}`).join(', ')}}`;
}
