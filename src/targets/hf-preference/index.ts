/**
 * `hf-preference`: TRL's conversational preference rows (DPOTrainer, and the trainers that read
 * `prompt`/`chosen`/`rejected`): `{"prompt": [messages], "chosen": [assistant], "rejected":
 * [assistant], "tools"?: "<definitions as JSON text>"}` (TRL's "Dataset formats", preference,
 * conversational; DPOTrainer parses `tools` given as text). Written like `--format hf`: a Hugging
 * Face dataset folder, `data/train-0000K-of-0000N.parquet` (or `.jsonl` with `--file-format
 * jsonl`), a dataset card, and `train_dpo.py` with DPOTrainer (trl.ts). Each side is an `hf`
 * example: the same messages, reasoning as `reasoning_content`, arguments as JSON text.
 */
import { writeJson } from '../../canonical/json-value.js';
import { finishHfDataset, hfFileName } from '../hf/finish.js';
import type { FileFormat } from '../hf/card.js';
import { TRL_DPO_FILE, trlPreference } from './trl.js';
import { hfNextSteps, hfTarget } from '../hf/index.js';
import { validateHfFolder } from '../hf/folder.js';
import { rowMessages } from '../hf/rows.js';
import { trainerSetup } from '../hf/trainer-setup.js';
import { messageList, preferenceTarget } from '../preference-rows.js';
import type { JsonObject, Target } from '../target.js';

const TOP_LEVEL = ['prompt', 'chosen', 'rejected', 'tools'];
/** The columns of message lists in a row, in order. */
const LISTS = ['prompt', 'chosen', 'rejected'];
const FILE_FORMATS: readonly FileFormat[] = ['parquet', 'jsonl'];

function side(row: JsonObject, answer: unknown): JsonObject {
  const example: JsonObject = { messages: [...(row.prompt as JsonObject[]), ...(answer as JsonObject[])] };
  if (row.tools !== undefined) example.tools = row.tools;
  return example;
}

function makeHfPreference(fileFormat: FileFormat): Target {
  const target = preferenceTarget({
    name: 'hf-preference',
    description: "TRL's conversational preference rows (DPOTrainer): prompt, chosen, rejected as message lists, in a Hugging Face dataset folder like hf",
    base: hfTarget,
    minExamples: 1,
    rejectsEmptyValidation: hfTarget.rejectsEmptyValidation,
    emptyRejected: true,
    row(prompt, chosen, rejected, tools) {
      const row: JsonObject = { prompt, chosen: [chosen], rejected: [rejected] };
      // As text, as hf writes them: no loader merges the definitions of different tools into one struct.
      if (tools.length > 0) row.tools = writeJson(tools);
      return { ok: true, row };
    },
    sides(row) {
      if (!Array.isArray(row.prompt) || !Array.isArray(row.chosen) || !Array.isArray(row.rejected)) return null;
      return { chosen: side(row, row.chosen), rejected: side(row, row.rejected) };
    },
    shape(row, error) {
      for (const key of Object.keys(row)) if (!TOP_LEVEL.includes(key)) error('top_level_key', `unrecognized top-level key ${JSON.stringify(key)}`);
      messageList(row.prompt, 'prompt', error);
      for (const name of ['chosen', 'rejected']) {
        if (!messageList(row[name], name, error)) continue;
        if ((row[name] as JsonObject[]).length !== 1 || (row[name] as JsonObject[])[0].role !== 'assistant') error('last_message_not_assistant', `\`${name}\` is not one assistant message`);
      }
    },
  });
  return {
    ...target,
    noEmptyValidation: hfTarget.noEmptyValidation,
    defaultFileBytes: hfTarget.defaultFileBytes,
    settings: { fileFormat },
    options: [{ flags: '--file-format <format>', description: 'the data files: parquet (default) or jsonl, one row per line', choices: FILE_FORMATS, defaultValue: 'parquet' }],
    configure: (values) => makeHfPreference((values.fileFormat as FileFormat | undefined) ?? fileFormat),
    fileName: (split, index, count) => hfFileName(split, index, count, fileFormat),
    // Counted as the chosen conversation, its tools parsed as the template gets them.
    rowMessages: (row) => rowMessages(target.preference!.sides(row)?.chosen ?? row),
    finish: (context) =>
      finishHfDataset(context, {
        fileFormat,
        lists: LISTS,
        rowsAre: "preference pairs: `prompt`, `chosen` and `rejected` message lists, TRL's conversational preference rows (report.json's `pairs` says which signal gave each: a quality stage naming the rejected answer, or scores)",
        llamaFactoryRows: false,
        tag: 'dpo',
        entries: (context, card) => [[TRL_DPO_FILE, trlPreference(card, trainerSetup(context.report, card.folder))]],
      }),
    nextSteps: ({ training }) => hfNextSteps(training, 'TRL DPOTrainer', TRL_DPO_FILE, false),
    validateFolder: (dir, options) => validateHfFolder(dir, options, { target: makeHfPreference, lists: LISTS }),
  };
}

export const hfPreferenceTarget: Target = makeHfPreference('parquet');
