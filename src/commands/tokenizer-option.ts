/** `--tokenizer`, `--chat-template`, `--max-seq-length` and `--train-on`, shared by export and validate. */
import { Command, Option } from 'commander';
import { UserError } from '../errors.js';
import { ENCODING_NAMES, type EncodingName, type TargetName } from '../targets/index.js';
import { TRAIN_ON, type TokenizerSpec, type TrainOn } from '../targets/meter.js';
import { loadMeter, type ExampleMeter } from '../targets/index.js';
import { numberOption } from './common.js';

export interface TokenizerFlags {
  tokenizer: string;
  chatTemplate?: string;
  maxSeqLength?: string;
  trainOn: TrainOn;
}

export function addTokenizerOptions(command: Command): Command {
  return command
    .option('--tokenizer <encoding|dir>', `token counts by ${ENCODING_NAMES.join(' or ')}, or by a local model folder (tokenizer.json, tokenizer_config.json): each example rendered with its chat template as the trainer would`, 'o200k_base')
    .option('--chat-template <file>', "a chat template (Jinja) replacing the model folder's")
    .option('--max-seq-length <n>', "with --tokenizer DIR: examples longer than this, by the model's own count, are too_long")
    .addOption(new Option('--train-on <turns>', 'assistant turns trained on: all, or only the last (openai: weight 0 on the earlier ones)').choices([...TRAIN_ON]).default('all'));
}

/** Loads the meter of a checked spec; a tokenizer.json that parses but cannot be built is a user error too. */
export async function loadCheckedMeter(spec: TokenizerSpec): Promise<ExampleMeter> {
  try {
    return await loadMeter(spec);
  } catch (error) {
    const { ModelFolderError } = await import('../targets/model/folder.js');
    if (error instanceof ModelFolderError) throw new UserError(`--tokenizer ${error.message}`);
    throw error;
  }
}

/** The spec the workers load; a model folder is checked here, so a bad one stops the run before any work. */
export async function parseTokenizer(flags: TokenizerFlags, target: TargetName): Promise<{ spec: TokenizerSpec; maxSeqLength: number | null }> {
  const named = (ENCODING_NAMES as readonly string[]).includes(flags.tokenizer);
  if (named) {
    if (flags.chatTemplate !== undefined) throw new UserError('--chat-template needs --tokenizer DIR (a model folder): an encoding has no chat template');
    if (flags.maxSeqLength !== undefined) throw new UserError("--max-seq-length needs --tokenizer DIR (a model folder): it counts the model's own tokens");
    return { spec: flags.tokenizer as EncodingName, maxSeqLength: null };
  }
  const { checkModelFolder, isFolder, ModelFolderError } = await import('../targets/model/folder.js');
  if (!isFolder(flags.tokenizer)) {
    throw new UserError(`--tokenizer ${flags.tokenizer}: neither an encoding (${ENCODING_NAMES.join(', ')}) nor a folder: give a local model folder holding tokenizer.json and tokenizer_config.json`);
  }
  try {
    await checkModelFolder(flags.tokenizer, flags.chatTemplate ?? null);
  } catch (error) {
    if (error instanceof ModelFolderError) throw new UserError(`--tokenizer ${error.message}`);
    throw error;
  }
  const maxSeqLength = flags.maxSeqLength === undefined ? null : numberOption('--max-seq-length', flags.maxSeqLength, (n) => Number.isInteger(n) && n > 0, 'a whole number > 0');
  return { spec: { folder: flags.tokenizer, chatTemplate: flags.chatTemplate ?? null, target, trainOn: flags.trainOn }, maxSeqLength };
}
