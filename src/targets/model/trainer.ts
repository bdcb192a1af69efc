/**
 * What a trainer does to a line before the chat template sees it. For `nemo`, NeMo AutoModel's
 * `ChatDataset` (`nemo_automodel/components/datasets/llm/chat_dataset.py`): `_normalize_messages`
 * turns content into a string (text parts joined by a space, None into "", anything else
 * `str()`), gives tool calls an id (`call_<i>`) and a type (`function`) when missing, and
 * replaces arguments that are not a string by `json.dumps(arguments)` (ASCII-only, `", "` and
 * `": "` separators, floats as Python writes them); a role other than system, user, assistant
 * and tool raises. `tools` written as a JSON string is parsed, and an empty list becomes None.
 * The other targets' trainers hand the messages to the template as written.
 */
import { isIntegerText, isJsonNumber, isJsonObject, parseJsonText } from '../../canonical/json-value.js';
import type { TargetName } from '../target.js';

export class TrainerRejects extends Error {}

export interface TrainerInput {
  messages: Record<string, unknown>[];
  tools: unknown[] | null;
}

/** Throws `TrainerRejects` where the trainer's loader would raise. */
export function trainerInput(target: TargetName, example: Record<string, unknown>): TrainerInput {
  const messages = (example.messages as unknown[]).filter(isJsonObject);
  let tools: unknown = example.tools ?? null;
  if (target !== 'nemo') return { messages, tools: Array.isArray(tools) && tools.length > 0 ? tools : null };
  if (typeof tools === 'string') {
    try {
      tools = parseJsonText(tools);
    } catch (error) {
      throw new TrainerRejects(`AutoModel's ChatDataset raises: \`tools\` is a string but not valid JSON (${(error as Error).message})`);
    }
  }
  if (tools !== null && !Array.isArray(tools)) throw new TrainerRejects("AutoModel's ChatDataset raises: `tools` must be a list");
  return { messages: messages.map(autoModelMessage), tools: Array.isArray(tools) && tools.length > 0 ? tools : null };
}

function autoModelMessage(m: Record<string, unknown>): Record<string, unknown> {
  const role = m.role;
  if (role !== 'system' && role !== 'user' && role !== 'assistant' && role !== 'tool') {
    throw new TrainerRejects(`AutoModel's ChatDataset raises: Unsupported role in messages: ${pythonRepr(role ?? null)}`);
  }
  const out: Record<string, unknown> = { ...m, content: autoModelContent(m.content) };
  if (role === 'assistant') {
    if ('reasoning_content' in m && m.reasoning_content === null) out.reasoning_content = '';
    if ('tool_calls' in m) {
      if (!Array.isArray(m.tool_calls)) throw new TrainerRejects("AutoModel's ChatDataset raises: assistant message `tool_calls` must be a list");
      out.tool_calls = m.tool_calls.map((call: unknown, i: number) => autoModelCall(call, i));
    }
  }
  if (role === 'tool' && (typeof m.tool_call_id !== 'string' || m.tool_call_id === '')) {
    throw new TrainerRejects("AutoModel's ChatDataset raises: tool message `tool_call_id` must be a non-empty string");
  }
  return out;
}

function autoModelContent(value: unknown): string {
  if (Array.isArray(value)) return value.filter((p) => isJsonObject(p) && 'text' in p).map((p) => pythonStr((p as { text: unknown }).text)).join(' ');
  if (value === null || value === undefined) return '';
  return pythonStr(value);
}

function autoModelCall(call: unknown, i: number): Record<string, unknown> {
  if (!isJsonObject(call)) throw new TrainerRejects(`AutoModel's ChatDataset raises: assistant message \`tool_calls[${i}]\` must be a dict`);
  const fn = call.function;
  if (!isJsonObject(fn)) throw new TrainerRejects(`AutoModel's ChatDataset raises: assistant message \`tool_calls[${i}].function\` must be a dict`);
  if (typeof fn.name !== 'string' || fn.name === '') throw new TrainerRejects(`AutoModel's ChatDataset raises: assistant message \`tool_calls[${i}].function.name\` must be a non-empty string`);
  if (fn.arguments === undefined || fn.arguments === null) throw new TrainerRejects(`AutoModel's ChatDataset raises: assistant message \`tool_calls[${i}].function.arguments\` is required`);
  return {
    ...call,
    id: call.id === undefined || call.id === null || call.id === '' ? `call_${i}` : call.id,
    type: call.type === undefined || call.type === null || call.type === '' ? 'function' : call.type,
    function: typeof fn.arguments === 'string' ? fn : { ...fn, arguments: pythonJsonDumps(fn.arguments) },
  };
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

/** A JSON number's text as Python reads and writes it back: an integer stays exact, anything else is a float. */
function pythonNumber(text: string): string {
  if (isIntegerText(text)) return BigInt(text).toString();
  return pythonFloatRepr(Number(text));
}

/** `repr(float)`: the shortest digits that read back, in exponent form below 1e-4 and from 1e16 on. */
export function pythonFloatRepr(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? 'Infinity' : '-Infinity';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const sign = x < 0 ? '-' : '';
  const [mantissa, expText] = Math.abs(x).toExponential().split('e');
  const exp = Number(expText);
  const digits = mantissa.replace('.', '');
  if (exp < -4 || exp >= 16) {
    const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    return `${sign}${m}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
  const whole = digits.slice(0, exp + 1).padEnd(exp + 1, '0');
  const fraction = digits.slice(exp + 1);
  return `${sign}${whole}.${fraction === '' ? '0' : fraction}`;
}

/** Python's `str()` of a JSON value, as AutoModel applies it to content that is not a string. */
function pythonStr(value: unknown): string {
  return typeof value === 'string' ? value : pythonRepr(value);
}

function pythonRepr(value: unknown): string {
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
