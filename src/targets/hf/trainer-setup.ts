/**
 * What the files written for the trainers must share with the report's counts: the tokenizer,
 * the chat template and the `--train-on` choice the export counted with, and the longest
 * example (a trainer's default `max_length` cuts longer ones silently). Read from report.json's
 * own fields, so every entry (TRL, Axolotl, LLaMA-Factory, AutoModel) says the same.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { folderChatTemplate } from '../model/folder.js';
import { GENERATION_BLOCK } from '../model/render.js';
import { QWEN3_TRAINING_TEMPLATE } from '../model/shipped-templates.js';

/** The model the scripts name when the export counted with an encoding, not a model folder. */
export const DEFAULT_MODEL = 'Qwen/Qwen3-0.6B';

export interface TrainerSetup {
  /** What the trainers load the tokenizer from: the --tokenizer folder (absolute), or DEFAULT_MODEL. */
  model: string;
  /** Whether the counts are the model folder's own (else an encoding's estimate, and `model` is DEFAULT_MODEL). */
  byModel: boolean;
  /** The template text the trainers are given in place of the tokenizer's, or null (the folder's own, which the counts used). */
  template: string | null;
  /** Where `template` comes from, in the user's words (a comment in the files). */
  templateFrom: string | null;
  /** Whether the template the trainers render with has `{% generation %}` blocks (TRL's answer-only loss needs them). */
  generationBlocks: boolean;
  trainOn: 'all' | 'last';
  /** The dataset's longest example in the model's tokens, or null when the counts are an estimate. */
  longest: number | null;
}

interface ReportFile {
  dataset: string | null;
  tokens?: { total?: { max?: number } };
}

/** The setup of one dataset folder ('' without --group-by) from the export's report. */
export function trainerSetup(report: Record<string, unknown>, folder: string): TrainerSetup {
  const trainOn = report.train_on === 'last' ? 'last' : 'all';
  // report.json says chat_template only when the counts are a model folder's (`--tokenizer DIR`).
  const byModel = report.chat_template !== undefined && typeof report.tokenizer === 'string';
  if (!byModel) {
    // The default model is Qwen3, whose stock template has no generation blocks: the shipped
    // variant renders the same text with them, so TRL trains the assistant tokens the estimate counts.
    const template = readFileSync(QWEN3_TRAINING_TEMPLATE, 'utf8');
    return { model: DEFAULT_MODEL, byModel, template, templateFrom: "traces' templates/qwen3-training.jinja (Qwen3's own template with {% generation %} blocks)", generationBlocks: true, trainOn, longest: null };
  }
  const dir = path.resolve(String(report.tokenizer));
  const file = typeof report.chat_template === 'string' ? report.chat_template : null;
  const chosen = folderChatTemplate(dir, file);
  const longest = ((report.files as ReportFile[] | undefined) ?? [])
    .filter((f) => (f.dataset ?? '') === folder)
    .reduce((n, f) => Math.max(n, f.tokens?.total?.max ?? 0), 0);
  return {
    model: dir,
    byModel,
    template: file === null ? null : chosen.template,
    templateFrom: file === null ? null : `--chat-template ${file}`,
    generationBlocks: GENERATION_BLOCK.test(chosen.template),
    trainOn,
    longest: longest > 0 ? longest : null,
  };
}

/** Characters PyYAML's reader refuses raw (C1 controls, non-characters, lone surrogates), which JSON leaves as they are. */
const YAML_UNPRINTABLE = /[\u007f-\u0084\u0086-\u009f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** A string literal that Python and YAML (double-quoted) both read back as `text`: JSON's escapes are theirs. */
export function quoted(text: string): string {
  return JSON.stringify(text).replace(YAML_UNPRINTABLE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
