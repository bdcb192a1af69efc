/**
 * `hf-preference`: TRL's conversational preference rows (DPOTrainer, and the other trainers
 * that read `prompt`/`chosen`/`rejected`): `{"prompt": [messages], "chosen": [assistant],
 * "rejected": [assistant], "tools"?: [definitions]}` (TRL's "Dataset formats", preference,
 * conversational; `tools` where the prompt's model had any). Each side is a `nemo` example: the
 * Hugging Face chat-template form (reasoning as `reasoning_content`, arguments as the JSON
 * string templates print unchanged; see nemo/index.ts).
 *
 * TRL's DPOTrainer:
 *
 *     from datasets import load_dataset
 *     from trl import DPOConfig, DPOTrainer
 *     data = load_dataset("json", data_files={"train": "DIR/training.jsonl", "test": "DIR/validation.jsonl"})
 *     trainer = DPOTrainer(model=model, args=DPOConfig(output_dir="out"), train_dataset=data["train"],
 *                          eval_dataset=data["test"], processing_class=tokenizer)
 *     trainer.train()
 */
import { isObject } from '../messages.js';
import { nemoTarget } from '../nemo/index.js';
import { messageList, preferenceTarget } from '../preference-rows.js';
import type { JsonObject } from '../target.js';

const TOP_LEVEL = ['prompt', 'chosen', 'rejected', 'tools'];

function side(row: JsonObject, answer: unknown): JsonObject {
  const example: JsonObject = { messages: [...(row.prompt as JsonObject[]), ...(answer as JsonObject[])] };
  if (row.tools !== undefined) example.tools = row.tools;
  return example;
}

export const hfPreferenceTarget = preferenceTarget({
  name: 'hf-preference',
  description: "TRL's conversational preference rows (DPOTrainer): prompt, chosen, rejected as message lists, tools where present",
  base: nemoTarget,
  minExamples: 1,
  emptyRejected: true,
  row(prompt, chosen, rejected, tools) {
    const row: JsonObject = { prompt, chosen: [chosen], rejected: [rejected] };
    if (tools.length > 0) row.tools = tools;
    return { ok: true, row };
  },
  sides(row) {
    if (!Array.isArray(row.prompt) || !Array.isArray(row.chosen) || !Array.isArray(row.rejected)) return null;
    return { chosen: side(row, row.chosen), rejected: side(row, row.rejected) };
  },
  shape(row, error) {
    for (const key of Object.keys(row)) if (!TOP_LEVEL.includes(key)) error('top_level_key', `unrecognized top-level key ${JSON.stringify(key)}`, 'warning');
    messageList(row.prompt, 'prompt', error);
    for (const name of ['chosen', 'rejected']) {
      if (!messageList(row[name], name, error)) continue;
      if ((row[name] as JsonObject[]).some((m) => m.role !== 'assistant')) error('unrecognized_role', `\`${name}\` holds a message that is not the assistant's`);
    }
    if (row.tools !== undefined && (!Array.isArray(row.tools) || !row.tools.every(isObject))) error('tool_definition_invalid', '`tools` is not a list of tool definitions');
  },
});
