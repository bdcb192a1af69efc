/**
 * Checks one line of a chat JSONL file against a format's rules. The rules of
 * the three formats differ in a handful of parameters (roles, allowed keys,
 * argument form, …), so each target module describes them as a `LineRules`
 * value and calls `checkLine`. Works on any parsed JSON: it never assumes we
 * wrote the file.
 */
import { isJsonNumber, parseJsonText } from '../canonical/json-value.js';
import { imageProblem } from './images.js';
import { isObject, toolSequenceProblem, type SequenceTurn } from './messages.js';
import { TOOL_NAME_PATTERN } from '../tool-calls.js';
import { findSpecialTokensDeep } from './special-tokens.js';
import type { ErrorClass, JsonObject, Severity, ValidationError } from './target.js';

export interface LineRules {
  roles: readonly string[];
  /** Allowed message keys per role. */
  messageKeys: Readonly<Record<string, readonly string[]>>;
  /** Error where the consumer rejects unknown message keys, warning where it ignores them. */
  unknownMessageKey: Severity;
  topLevelKeys: readonly string[];
  unknownTopLevelKey: Severity;
  /**
   * `openai`: strings, non-empty unless an assistant tool-call turn, arrays only for user image parts.
   * `nemo`: string or null. `customizer`: string, null only alongside tool_calls.
   */
  content: 'openai' | 'nemo' | 'customizer';
  /**
   * How `tool_calls[].function.arguments` must be written: a JSON-object string, an object,
   * or either; `string-preferred` accepts an object with a warning (the loader re-serializes it).
   */
  argumentsForm: 'string' | 'object' | 'either' | 'string-preferred';
  /** Whether each tool call needs `id` and `type:"function"`. */
  callNeedsIdAndType: boolean;
  /** The field carrying reasoning text, if the format has one. */
  reasoningKey: 'reasoning_content' | 'thinking' | null;
  /** Whether (and how loudly) the last message must be the assistant's; null: no rule. */
  lastMustBeAssistant: Severity | null;
  /** Whether `content` and the reasoning field may not share a message. */
  contentExcludesReasoning: boolean;
  /** Whether each tool definition needs a description and object parameters with properties. */
  completeToolDefinitions: boolean;
  specialToken: Severity;
}

/** Collects at most one error per class per line: the first occurrence explains it, more add noise. */
class LineErrors {
  readonly list: ValidationError[] = [];
  private readonly seen = new Set<ErrorClass>();
  constructor(private readonly line: number) {}
  has(code: ErrorClass): boolean {
    return this.seen.has(code);
  }
  add(code: ErrorClass, message: string, severity: Severity = 'error'): void {
    if (this.seen.has(code)) return;
    this.seen.add(code);
    this.list.push({ code, severity, line: this.line, message });
  }
}

export function checkLine(rules: LineRules, value: unknown, lineNo: number): ValidationError[] {
  const errors = new LineErrors(lineNo);
  if (!isObject(value)) {
    errors.add('data_type', `the line is ${describe(value)}, not a JSON object`);
    return errors.list;
  }
  for (const key of Object.keys(value)) {
    if (!rules.topLevelKeys.includes(key)) {
      errors.add('top_level_key', `unrecognized top-level key ${JSON.stringify(key)}`, rules.unknownTopLevelKey);
    }
  }
  const messages = value.messages;
  if (!Array.isArray(messages) || messages.length === 0) {
    errors.add('missing_messages_list', '`messages` is missing, not a list, or empty');
    return errors.list;
  }
  const calls = checkMessages(rules, messages, errors);
  if (rules.content === 'openai') {
    const images = imageProblem(messages);
    if (images !== null) errors.add(images.reason, images.detail);
  }
  checkTools(rules, value, calls, errors);
  if (value.parallel_tool_calls !== undefined) {
    if (typeof value.parallel_tool_calls !== 'boolean') {
      errors.add('data_type', '`parallel_tool_calls` is not a boolean');
    } else if (value.parallel_tool_calls === false && calls.maxPerTurn > 1) {
      errors.add('parallel_tool_calls_conflict', '`parallel_tool_calls` is false but an assistant turn makes several calls');
    }
  }
  const tokens = findSpecialTokensDeep(value);
  if (tokens.length > 0) {
    errors.add('special_token', `text holds special token${tokens.length > 1 ? 's' : ''} ${tokens.join(' ')}`, rules.specialToken);
  }
  return errors.list;
}

interface CallsSeen {
  names: Set<string>;
  maxPerTurn: number;
}

function checkMessages(rules: LineRules, messages: unknown[], errors: LineErrors): CallsSeen {
  const callIds = new Set<string>();
  const seen: CallsSeen = { names: new Set(), maxPerTurn: 0 };
  let hasAssistant = false;
  messages.forEach((message, i) => {
    const at = `message ${i}`;
    if (!isObject(message)) {
      errors.add('data_type', `${at} is ${describe(message)}, not an object`);
      return;
    }
    const role = message.role;
    if (role === undefined) errors.add('message_missing_key', `${at} has no role`);
    else if (typeof role !== 'string' || !rules.roles.includes(role)) {
      errors.add('unrecognized_role', `${at} has role ${JSON.stringify(role)} (allowed: ${rules.roles.join(', ')})`);
    }
    const knownRole = typeof role === 'string' && rules.roles.includes(role) ? role : null;
    if (role === 'assistant') hasAssistant = true;
    if (knownRole !== null) {
      const allowed = rules.messageKeys[knownRole] ?? [];
      for (const key of Object.keys(message)) {
        if (!allowed.includes(key)) {
          errors.add('message_unrecognized_key', `${at} (${knownRole}) has key ${JSON.stringify(key)}`, rules.unknownMessageKey);
        }
      }
    }
    const toolCalls = message.tool_calls;
    const hasCalls = role === 'assistant' && Array.isArray(toolCalls) && toolCalls.length > 0;
    checkContent(rules, message, hasCalls, at, errors);
    if (rules.reasoningKey !== null) {
      const reasoning = message[rules.reasoningKey];
      if (reasoning !== undefined && reasoning !== null && typeof reasoning !== 'string') {
        errors.add('reasoning_not_string', `${at}: ${rules.reasoningKey} is ${describe(reasoning)}, not a string`);
      }
      if (rules.contentExcludesReasoning && reasoning !== undefined && reasoning !== null
        && message.content !== undefined && message.content !== null) {
        errors.add('content_and_thinking', `${at} has both content and ${rules.reasoningKey}`);
      }
    }
    // Read from a file, a number keeps its text (a JsonNumber): 0 and 1 are compared by value, as OpenAI reads them.
    const weight = typeof message.weight === 'number' || isJsonNumber(message.weight) ? Number(String(message.weight)) : message.weight;
    if (role === 'assistant' && message.weight !== undefined && weight !== 0 && weight !== 1) {
      errors.add('weight_invalid', `${at}: weight is ${JSON.stringify(message.weight)}, not 0 or 1`);
    }
    if (toolCalls !== undefined && toolCalls !== null) {
      if (!Array.isArray(toolCalls)) errors.add('tool_call_malformed', `${at}: tool_calls is not a list`);
      else {
        seen.maxPerTurn = Math.max(seen.maxPerTurn, toolCalls.length);
        toolCalls.forEach((call, j) => checkToolCall(rules, call, `${at} tool call ${j}`, callIds, seen, errors));
      }
    }
    if (role === 'tool' && knownRole === 'tool') checkToolResult(message, at, callIds, errors);
  });
  // A result that answers no call, or names none, already explains a broken sequence.
  const sequence = errors.has('tool_call_id_unmatched') || errors.has('tool_missing_tool_call_id') ? null : toolSequenceProblem(messages.map(sequenceTurn));
  if (sequence !== null) errors.add('tool_sequence', `${sequence}: the chat API rejects it`);
  if (!hasAssistant) errors.add('example_missing_assistant_message', 'no assistant message');
  const last = messages[messages.length - 1];
  if (rules.lastMustBeAssistant !== null && !(isObject(last) && last.role === 'assistant')) {
    errors.add('last_message_not_assistant', 'the last message is not the assistant\'s', rules.lastMustBeAssistant);
  }
  return seen;
}

function checkContent(rules: LineRules, message: JsonObject, hasCalls: boolean, at: string, errors: LineErrors): void {
  const content = message.content;
  if (rules.content === 'nemo') {
    if (content !== undefined && content !== null && typeof content !== 'string') {
      errors.add('content_type', `${at}: content is ${describe(content)}, not a string`);
    }
    return;
  }
  if (content === undefined) {
    if (!hasCalls) errors.add('message_missing_key', `${at} has no content`);
    return;
  }
  if (content === null) {
    if (!hasCalls) errors.add('missing_content', `${at}: content is null without tool_calls`);
    return;
  }
  if (typeof content === 'string') {
    // An empty tool result is a legitimate answer ("the function returned nothing").
    if (rules.content === 'openai' && content === '' && !hasCalls && message.role !== 'tool') {
      errors.add('missing_content', `${at}: content is empty`);
    }
    return;
  }
  if (rules.content === 'openai' && message.role === 'user' && Array.isArray(content)) {
    if (content.length === 0) errors.add('missing_content', `${at}: content is an empty list`);
    else if (!content.every(isUserPart)) {
      errors.add('content_type', `${at}: content parts must be {type:"text",text} or {type:"image_url",image_url:{url}}`);
    }
    return;
  }
  errors.add('content_type', `${at}: content is ${describe(content)}, not a string`);
}

function isUserPart(part: unknown): boolean {
  if (!isObject(part)) return false;
  if (part.type === 'text') return typeof part.text === 'string';
  if (part.type === 'image_url') return isObject(part.image_url) && typeof part.image_url.url === 'string';
  return false;
}

/** A line's message as the tool-call sequence rule reads it; ids that are not strings count as none. */
function sequenceTurn(message: unknown): SequenceTurn {
  if (!isObject(message)) return { role: null, callIds: [], answers: null };
  const id = (value: unknown) => (typeof value === 'string' && value !== '' ? value : null);
  const calls = message.role === 'assistant' && Array.isArray(message.tool_calls) ? message.tool_calls : [];
  return { role: message.role, callIds: calls.map((call) => id(isObject(call) ? call.id : null)), answers: id(message.tool_call_id) };
}

function checkToolCall(
  rules: LineRules,
  call: unknown,
  at: string,
  callIds: Set<string>,
  seen: CallsSeen,
  errors: LineErrors,
): void {
  if (!isObject(call) || !isObject(call.function) || typeof call.function.name !== 'string') {
    errors.add('tool_call_malformed', `${at} is not {function:{name, arguments}}`);
    return;
  }
  if (rules.callNeedsIdAndType) {
    if (typeof call.id !== 'string' || call.id === '') errors.add('tool_call_malformed', `${at} has no id`);
    if (call.type !== 'function') errors.add('tool_call_malformed', `${at}: type is not "function"`);
  }
  if (typeof call.id === 'string') callIds.add(call.id);
  const name = call.function.name;
  seen.names.add(name);
  if (!TOOL_NAME_PATTERN.test(name)) {
    errors.add('tool_name_invalid', `${at}: name ${JSON.stringify(name)} does not match ^[a-zA-Z0-9_-]{1,64}$`);
  }
  const args = call.function.arguments;
  const problem = argumentsProblem(rules.argumentsForm, args);
  if (problem !== null) errors.add('arguments_type', `${at} (${name}): ${problem}`);
  else if (rules.argumentsForm === 'string-preferred' && isObject(args)) {
    errors.add(
      'arguments_type',
      `${at} (${name}): object arguments are re-serialized by the loader (json.dumps: non-ASCII escaped, spaces added, floats rewritten); write them as the JSON string`,
      'warning',
    );
  }
}

function argumentsProblem(form: LineRules['argumentsForm'], args: unknown): string | null {
  if (isObject(args)) return form === 'string' ? 'arguments must be a JSON string, not an object' : null;
  if (typeof args === 'string') {
    if (form === 'object') return 'arguments must be an object, not a string';
    return holdsJsonObject(args) ? null : 'arguments string does not hold a JSON object';
  }
  return `arguments are ${describe(args)}`;
}

function holdsJsonObject(text: string): boolean {
  try {
    return isObject(parseJsonText(text));
  } catch {
    return false;
  }
}

function checkToolResult(message: JsonObject, at: string, callIds: Set<string>, errors: LineErrors): void {
  const id = message.tool_call_id;
  if (typeof id !== 'string' || id === '') {
    errors.add('tool_missing_tool_call_id', `${at} (tool) has no tool_call_id`);
  } else if (!callIds.has(id)) {
    errors.add('tool_call_id_unmatched', `${at}: tool_call_id ${JSON.stringify(id)} matches no earlier call`);
  }
}

function checkTools(rules: LineRules, line: JsonObject, calls: CallsSeen, errors: LineErrors): void {
  if (line.tools === undefined) return;
  if (!Array.isArray(line.tools)) {
    errors.add('tool_definition_invalid', '`tools` is not a list');
    return;
  }
  const declared = new Set<string>();
  line.tools.forEach((tool, k) => {
    const fn = isObject(tool) && tool.type === 'function' && isObject(tool.function) ? tool.function : null;
    if (fn === null || typeof fn.name !== 'string') {
      errors.add('tool_definition_invalid', `tools[${k}] is not {type:"function", function:{name, …}}`);
      return;
    }
    declared.add(fn.name);
    if (!TOOL_NAME_PATTERN.test(fn.name)) {
      errors.add('tool_name_invalid', `tools[${k}]: name ${JSON.stringify(fn.name)} does not match ^[a-zA-Z0-9_-]{1,64}$`);
    }
    if (fn.parameters !== undefined && !isObject(fn.parameters)) {
      errors.add('tool_definition_invalid', `tools[${k}] (${fn.name}): parameters is not an object`);
    }
    if (rules.completeToolDefinitions) {
      const params = fn.parameters;
      const complete = typeof fn.description === 'string' && fn.description !== ''
        && isObject(params) && params.type === 'object' && isObject(params.properties);
      if (!complete) {
        errors.add('tool_definition_incomplete', `tools[${k}] (${fn.name}) needs a description and parameters {type:"object", properties}`);
      }
    }
  });
  const undeclared = [...calls.names].filter((n) => !declared.has(n));
  if (undeclared.length > 0) errors.add('tool_undeclared', `called but not in tools: ${undeclared.join(', ')}`);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (value instanceof String) return 'a number';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}
