/**
 * `openai`: OpenAI supervised fine-tuning (chat), also read by Together,
 * Fireworks, Azure OpenAI and most open trainers.
 *
 * Decisions beyond the spec:
 * - `parallel_tool_calls` is never written: omitted means true, which is right
 *   for every example (false would only be a claim we cannot verify).
 * - `name` is kept on system/user/assistant messages when it matches the tool
 *   name pattern, dropped otherwise (it is a hint, never worth losing an example).
 * - Images are kept as content parts on user messages only; anywhere else they
 *   make the example not representable. OpenAI's image limits (`imageProblem`)
 *   drop an example with the reason: image_too_large, image_format, too_many_images.
 * - Empty system and user messages are left out (OpenAI rejects empty content);
 *   an empty assistant turn in the history makes the example not representable.
 * - String arguments are written verbatim when they hold a JSON object (the
 *   model's exact text); dict arguments become compact JSON.
 */
import type { Message } from '../../record.js';
import { imageProblem } from '../images.js';
import { checkLine, type LineRules } from '../line-checks.js';
import {
  argumentsString,
  calledToolNames,
  normalizeMessages,
  type NormalMessage,
  type NormalToolCall,
} from '../messages.js';
import { findSpecialTokensDeep } from '../special-tokens.js';
import { TOOL_NAME_PATTERN } from '../../tool-calls.js';
import { lastTurnWeighted, namedFiles, resolveReasoning, type JsonObject, type ProjectOptions, type Projection, type Target, type ToolDefinition } from '../target.js';

const RULES: LineRules = {
  roles: ['system', 'user', 'assistant', 'tool'],
  messageKeys: {
    system: ['role', 'content', 'name'],
    user: ['role', 'content', 'name'],
    assistant: ['role', 'content', 'name', 'tool_calls', 'weight'],
    tool: ['role', 'content', 'tool_call_id'],
  },
  unknownMessageKey: 'error',
  topLevelKeys: ['messages', 'tools', 'parallel_tool_calls', 'functions'],
  unknownTopLevelKey: 'error',
  content: 'openai',
  argumentsForm: 'string',
  callNeedsIdAndType: true,
  reasoningKey: null,
  lastMustBeAssistant: null,
  contentExcludesReasoning: false,
  completeToolDefinitions: false,
  specialToken: 'error',
};

class NotRepresentable extends Error {}

export const openaiTarget: Target = {
  name: 'openai',
  // No reasoning field exists, and folding reasoning into content would teach the model to print it.
  reasoningModes: ['drop'],
  defaultReasoning: 'drop',
  minExamples: 10,
  description: 'OpenAI supervised fine-tuning (chat JSONL), also read by Together, Fireworks and Azure OpenAI',
  readBy: ['together', 'fireworks', 'azure', 'azure-openai', 'jsonl', 'chatml'],
  // The Files API's limit.
  defaultFileBytes: 512 * 1024 * 1024,

  project(messages: Message[], opts?: ProjectOptions): Projection {
    resolveReasoning(this, opts);
    const normal = normalizeMessages(messages);
    if (!normal.ok) return normal;
    let written: JsonObject[];
    try {
      written = normal.messages.filter((m) => !isEmptyInstruction(m)).map(writeMessage);
    } catch (e) {
      if (e instanceof NotRepresentable) return { ok: false, reason: 'not_representable', detail: e.message };
      throw e;
    }
    const images = imageProblem(written);
    if (images !== null) return { ok: false, ...images };
    const example: JsonObject = { messages: written };
    const tokens = findSpecialTokensDeep(example);
    if (tokens.length > 0) {
      return { ok: false, reason: 'special_token', detail: `text holds ${tokens.join(' ')}, which OpenAI rejects` };
    }
    return { ok: true, example, toolNames: calledToolNames(normal.messages) };
  },

  attachTools(example: JsonObject, tools: ToolDefinition[]): JsonObject {
    return tools.length === 0 ? example : { ...example, tools };
  },

  /** The Files API, then the job's two file ids (one job per training file: a job takes one). */
  nextSteps({ training, validation }) {
    const all = [...training, ...validation];
    return [
      `next: upload ${namedFiles(all)} to OpenAI (Files API, purpose "fine-tune")`,
      `next: create the fine-tuning job with training_file = the id of ${namedFiles(training)}${validation.length > 0 ? ` and validation_file = the id of ${namedFiles(validation)}` : ''}`,
    ];
  },

  /** OpenAI trains every assistant message unless it carries `weight: 0`. */
  trainOnLastTurn(example: JsonObject): JsonObject {
    return lastTurnWeighted(example);
  },

  validateLine(value: unknown, lineNo: number) {
    return checkLine(RULES, value, lineNo);
  },
};

/** OpenAI rejects empty content; an empty system or user message carries nothing, so it is left out. */
function isEmptyInstruction(m: NormalMessage): boolean {
  return (m.role === 'system' || m.role === 'user') && m.content === '';
}

function writeMessage(m: NormalMessage, index: number): JsonObject {
  if (m.role === 'assistant' && m.content === '' && m.toolCalls.length === 0) {
    throw new NotRepresentable(`message ${index}: an earlier assistant turn is empty`);
  }
  if (typeof m.content !== 'string' && m.role !== 'user') {
    throw new NotRepresentable(`message ${index}: images are only accepted in user messages`);
  }
  const name = m.name !== null && TOOL_NAME_PATTERN.test(m.name) ? { name: m.name } : {};
  switch (m.role) {
    case 'system':
    case 'user':
      return { role: m.role, content: m.content, ...name };
    case 'tool':
      return { role: 'tool', content: m.content, tool_call_id: m.toolCallId };
    case 'assistant':
      return m.toolCalls.length === 0
        ? { role: 'assistant', content: m.content, ...name }
        : { role: 'assistant', content: m.content, ...name, tool_calls: m.toolCalls.map((c) => writeCall(c, index)) };
  }
}

function writeCall(c: NormalToolCall, index: number): JsonObject {
  if (!TOOL_NAME_PATTERN.test(c.name)) {
    throw new NotRepresentable(`message ${index}: tool name ${JSON.stringify(c.name)} does not match ^[a-zA-Z0-9_-]{1,64}$`);
  }
  return {
    id: c.id,
    type: 'function',
    function: { name: c.name, arguments: argumentsString(c) },
  };
}
