/**
 * `openai-preference`: OpenAI's preference fine-tuning (DPO) rows, which Azure OpenAI, Together
 * and Fireworks take too: `{"input": {"messages", "tools"?}, "preferred_output": [assistant],
 * "non_preferred_output": [assistant]}` (OpenAI's guide "Direct preference optimization", Data
 * format). Each side is an `openai` example: the prompt's messages and the answer as the
 * supervised target writes them (reasoning dropped, arguments as JSON strings).
 *
 * Decisions beyond the guide:
 * - An empty rejected answer (an `empty` pair) is not representable: OpenAI's chat rows reject
 *   an assistant message without content or tool calls, and nothing says its preference rows
 *   take one.
 * - `parallel_tool_calls` is never written (omitted means true), as for `openai`.
 */
import { isObject } from '../messages.js';
import { openaiTarget } from '../openai/index.js';
import { isEmptyAnswer, messageList, preferenceTarget } from '../preference-rows.js';
import { namedFiles, type JsonObject } from '../target.js';

const TOP_LEVEL = ['input', 'preferred_output', 'non_preferred_output'];
const INPUT_KEYS = ['messages', 'tools', 'parallel_tool_calls'];

function side(row: JsonObject, output: unknown): JsonObject {
  const input = row.input as JsonObject;
  const example: JsonObject = { messages: [...(input.messages as JsonObject[]), ...(output as JsonObject[])] };
  if (input.tools !== undefined) example.tools = input.tools;
  if (input.parallel_tool_calls !== undefined) example.parallel_tool_calls = input.parallel_tool_calls;
  return example;
}

export const openaiPreferenceTarget = preferenceTarget({
  name: 'openai-preference',
  description: "OpenAI preference fine-tuning (DPO): input.messages, preferred_output, non_preferred_output (Azure, Together, Fireworks too)",
  base: openaiTarget,
  minExamples: 10,
  emptyRejected: false,
  nextSteps: ({ training, validation }) => [
    `next: upload ${namedFiles([...training, ...validation])} to OpenAI (Files API, purpose "fine-tune")`,
    `next: create the fine-tuning job with method {"type": "dpo"}, training_file = the id of ${namedFiles(training)}${validation.length > 0 ? ` and validation_file = the id of ${namedFiles(validation)}` : ''}`,
  ],
  row(prompt, chosen, rejected, tools) {
    if (isEmptyAnswer(chosen) || isEmptyAnswer(rejected)) {
      const side = isEmptyAnswer(chosen) ? 'chosen' : 'rejected';
      return { ok: false, reason: 'not_representable', detail: `the ${side === 'chosen' ? 'preferred' : 'non-preferred'} answer is empty, and OpenAI's rows take an assistant message with content or tool calls`, side };
    }
    const input: JsonObject = { messages: prompt };
    if (tools.length > 0) input.tools = tools;
    return { ok: true, row: { input, preferred_output: [chosen], non_preferred_output: [rejected] } };
  },
  sides(row) {
    if (!isObject(row.input) || !Array.isArray(row.input.messages) || !Array.isArray(row.preferred_output) || !Array.isArray(row.non_preferred_output)) return null;
    return { chosen: side(row, row.preferred_output), rejected: side(row, row.non_preferred_output) };
  },
  shape(row, error) {
    for (const key of Object.keys(row)) if (!TOP_LEVEL.includes(key)) error('top_level_key', `unrecognized top-level key ${JSON.stringify(key)}`);
    if (!isObject(row.input)) {
      error('missing_messages_list', '`input` is missing or not an object');
      return;
    }
    for (const key of Object.keys(row.input)) if (!INPUT_KEYS.includes(key)) error('top_level_key', `unrecognized key ${JSON.stringify(key)} in input`);
    messageList(row.input.messages, 'input.messages', error);
    for (const name of ['preferred_output', 'non_preferred_output']) {
      if (!messageList(row[name], name, error)) continue;
      const roles = (row[name] as JsonObject[]).map((m) => m.role);
      if (roles.some((role) => role !== 'assistant')) error('unrecognized_role', `\`${name}\` holds a ${JSON.stringify(roles.find((r) => r !== 'assistant'))} message: only assistant messages are outputs`);
    }
  },
});
