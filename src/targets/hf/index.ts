/**
 * `hf`: a folder laid out as a Hugging Face Hub dataset repository, for the open-weight
 * trainers that read `messages` (and `tools`) rows: TRL's SFTTrainer, Unsloth (TRL underneath),
 * Axolotl's `chat_template` strategy, LLaMA-Factory, ms-swift. `data/train-0000K-of-0000N.parquet`
 * and `data/validation-…` (or `.jsonl` with `--file-format jsonl`), a dataset card README.md
 * whose front matter declares the files of each split, and ready-to-run entries for each trainer
 * beside them (card.ts). docs/targets.md says which commit of each trainer was read.
 *
 * Decisions beyond the spec:
 * - Tool-call arguments and the tool definitions are JSON text, never structs (rows.ts says
 *   why); the snippets parse them before the chat template, as Axolotl does itself.
 * - Reasoning is kept as `reasoning_content` by default (Qwen3's template renders it); `drop`
 *   and `inline` are options. `name` is not written (templates ignore it).
 * - Content is a string: images are not representable.
 * - `--train-on last` writes `weight: 0` on the earlier assistant turns, as openai does:
 *   Axolotl reads it (`message_field_training: weight`), TRL does not (use
 *   `--hf-shape prompt-completion`, whose completion is the last turn), LLaMA-Factory's
 *   option is `mask_history`.
 */
import path from 'node:path';
import type { Message } from '../../record.js';
import { checkLine, type LineRules } from '../line-checks.js';
import { chatProjection, isObject } from '../messages.js';
import {
  lastTurnWeighted,
  resolveReasoning,
  type JsonObject,
  type ProjectOptions,
  type Projection,
  type Target,
  type ToolDefinition,
  type ValidationError,
} from '../target.js';
import { finishHfDataset, hfFileName, listColumns } from './finish.js';
import { sftEntries, TRL_FILE, type FileFormat } from './card.js';
import { asChat, rowMessages, SHAPES, writtenRow, type Shape } from './rows.js';
import { validateHfFolder } from './folder.js';

const RULES: LineRules = {
  roles: ['system', 'user', 'assistant', 'tool'],
  messageKeys: {
    system: ['role', 'content'],
    user: ['role', 'content'],
    assistant: ['role', 'content', 'reasoning_content', 'tool_calls', 'weight'],
    tool: ['role', 'content', 'tool_call_id'],
  },
  // A key the writer never writes is one a loader added (or a file made elsewhere): the templates would render it.
  unknownMessageKey: 'error',
  topLevelKeys: ['messages', 'tools'],
  unknownTopLevelKey: 'error',
  content: 'nemo',
  argumentsForm: 'string',
  callNeedsIdAndType: true,
  reasoningKey: 'reasoning_content',
  lastMustBeAssistant: 'error',
  contentExcludesReasoning: false,
  completeToolDefinitions: false,
  // Not rejected by the loaders, but a template token in content can fake a turn boundary.
  specialToken: 'warning',
};

export const FILE_FORMATS: readonly FileFormat[] = ['parquet', 'jsonl'];

/** JSONL bytes past which a split gets another shard: its Parquet file is smaller (zstd), a few row groups of 2,048 rows. */
const SHARD_BYTES = 256 * 1024 * 1024;

/**
 * Where an hf folder goes: the folder of its shards (`data/` in it), its TRL script, and the
 * Axolotl and LLaMA-Factory entries where the target writes them (`sft`).
 */
export function hfNextSteps(training: readonly string[], trl: string, script: string, sft: boolean, axolotl = sft): string[] {
  if (training.length === 0) return [];
  const folder = path.dirname(path.dirname(training[0]));
  const hub = `datasets: load_dataset("${folder}"), or push the folder to the Hub as a dataset repository`;
  return [
    `next: ${trl}: python ${path.join(folder, script)}${axolotl ? `; Axolotl: ${path.join(folder, 'axolotl.yaml')}, run from ${folder}` : ''}`,
    sft ? `next: LLaMA-Factory: dataset_dir ${folder} with the entries of ${path.join(folder, 'dataset_info.json')}; ${hub}` : `next: ${hub}`,
  ];
}

function makeHf(fileFormat: FileFormat, shape: Shape): Target {
  return {
    name: 'hf',
    description: 'a Hugging Face dataset folder (Parquet + dataset card) for TRL, Unsloth, Axolotl, LLaMA-Factory',
    readBy: ['trl', 'sft', 'unsloth', 'axolotl', 'llama-factory', 'llamafactory', 'huggingface', 'hugging-face', 'datasets', 'parquet'],
    reasoningModes: ['keep', 'drop', 'inline'],
    defaultReasoning: 'keep',
    minExamples: 0,
    // The card declares the files of each split: no validation split rather than an empty one.
    rejectsEmptyValidation: true,
    noEmptyValidation: 'the card declares no validation split rather than an empty one (--validation-fraction 0)',
    defaultFileBytes: SHARD_BYTES,
    settings: { fileFormat, hfShape: shape },
    options: [
      { flags: '--file-format <format>', description: 'the data files: parquet (default) or jsonl, one row per line', choices: FILE_FORMATS, defaultValue: 'parquet' },
      { flags: '--hf-shape <shape>', description: 'rows of messages (default), or prompt-completion: every message before the last assistant turn, and that turn (what TRL trains on alone)', choices: SHAPES, defaultValue: 'messages' },
    ],
    // Axolotl's entries read messages rows: prompt-completion writes none (the card names the shape it needs).
    nextSteps: ({ training }) => hfNextSteps(training, 'TRL SFTTrainer or Unsloth', TRL_FILE, true, shape === 'messages'),
    trainer: {
      name: "the hf loader step (null keys left out, arguments and tools parsed)",
      input: (example) => asChat(example),
      raisesOnInconsistentMask: false,
    },

    configure(values) {
      return makeHf((values.fileFormat as FileFormat | undefined) ?? fileFormat, (values.hfShape as Shape | undefined) ?? shape);
    },

    fileName: (split, index, count) => hfFileName(split, index, count, fileFormat),

    project(messages: Message[], opts?: ProjectOptions): Projection {
      return chatProjection(messages, resolveReasoning(this, opts));
    },

    attachTools(example: JsonObject, tools: ToolDefinition[]): JsonObject {
      return tools.length === 0 ? example : { ...example, tools };
    },

    ...(shape === 'messages' ? { trainOnLastTurn: (example: JsonObject) => lastTurnWeighted(example) } : {}),

    written: (example: JsonObject) => writtenRow(example, shape),
    rowMessages,

    reportWarnings({ trainOn }) {
      if (shape === 'prompt-completion' && trainOn === 'all') {
        return ['--hf-shape prompt-completion: trainers train the completion (the last assistant turn) only, whatever --train-on says; the trained-token counts are of the completion'];
      }
      if (shape === 'messages' && trainOn === 'last') {
        return ["--train-on last: earlier assistant turns carry weight 0, which Axolotl reads (message_field_training: weight) and TRL's SFTTrainer ignores: for TRL export with --hf-shape prompt-completion"];
      }
      return [];
    },

    validateLine(value: unknown, lineNo: number): ValidationError[] {
      return checkRow(value, lineNo, shape);
    },

    finish: (context) =>
      finishHfDataset(context, {
        fileFormat,
        lists: listColumns(shape),
        rowsAre: shape === 'messages' ? '`messages` rows' : '`prompt` / `completion` rows (the completion is the last assistant turn)',
        llamaFactoryRows: true,
        entries: (c, card) => sftEntries(c, card, shape),
      }),
    validateFolder: (dir, options) => validateHfFolder(dir, options, { target: makeHf }),
  };
}

/** A written row checked as its messages are, plus what is the hf form's own: its shape, tools as text, no null key. */
function checkRow(value: unknown, lineNo: number, shape: Shape): ValidationError[] {
  if (!isObject(value)) return checkLine(RULES, value, lineNo);
  const errors: ValidationError[] = [];
  const add = (code: ValidationError['code'], message: string) => errors.push({ code, severity: 'error', line: lineNo, message });
  const nullAt = nullKey(value, '');
  if (nullAt !== null) add('invented_key', `${nullAt} is null: a key the example never had (a loader that unified the rows' keys added it), which a chat template would render`);
  const rowShape: Shape = 'prompt' in value || 'completion' in value ? 'prompt-completion' : 'messages';
  if (rowShape !== shape) add('top_level_key', `a ${rowShape} row in a ${shape} dataset`);
  if ('tools' in value && value.tools !== null && typeof value.tools !== 'string') add('tool_definition_invalid', '`tools` is not JSON text: definitions of different tools would be merged into one struct by a loader');
  let messages = value;
  if (rowShape === 'prompt-completion') {
    for (const key of Object.keys(value)) if (!['prompt', 'completion', 'tools'].includes(key)) add('top_level_key', `unrecognized top-level key ${JSON.stringify(key)}`);
    if (!Array.isArray(value.prompt) || !Array.isArray(value.completion)) {
      add('missing_messages_list', '`prompt` or `completion` is missing or not a list');
      return errors;
    }
    if (value.completion.length !== 1 || !isObject(value.completion[0]) || value.completion[0].role !== 'assistant') {
      add('last_message_not_assistant', '`completion` is not one assistant message');
    }
    messages = { messages: [...value.prompt, ...value.completion], ...('tools' in value ? { tools: value.tools } : {}) };
  }
  const parsed = rowMessages(messages);
  if (typeof parsed.tools === 'string') {
    add('tool_definition_invalid', '`tools` does not parse as JSON');
    delete parsed.tools;
  }
  return [...errors, ...checkLine(RULES, parsed, lineNo)];
}

/** The path of the first key whose value is null, or null. */
function nullKey(value: unknown, at: string): string | null {
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) {
      const found = nullKey(v, `${at}[${i}]`);
      if (found !== null) return found;
    }
  } else if (isObject(value)) {
    for (const [k, v] of Object.entries(value)) {
      const path = at === '' ? k : `${at}.${k}`;
      if (v === null) return path;
      const found = nullKey(v, path);
      if (found !== null) return found;
    }
  }
  return null;
}


export const hfTarget: Target = makeHf('parquet', 'messages');
