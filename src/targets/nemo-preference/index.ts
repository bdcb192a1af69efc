/**
 * `nemo-preference`: NeMo Customizer's DPO rows (`training.type: dpo`): `{"prompt", "chosen_response",
 * "rejected_response"}`, the responses as text and the prompt as the conversation before them,
 * a list of `{"role", "content"}` messages (the NeMo Agent toolkit's DPO adapter for the Customizer
 * writes these rows, the prompt as a message list with `use_full_message_history`). Each side is an
 * `openai` example (reasoning dropped).
 *
 * Decisions beyond the schema:
 * - An answer that calls tools, or a prompt holding tool calls or tool results, is not
 *   representable: the row's responses are text, and its messages role and content only.
 * - An empty rejected answer is written as "" (an `empty` pair): the schema asks for a string.
 * - No empty validation file, as for `nemo-customizer`.
 */
import { nemoCustomizerTarget } from '../nemo-customizer/index.js';
import { openaiTarget } from '../openai/index.js';
import { isEmptyAnswer, messageList, preferenceTarget } from '../preference-rows.js';
import type { JsonObject } from '../target.js';

const TOP_LEVEL = ['prompt', 'chosen_response', 'rejected_response'];

export const nemoPreferenceTarget = preferenceTarget({
  name: 'nemo-preference',
  description: "NeMo Customizer DPO rows: prompt, chosen_response, rejected_response",
  base: openaiTarget,
  minExamples: 1,
  rejectsEmptyValidation: nemoCustomizerTarget.rejectsEmptyValidation,
  emptyRejected: true,
  nextSteps: nemoCustomizerTarget.nextSteps,
  row(prompt, chosen, rejected) {
    const tools = prompt.find((m) => m.role === 'tool' || m.tool_calls !== undefined);
    if (tools !== undefined) return { ok: false, reason: 'not_representable', detail: 'the prompt holds tool calls or tool results, which NeMo Customizer DPO rows cannot write', side: 'both' };
    for (const [name, answer] of [['chosen', chosen], ['rejected', rejected]] as const) {
      if (answer.tool_calls !== undefined) return { ok: false, reason: 'not_representable', detail: `the ${name} answer calls tools, and a DPO response is text`, side: name };
    }
    if (isEmptyAnswer(chosen)) return { ok: false, reason: 'not_representable', detail: 'the chosen answer is empty', side: 'chosen' };
    return {
      ok: true,
      row: { prompt: prompt.map((m) => ({ role: m.role, content: m.content })), chosen_response: chosen.content ?? '', rejected_response: rejected.content ?? '' },
    };
  },
  sides(row) {
    if (!Array.isArray(row.prompt) || typeof row.chosen_response !== 'string' || typeof row.rejected_response !== 'string') return null;
    const prompt = row.prompt as JsonObject[];
    return {
      chosen: { messages: [...prompt, { role: 'assistant', content: row.chosen_response }] },
      rejected: { messages: [...prompt, { role: 'assistant', content: row.rejected_response }] },
    };
  },
  shape(row, error) {
    for (const key of Object.keys(row)) if (!TOP_LEVEL.includes(key)) error('top_level_key', `unrecognized top-level key ${JSON.stringify(key)}`);
    messageList(row.prompt, 'prompt', error);
    for (const name of ['chosen_response', 'rejected_response']) {
      if (typeof row[name] !== 'string') error('content_type', `\`${name}\` is missing or not a string`);
    }
  },
});
