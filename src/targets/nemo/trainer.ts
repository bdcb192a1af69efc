/**
 * NeMo AutoModel's `ChatDataset` (`nemo_automodel/components/datasets/llm/chat_dataset.py`):
 * `_normalize_messages` turns content into a string (text parts joined by a space, None into "",
 * anything else `str()`), gives tool calls an id (`call_<i>`) and a type (`function`) when
 * missing, and replaces arguments that are not a string by `json.dumps(arguments)` (ASCII-only,
 * `", "` and `": "` separators, floats as Python writes them); a role other than system, user,
 * assistant and tool raises. `tools` written as a JSON string is parsed, and an empty list becomes None.
 */
import { isJsonObject, parseJsonText } from '../../canonical/json-value.js';
import { pythonJsonDumps, pythonRepr, pythonStr, TrainerRejects, type TrainerInput } from '../model/trainer.js';
import type { TrainerLoader } from '../target.js';

export const autoModelChatDataset: TrainerLoader = {
  name: "AutoModel's ChatDataset",
  input: autoModelInput,
  // AutoModel's format_chat_template raises where prefix renders are no prefix of the whole.
  raisesOnInconsistentMask: true,
};

/** Throws `TrainerRejects` where the trainer's loader would raise. */
function autoModelInput(example: Record<string, unknown>): TrainerInput {
  const messages = (example.messages as unknown[]).filter(isJsonObject);
  let tools: unknown = example.tools ?? null;
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

