/**
 * What an hf dataset folder holds beside its data: the dataset card README.md (YAML front matter
 * the Hub and `datasets.load_dataset(folder)` read: configs with each split's files, features,
 * split sizes; then where the data came from, what was dropped, the token counts and the command)
 * and a ready-to-run entry per trainer, each naming the files that exist:
 * - `dataset_info.json`: LLaMA-Factory's dataset registry (sharegpt formatting, OpenAI-style tags).
 * - `axolotl.yaml`: an Axolotl `datasets:` block (`type: chat_template`).
 * - `train_trl.py`: TRL's SFTTrainer on this folder, with the loader step.
 * docs/targets.md names the commit of each trainer these keys were read from.
 */
import path from 'node:path';
import { TRACES_VERSION } from '../../version.js';
import { printable } from '../../format.js';
import type { FinishContext, SourcesSummary } from '../target.js';
import type { Split } from '../../pipeline/split.js';
import type { Shape } from './rows.js';
import { SHAREGPT_TAGS } from './llama-factory.js';
import { GENERATION_BLOCK } from '../model/render.js';
import { QWEN3_TRAINING_TEMPLATE } from '../model/shipped-templates.js';
import { quoted, trainerSetup, type TrainerSetup } from './trainer-setup.js';

export type FileFormat = 'parquet' | 'jsonl';

/** The columns of a dataset's files: its list columns and the message keys they use, and whether rows have tools. */
export interface RowSchema {
  /** Bytes of the longest line of the dataset's files. */
  longestLine: number;
  lists: string[];
  messageKeys: string[];
  tools: boolean;
  /** Whether any row of each file holds `tools`, in the order of the files: a JSONL file has the column only then. */
  toolsByFile: boolean[];
}

/**
 * How a target lays out an hf dataset folder (this target's SFT rows, or another's, such as
 * preference pairs): what `finishHfDataset` converts and describes.
 */
export interface HfDatasetLayout {
  fileFormat: FileFormat;
  /** The columns holding lists of messages, in order: ['messages'], ['prompt', 'completion'], ['prompt', 'chosen', 'rejected']. */
  lists: readonly string[];
  /** What one row is, for the card's first line (Markdown). */
  rowsAre: string;
  /** Whether LLaMA-Factory gets rows of its own where the examples call tools (llama-factory.ts reads `messages`, or `prompt` + `completion`). */
  llamaFactoryRows: boolean;
  /** The card's tag for the kind of training (default `sft`; `dpo` for preference pairs). */
  tag?: string;
  /** The trainers' entries beside the card: [file name, text]. */
  entries(context: FinishContext, card: CardDataset): [string, string][];
}

export interface CardDataset {
  /** Under --out ('' without --group-by). */
  folder: string;
  /** Relative to the dataset folder, `/`-separated. */
  /** `tools`: whether the file has a tools column (a JSONL file: whether any row holds one). */
  files: { path: string; split: Split; examples: number; tools: boolean }[];
  schema: RowSchema;
  sources: SourcesSummary | null;
  /** LLaMA-Factory's own rows, where the examples call tools (llama-factory.ts); null: it reads the data files. */
  llamaFactory: LlamaFactoryFiles | null;
}

export interface LlamaFactoryFiles {
  files: { path: string; split: Split; examples: number; tools: boolean }[];
  /** Rows it could not read whole, by reason. */
  skipped: Record<string, number>;
}

/** The folder of LLaMA-Factory's own rows in a dataset folder. */
export const LLAMA_FACTORY_DIR = 'llamafactory';

export const CARD_FILE = 'README.md';
export const LLAMA_FACTORY_FILE = 'dataset_info.json';
export const AXOLOTL_FILE = 'axolotl.yaml';
export const TRL_FILE = 'train_trl.py';
/** The marked blank the card leaves for the licence: traces cannot know which applies to the recordings. */
export const LICENCE_BLANK = 'TODO-licence';

/** The Hub's name of a split. */
export function hubSplit(split: Split): 'train' | 'validation' {
  return split === 'training' ? 'train' : 'validation';
}

/** A YAML double-quoted scalar: JSON's escapes are YAML's. */
function q(text: string): string {
  return JSON.stringify(text);
}

/** The features of the card, as `datasets` writes them (`Features._to_yaml_list`). */
function featuresYaml(schema: RowSchema): string[] {
  const message: string[] = [];
  for (const key of schema.messageKeys) {
    if (key === 'tool_calls') {
      message.push(
        '    - name: tool_calls',
        '      list:',
        '      - name: id',
        '        dtype: string',
        '      - name: type',
        '        dtype: string',
        '      - name: function',
        '        struct:',
        '        - name: name',
        '          dtype: string',
        '        - name: arguments',
        '          dtype: string',
      );
    } else message.push(`    - name: ${key}`, `      dtype: ${key === 'weight' ? 'int32' : 'string'}`);
  }
  return [...schema.lists.flatMap((list) => [`  - name: ${list}`, '    list:', ...message]), ...(schema.tools ? ['  - name: tools', '    dtype: string'] : [])];
}

function frontMatter(card: CardDataset, layout: HfDatasetLayout): string {
  const splits = (['training', 'validation'] as const).filter((s) => card.files.some((f) => f.split === s));
  return [
    '---',
    `# license: ${LICENCE_BLANK}  (traces leaves it blank: choose the licence that applies to these recordings, then uncomment)`,
    'configs:',
    '- config_name: default',
    '  data_files:',
    ...splits.flatMap((s) => [`  - split: ${hubSplit(s)}`, '    path:', ...card.files.filter((f) => f.split === s).map((f) => `    - ${q(f.path)}`)]),
    'dataset_info:',
    '  features:',
    ...featuresYaml(card.schema),
    '  splits:',
    ...splits.flatMap((s) => [`  - name: ${hubSplit(s)}`, `    num_examples: ${card.files.filter((f) => f.split === s).reduce((n, f) => n + f.examples, 0)}`]),
    'tags:',
    '- traces',
    `- ${layout.tag ?? 'sft'}`,
    ...(card.schema.messageKeys.includes('tool_calls') ? ['- tool-calling'] : []),
    '---',
    '',
  ].join('\n');
}

/**
 * Text of a Markdown table cell: no line break, pipes escaped, and control characters shown as
 * escapes (`printable`): a recorded name with a terminal sequence must not run in the terminal
 * of whoever prints the card (cat README.md), as it runs in no traces output.
 */
function cell(text: string): string {
  return printable(text.replace(/[\r\n]+/g, ' ')).replace(/\|/g, '\\|').replace(/`/g, "'");
}

interface SplitTokens {
  tokens: number;
  trained: number;
}

function tokensOf(report: Record<string, unknown>, folder: string): Map<Split, SplitTokens> {
  const out = new Map<Split, SplitTokens>();
  for (const f of (report.files as { dataset: string | null; split: Split; tokens: { total: { total: number }; assistant: { total: number } } }[]) ?? []) {
    if ((f.dataset ?? '') !== folder) continue;
    const t = out.get(f.split) ?? { tokens: 0, trained: 0 };
    out.set(f.split, { tokens: t.tokens + f.tokens.total.total, trained: t.trained + f.tokens.assistant.total });
  }
  return out;
}

function body(context: FinishContext, card: CardDataset, layout: HfDatasetLayout, entries: ReadonlySet<string>): string {
  const report = context.report;
  const lines: string[] = [`# Fine-tuning dataset (traces ${TRACES_VERSION})`, ''];
  lines.push(
    `Conversations of recorded LLM calls, exported by [traces](https://www.npmjs.com/package/llm-traces-to-dataset) (the \`traces\` command of the npm package llm-traces-to-dataset) as ${layout.rowsAre}${card.schema.tools ? ' with `tools`' : ''}.`,
    '',
    '## Licence',
    '',
    `**${LICENCE_BLANK}**: traces does not know the licence of these recordings and leaves it blank. Fill it in here and in the front matter before you publish.`,
    '',
    '## Files',
    '',
    '| split | file | examples |',
    '|---|---|---|',
    ...card.files.map((f) => `| ${hubSplit(f.split)} | \`${f.path}\` | ${f.examples} |`),
    '',
    '## Loading',
    '',
    'Tool-call `arguments` and `tools` are JSON text, so that no loader merges the keys of different tools into one struct (and hands a row keys it never had, as nulls).',
    'In a Parquet file every message has every message key; those a message did not have are null. Before the chat template, leave null keys out and parse `arguments` and `tools` (the templates of Qwen2.5 and Llama 3.1 print a text argument as a quoted string):',
    '',
    '```python',
    ...PY_AS_CHAT,
    '```',
    '',
    ...(entries.has(TRL_FILE) ? [`- TRL SFTTrainer (and Unsloth, which trains through it): \`python ${TRL_FILE}\` (the loader step, then SFTTrainer on the tokenized rows).`] : []),
    ...(entries.has(AXOLOTL_FILE) ? [`- Axolotl: \`${AXOLOTL_FILE}\`, its \`base_model\` and \`datasets:\` entries with the chat template the counts used, run from this folder (Axolotl parses string arguments and tools itself, and leaves null keys out).`] : []),
    ...(layout.lists.includes('completion') && entries.has(TRL_FILE) ? ['- Axolotl: its `chat_template` strategy reads rows of `messages`, which prompt-completion rows are not: export with `--hf-shape messages` (and `--train-on last` to train the last assistant turn only).'] : []),
    ...(entries.has(LLAMA_FACTORY_FILE) ? [`- LLaMA-Factory: \`dataset_dir\` this folder, \`dataset\` the entries of \`${LLAMA_FACTORY_FILE}\`${llamaFactoryNote(card)}. It renders with a template of its own, not a Jinja one: set \`template:\` in its training config to the model's (\`qwen3\` for Qwen3).`] : []),
    ...[...entries].filter((name) => ![TRL_FILE, AXOLOTL_FILE, LLAMA_FACTORY_FILE].includes(name)).map((name) => `- \`${name}\`: written for this dataset by traces.`),
    '- `datasets`: `load_dataset("path/to/this/folder")` reads the splits above.',
    '',
  );
  const sources = card.sources;
  if (sources !== null) {
    lines.push('## Where the data came from', '');
    lines.push(`- Recorders: ${sources.recorders.map((r) => `${r.source}${r.versions.length > 0 ? ` (${r.versions.map(cell).join(', ')})` : ''}`).join(', ')}`);
    if (sources.period !== null) lines.push(`- Period of the calls: ${sources.period.from} to ${sources.period.to}`);
    if (sources.models.length > 0) lines.push(`- Models: ${sources.models.map((m) => `${cell(m.model)} (${m.examples})`).join(', ')}`);
    lines.push('', '| program | module | examples |', '|---|---|---|');
    for (const p of sources.programs) for (const m of p.modules) lines.push(`| ${cell(p.program)} | ${cell(m.module)} | ${m.examples} |`);
    lines.push('');
  }
  const dropped = Object.entries((report.dropped as Record<string, number>) ?? {}).filter(([, n]) => n > 0);
  lines.push('## What was dropped', '');
  if (dropped.length === 0) lines.push('Nothing: every record read became an example.', '');
  else {
    lines.push(`Of ${String(report.records_read)} records read (the whole export${card.folder === '' ? '' : ', every dataset'}; \`_traces/manifest.jsonl\` lists each with its reason, \`report.json\` has the counts):`, '', '| reason | records |', '|---|---|');
    for (const [reason, n] of dropped.sort((a, b) => b[1] - a[1])) lines.push(`| ${reason} | ${n} |`);
    lines.push('');
  }
  lines.push(...flaggedParagraph(report));
  const tokens = tokensOf(report, card.folder);
  const byModel = report.chat_template !== undefined;
  lines.push(
    '## Token counts',
    '',
    byModel
      ? `By the model folder's own chat template and tokenizer (\`--tokenizer ${cell(String(report.tokenizer))}\`), after the loader step above, training on ${String(report.train_on)} assistant turns.`
      : `Estimated with the ${cell(String(report.tokenizer))} encoding (give \`--tokenizer DIR\`, a model folder, for the model's own counts).`,
    '',
    ...(entries.has(TRL_FILE) || entries.has(AXOLOTL_FILE) || entries.has(LLAMA_FACTORY_FILE) ? [WHOSE_COUNTS, ''] : []),
    // With generation blocks train_trl.py trains the completion's block, which is what is counted.
    ...(layout.lists.includes('completion') && entries.has(TRL_FILE) && !trainerSetup(report, card.folder).generationBlocks ? [TRL_COMPLETION_COUNTS, ''] : []),
    '| split | tokens | trained tokens |',
    '|---|---|---|',
    ...[...tokens].map(([split, t]) => `| ${hubSplit(split)} | ${t.tokens} | ${t.trained} |`),
    '',
    'Each example\'s counts are in `_traces/examples.jsonl`, beside the file and line it was written to.',
    '',
    '## How it was made',
    '',
    '```sh',
    `traces ${((report.arguments as string[]) ?? []).map(shellWord).join(' ')}`,
    '```',
    '',
  );
  return lines.join('\n');
}

/**
 * Seen running TRL on prompt-completion rows (the trainer check of issue 52) with a template
 * without generation blocks: TRL's split makes the completion what the template writes after
 * the prompt, and a ChatML template ends a turn with a line break.
 */
const TRL_COMPLETION_COUNTS =
  "With these prompt-completion rows and a chat template without `{% generation %}` blocks, TRL's SFTTrainer trains one token more per example than the trained tokens counted here: the line break the chat template writes after the completion's end-of-turn token (`<|im_end|>` and a newline in ChatML templates such as Qwen3's), which TRL takes as part of the completion.";

/** Which trainer the trained-token counts are of: each masks its own way. */
const WHOSE_COUNTS =
  "Trained tokens are counted as AutoModel's ChatDataset and this folder's TRL script mask them: the chat template's `{% generation %}` blocks where it has them, else each assistant turn located by rendering the conversation up to it. " +
  "Axolotl and LLaMA-Factory mask by their own rules, so their counts differ a little: Axolotl finds each assistant turn in the rendered text and leaves out Qwen3's empty `<think>` block; LLaMA-Factory renders with its own template and also trains the line break after each answer.";

/** Where LLaMA-Factory's rows are its own: which, and how many rows it could not read whole. */
function llamaFactoryNote(card: CardDataset): string {
  const own = card.llamaFactory;
  if (own === null) return '';
  const written = own.files.reduce((n, f) => n + f.examples, 0);
  if (written === 0) return `: none of its rows is one LLaMA-Factory's sharegpt converter reads whole (${Object.entries(own.skipped).map(([reason, n]) => `${n} with ${reason}`).join(', ')}), so there is no entry`;
  const skipped = Object.entries(own.skipped).sort((a, b) => b[1] - a[1]);
  const total = written + skipped.reduce((n, [, k]) => n + k, 0);
  return (
    `, which point at \`${LLAMA_FACTORY_DIR}/\`: its sharegpt converter reads a list of messages, role and content only, so there each tool call is a \`function_call\` turn ({"name", "arguments"} as JSON text) and each result a \`tool\` turn, turns alternating as it requires (${written} of ${total} rows` +
    (skipped.length === 0 ? ')' : `; left out, as it would not read them whole: ${skipped.map(([reason, n]) => `${n} with ${reason}`).join(', ')})`)
  );
}

/** A word as a POSIX shell reads it back. */
function shellWord(word: string): string {
  return /^[A-Za-z0-9_./:=@%+,-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The loader step in Python: the twin of rows.ts `asChat`. */
export const PY_AS_CHAT = [
  'import json',
  '',
  'def as_chat(messages):',
  '    """A row\'s messages as the chat template takes them: null keys left out, arguments as mappings."""',
  '    chat = []',
  '    for message in messages:',
  '        message = {k: v for k, v in message.items() if v is not None}',
  '        if message.get("tool_calls"):',
  '            message["tool_calls"] = [',
  '                {k: v for k, v in call.items() if v is not None}',
  '                | {"function": {"name": call["function"]["name"], "arguments": json.loads(call["function"]["arguments"])}}',
  '                for call in message["tool_calls"]',
  '            ]',
  '        chat.append(message)',
  '    return chat',
  '',
  'def as_tools(row):',
  '    return json.loads(row["tools"]) if row.get("tools") else None',
];

function llamaFactory(card: CardDataset): string {
  const entries: Record<string, unknown> = {};
  const own = card.llamaFactory;
  for (const split of ['training', 'validation'] as const) {
    // Its own rows where the examples call tools; the data files (messages rows) otherwise.
    const files = (own?.files ?? card.files).filter((f) => f.split === split);
    files.forEach((f, i) => {
      entries[`traces_${hubSplit(split)}${files.length > 1 ? `_${String(i).padStart(5, '0')}` : ''}`] = {
        file_name: f.path,
        formatting: 'sharegpt',
        // Only a column the file holds: its loader indexes each declared one in every row (KeyError: 'tools').
        columns: { messages: 'messages', ...(f.tools ? { tools: 'tools' } : {}) },
        tags: own !== null ? SHAREGPT_TAGS : { role_tag: 'role', content_tag: 'content', user_tag: 'user', assistant_tag: 'assistant', observation_tag: 'tool', system_tag: 'system' },
      };
    });
  }
  return `${JSON.stringify(entries, null, 2)}\n`;
}

/**
 * Axolotl's `datasets:` entries, one per data file: a file path loads as its one split, `train`
 * (`utils/data/shared.py` `_load_from_local_path`), where the folder itself (`path: .`) reached
 * `datasets.load_dataset(".")`, which fails. Paths are relative to this folder: run Axolotl here.
 * The tokenizer and template are the ones the counts used (`base_model`, `chat_template`).
 */
function axolotl(card: CardDataset, setup: TrainerSetup): string {
  const template = setup.template === null ? ['    chat_template: tokenizer_default'] : ['    chat_template: jinja', `    chat_template_jinja: ${quoted(setup.template)}`];
  const entries = (split: Split) =>
    card.files
      .filter((f) => f.split === split)
      .flatMap((f) => [
        `  - path: ${f.path}`,
        `    ds_type: ${f.path.endsWith('.jsonl') ? 'json' : 'parquet'}`,
        '    split: train  # a single file is one split, train, whatever it holds',
        '    type: chat_template',
        ...template,
        '    field_messages: messages',
        ...(f.tools ? ['    field_tools: tools'] : []),
        '    roles_to_train: ["assistant"]',
        '    train_on_eos: turn',
        ...(setup.trainOn === 'last' ? ['    message_field_training: weight  # --train-on last: earlier assistant turns carry weight 0'] : []),
      ]);
  return [
    '# Axolotl: the model and dataset entries for this folder (keys of axolotl-ai-cloud/axolotl, see docs/targets.md of traces).',
    '# The paths are relative to this folder: run axolotl from here.',
    ...(setup.templateFrom !== null ? [`# chat_template_jinja: the template the export counted with (${setup.templateFrom}).`] : []),
    `base_model: ${quoted(setup.model)}${setup.byModel ? '  # the --tokenizer folder the export counted with' : '  # the model you fine-tune'}`,
    'datasets:',
    ...entries('training'),
    ...(card.files.some((f) => f.split === 'validation') ? ['test_datasets:', ...entries('validation')] : []),
    '',
  ].join('\n');
}

/**
 * The opening every TRL entry shares: the folder's splits loaded by `datasets` from the script's
 * own folder (the printed `next:` command runs it from anywhere), the tokenizer and template the
 * counts used, and whether there is a validation split.
 */
export function trlData(card: CardDataset, setup: TrainerSetup): { load: string[]; hasValidation: boolean } {
  const files = (split: Split) => card.files.filter((f) => f.split === split).map((f) => `str(HERE / ${q(f.path)})`);
  const hasValidation = card.files.some((f) => f.split === 'validation');
  const format = card.files[0]?.path.endsWith('.jsonl') ? 'json' : 'parquet';
  return {
    load: [
      '# Paths are this folder\'s, wherever the script is run from; the outputs go beside it.',
      'HERE = Path(__file__).resolve().parent',
      '',
      `MODEL = ${quoted(setup.model)}  # ${setup.byModel ? 'the --tokenizer folder the export counted with' : 'the model you fine-tune'}`,
      'tokenizer = AutoTokenizer.from_pretrained(MODEL)',
      ...(setup.template !== null ? [`# The chat template the export counted with (${setup.templateFrom}).`, `tokenizer.chat_template = ${quoted(setup.template)}`] : []),
      `data = load_dataset(${q(format)}, data_files={"train": [${files('training').join(', ')}]${hasValidation ? `, "validation": [${files('validation').join(', ')}]` : ''}})`,
    ],
    hasValidation,
  };
}

/**
 * The `max_length` of a TRL config: the longest example as the export counted it (the trainers'
 * default, 1,024, cuts longer ones silently), or none where the counts are an estimate.
 */
export function trlMaxLength(setup: TrainerSetup): string {
  return setup.longest !== null ? `max_length=${setup.longest}` : 'max_length=None';
}

/** A TRL trainer made and run on the loaded splits (every TRL entry ends so). */
export function trlTrainer(trainer: string, config: string, hasValidation: boolean): string[] {
  return [
    `trainer = ${trainer}(`,
    '    model=MODEL,',
    '    processing_class=tokenizer,',
    `    args=${config},`,
    '    train_dataset=data["train"],',
    ...(hasValidation ? ['    eval_dataset=data["validation"],'] : []),
    ')',
    'trainer.train()',
    '',
  ];
}

/** The script's test for `{% generation %}` blocks, in the meter's own pattern (every whitespace-control form). */
const ASSISTANT_ONLY_LINE = `ASSISTANT_ONLY = re.search(r"${GENERATION_BLOCK.source}", tokenizer.chat_template or "") is not None`;

function trl(card: CardDataset, shape: Shape, setup: TrainerSetup): string {
  const { load, hasValidation } = trlData(card, setup);
  return [
    '"""TRL SFTTrainer on this folder (written by traces; the keys are TRL\'s, see docs/targets.md of traces).',
    '',
    'The rows are tokenized here, after the loader step, and SFTTrainer takes them as they are:',
    'the chat template gets arguments and tools as mappings, and no key a message did not have.',
    '"""',
    ...PY_AS_CHAT,
    '',
    'import re',
    'import sys',
    'from pathlib import Path',
    '',
    'from datasets import load_dataset',
    'from transformers import AutoTokenizer',
    'from trl import SFTConfig, SFTTrainer',
    '',
    ...load,
    '',
    ...(shape === 'messages'
      ? [
          '# TRL\'s assistant_only_loss, done here: the loss on assistant turns only needs a template with {% generation %}',
          '# blocks (in any form: {%- generation %}, {% generation -%}), else every token is trained. SFTTrainer builds labels',
          '# from the assistant_masks column (leave assistant_only_loss unset: on tokenized rows it refuses them as not conversational).',
          ASSISTANT_ONLY_LINE,
          'if not ASSISTANT_ONLY:',
          '    print("train_trl.py: the chat template has no {% generation %} blocks: every token is trained, not the assistant tokens the card counts", file=sys.stderr)',
          ...(setup.trainOn === 'last' ? ['# --train-on last: SFTTrainer ignores `weight`; export with --hf-shape prompt-completion to train the last turn only.'] : []),
          '',
          'def tokenize(row):',
          '    out = tokenizer.apply_chat_template(as_chat(row["messages"]), tools=as_tools(row), tokenize=True, return_dict=True, return_assistant_tokens_mask=ASSISTANT_ONLY)',
          '    return {"input_ids": out["input_ids"], **({"assistant_masks": out["assistant_masks"]} if ASSISTANT_ONLY else {})}',
        ]
      : [
          '# The completion is trained (completion_only_loss). With {% generation %} blocks its tokens are the completion\'s',
          '# assistant blocks in the whole render, as the card counts them: the prompt rendered alone is no prefix of the whole',
          '# where the template renders a last assistant turn otherwise (Qwen3 gives it an empty think block), and TRL\'s own',
          '# prompt-then-whole split would train a shifted span. Without blocks, TRL\'s split: the prompt with the generation prompt.',
          '# return_dict=True: transformers 5 returns a dict by default, 4.x a list.',
          ASSISTANT_ONLY_LINE,
          '',
          'def last_runs(mask, runs):',
          '    """The last `runs` runs of ones in an assistant mask, the rest zero."""',
          '    out, seen = [0] * len(mask), 0',
          '    for i in range(len(mask) - 1, -1, -1):',
          '        if mask[i] and (i == len(mask) - 1 or not mask[i + 1]):',
          '            seen += 1',
          '        out[i] = 1 if mask[i] and seen <= runs else 0',
          '    return out',
          '',
          'def tokenize(row):',
          '    tools = as_tools(row)',
          '    prompt, completion = as_chat(row["prompt"]), as_chat(row["completion"])',
          '    whole = tokenizer.apply_chat_template(prompt + completion, tools=tools, tokenize=True, return_dict=True, return_assistant_tokens_mask=ASSISTANT_ONLY)',
          '    if ASSISTANT_ONLY:',
          '        answers = sum(1 for m in completion if m.get("role") == "assistant")',
          '        return {"input_ids": whole["input_ids"], "completion_mask": last_runs(whole["assistant_masks"], answers)}',
          '    head = tokenizer.apply_chat_template(prompt, tools=tools, tokenize=True, add_generation_prompt=True, return_dict=True)["input_ids"]',
          '    return {"input_ids": whole["input_ids"], "completion_mask": [0] * len(head) + [1] * (len(whole["input_ids"]) - len(head))}',
        ]),
    '',
    'data = data.map(tokenize, remove_columns=data["train"].column_names)',
    ...trlTrainer('SFTTrainer', `SFTConfig(output_dir=str(HERE / "sft-out"), ${trlMaxLength(setup)}${shape === 'messages' ? '' : ', completion_only_loss=True'})`, hasValidation),
  ].join('\n');
}

/** The SFT rows' entries: LLaMA-Factory's dataset_info.json, Axolotl's datasets block, TRL's SFTTrainer script. */
export function sftEntries(context: FinishContext, card: CardDataset, shape: Shape): [string, string][] {
  const setup = trainerSetup(context.report, card.folder);
  if (shape === 'messages' && !setup.generationBlocks) noAnswerOnlyMask(context.report);
  return [
    [LLAMA_FACTORY_FILE, llamaFactory(card)],
    // Axolotl's chat_template strategy reads a list of messages: prompt-completion rows have none (the card says which shape it needs).
    ...(shape === 'messages' ? [[AXOLOTL_FILE, axolotl(card, setup)] as [string, string]] : []),
    [TRL_FILE, trl(card, shape, setup)],
  ];
}

/** Said once where TRL cannot train what the report counts: a template without generation blocks trains every token. */
function noAnswerOnlyMask(report: Record<string, unknown>): void {
  const warning =
    `${TRL_FILE}: the chat template has no {% generation %} blocks, so TRL's SFTTrainer trains every token, not the trained tokens this report counts; ` +
    `give --chat-template FILE, a variant with them (for Qwen3: ${QWEN3_TRAINING_TEMPLATE}), or export with --hf-shape prompt-completion`;
  if (Array.isArray(report.warnings) && !report.warnings.includes(warning)) (report.warnings as string[]).push(warning);
}

/** Writes the card and the layout's entries of one dataset; returns their paths under --out, `/`-separated. */
export function writeCard(context: FinishContext, card: CardDataset, layout: HfDatasetLayout): string[] {
  const entries = layout.entries(context, card);
  const files: [string, string][] = [[CARD_FILE, frontMatter(card, layout) + body(context, card, layout, new Set(entries.map(([name]) => name)))], ...entries];
  return files.map(([name, text]) => {
    const at = path.join(card.folder, name);
    context.output.create(at).write(text);
    return at.split(path.sep).join('/');
  });
}

/**
 * The records a flagging quality stage (refusal, identity) named and kept: not drops, so not in
 * the table above, but in training unless the card says so.
 */
function flaggedParagraph(report: Record<string, unknown>): string[] {
  const quality = report.quality as { flagged?: Record<string, number>; flagged_gave_way?: number } | undefined;
  const found = Object.entries(quality?.flagged ?? {}).filter(([, n]) => n > 0);
  if (found.length === 0) return [];
  const total = found.reduce((sum, [, n]) => sum + n, 0);
  const gaveWay = quality?.flagged_gave_way ?? 0;
  return [
    `Flagged and kept in training, not dropped: ${found.map(([reason, n]) => `${reason} ${n}`).join(', ')} ` +
      `(${total === 1 ? 'a record' : `${total} records`} a flagging quality stage named, listed in \`_traces/manifest.jsonl\` with \`"flagged": true\`` +
      `${gaveWay > 0 ? `; ${gaveWay} of them gave way to an unflagged answer of their key and are in the table as \`duplicate\`` : ''}` +
      `; \`--drop ${found.map(([reason]) => reason).join(',')}\` drops them).`,
    '',
  ];
}
