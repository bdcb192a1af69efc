/**
 * A local model folder in the Hugging Face layout: `tokenizer.json` (the tokenizer),
 * `tokenizer_config.json` (its settings, special tokens and usually the chat template) and
 * optionally `chat_template.jinja` (where newer transformers versions save the template).
 * Nothing is downloaded: a folder that lacks a file is a user error naming it.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';

export class ModelFolderError extends Error {}

export interface ModelFolder {
  tokenizer: Tokenizer;
  /** The chat template for examples without tools, and for examples with tools (transformers picks `tool_use` when present). */
  template: string;
  toolTemplate: string;
  /** Where the template came from, for reports. */
  templateSource: string;
  /** `bos_token`, `eos_token`, … as strings: transformers passes its special tokens map to every render. */
  specialTokensMap: Record<string, string | string[]>;
  /** The vocabulary's special tokens (added tokens marked special): text holding one is read as that token. */
  specialTokens: string[];
  eosTokenId: number | null;
}

function readJsonFile(file: string, what: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ModelFolderError(`${file}: cannot read the ${what} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('not a JSON object');
    return value as Record<string, unknown>;
  } catch (error) {
    throw new ModelFolderError(`${file}: the ${what} is not valid JSON (${(error as Error).message})`);
  }
}

/** An added token is written either as its text or as `{content, …}`. */
function tokenText(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && value !== null && typeof (value as { content?: unknown }).content === 'string') return (value as { content: string }).content;
  return null;
}

const SPECIAL_TOKEN_KEYS = ['bos_token', 'eos_token', 'unk_token', 'sep_token', 'pad_token', 'cls_token', 'mask_token'];

/** Whether PATH names a folder at all (else --tokenizer takes it for an encoding name). */
export function isFolder(dir: string): boolean {
  return existsSync(dir) && statSync(dir).isDirectory();
}

/** A folder's tokenizer, built once per process (Qwen3's takes about two seconds); templates are read per call. */
const tokenizers = new Map<string, Omit<ModelFolder, 'template' | 'toolTemplate' | 'templateSource'> & { config: Record<string, unknown> }>();

export function loadModelFolder(dir: string, chatTemplateFile: string | null): ModelFolder {
  if (!isFolder(dir)) throw new ModelFolderError(`${dir}: not a folder (--tokenizer takes o200k_base, cl100k_base or a local model folder)`);
  for (const name of ['tokenizer.json', 'tokenizer_config.json']) {
    if (!existsSync(path.join(dir, name))) throw new ModelFolderError(`${dir}: no ${name} (a model folder in the Hugging Face layout holds tokenizer.json and tokenizer_config.json)`);
  }
  const key = path.resolve(dir);
  let loaded = tokenizers.get(key);
  if (loaded === undefined) {
    loaded = buildTokenizer(dir);
    tokenizers.set(key, loaded);
  }
  const { config, ...rest } = loaded;
  const { template, toolTemplate, source } = chooseTemplate(dir, config, chatTemplateFile);
  return { ...rest, template, toolTemplate, templateSource: source };
}

function buildTokenizer(dir: string): Omit<ModelFolder, 'template' | 'toolTemplate' | 'templateSource'> & { config: Record<string, unknown> } {
  const config = readJsonFile(path.join(dir, 'tokenizer_config.json'), 'tokenizer config');
  const tokenizerJson = readJsonFile(path.join(dir, 'tokenizer.json'), 'tokenizer');
  let tokenizer: Tokenizer;
  try {
    tokenizer = new Tokenizer(tokenizerJson, config);
  } catch (error) {
    throw new ModelFolderError(`${path.join(dir, 'tokenizer.json')}: the tokenizer cannot be built (${(error as Error).message})`);
  }
  const specialTokensMap: Record<string, string | string[]> = {};
  for (const key of SPECIAL_TOKEN_KEYS) {
    const text = tokenText(config[key]);
    if (text !== null) specialTokensMap[key] = text;
  }
  if (Array.isArray(config.additional_special_tokens)) {
    specialTokensMap.additional_special_tokens = config.additional_special_tokens.map(tokenText).filter((t): t is string => t !== null);
  }
  const added = Array.isArray(tokenizerJson.added_tokens) ? (tokenizerJson.added_tokens as { content?: unknown; special?: unknown }[]) : [];
  const specialTokens = added.filter((t) => t.special === true && typeof t.content === 'string' && t.content !== '').map((t) => t.content as string);
  const eos = typeof specialTokensMap.eos_token === 'string' ? tokenizer.token_to_id(specialTokensMap.eos_token) : undefined;
  return { config, tokenizer, specialTokensMap, specialTokens, eosTokenId: eos ?? null };
}

/**
 * transformers' choice: `--chat-template FILE` first, then `chat_template` of the config (a
 * string, or named templates of which `default` and, for examples with tools, `tool_use`),
 * then `chat_template.jinja`.
 */
function chooseTemplate(dir: string, config: Record<string, unknown>, file: string | null): { template: string; toolTemplate: string; source: string } {
  if (file !== null) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      throw new ModelFolderError(`--chat-template ${file}: cannot read it (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
    }
    return { template: text, toolTemplate: text, source: file };
  }
  const configured = config.chat_template;
  if (typeof configured === 'string' && configured !== '') {
    return { template: configured, toolTemplate: configured, source: path.join(dir, 'tokenizer_config.json') };
  }
  if (Array.isArray(configured)) {
    const named = new Map<string, string>();
    for (const entry of configured as { name?: unknown; template?: unknown }[]) {
      if (typeof entry?.name === 'string' && typeof entry.template === 'string') named.set(entry.name, entry.template);
    }
    const fallback = named.get('default');
    if (fallback !== undefined) return { template: fallback, toolTemplate: named.get('tool_use') ?? fallback, source: path.join(dir, 'tokenizer_config.json') };
  }
  const jinja = path.join(dir, 'chat_template.jinja');
  if (existsSync(jinja)) {
    const text = readFileSync(jinja, 'utf8');
    return { template: text, toolTemplate: text, source: jinja };
  }
  throw new ModelFolderError(`${dir}: no chat template (neither chat_template in tokenizer_config.json nor chat_template.jinja): give one with --chat-template FILE`);
}

/** The chat template transformers would use for the folder, or the file, and where it came from; the tokenizer is not loaded. */
export function folderChatTemplate(dir: string, chatTemplateFile: string | null): { template: string; toolTemplate: string; source: string } {
  return chooseTemplate(dir, readJsonFile(path.join(dir, 'tokenizer_config.json'), 'tokenizer config'), chatTemplateFile);
}

/** What `--tokenizer DIR` needs before any work starts: the files there, and a template that parses. */
export async function checkModelFolder(dir: string, chatTemplateFile: string | null): Promise<void> {
  if (!isFolder(dir)) throw new ModelFolderError(`${dir}: not a folder (--tokenizer takes o200k_base, cl100k_base or a local model folder)`);
  for (const name of ['tokenizer.json', 'tokenizer_config.json']) {
    if (!existsSync(path.join(dir, name))) throw new ModelFolderError(`${dir}: no ${name} (a model folder in the Hugging Face layout holds tokenizer.json and tokenizer_config.json)`);
  }
  const { template, toolTemplate, source } = chooseTemplate(dir, readJsonFile(path.join(dir, 'tokenizer_config.json'), 'tokenizer config'), chatTemplateFile);
  // Parsed, not built (building is the slow part, done where the counting happens): a damaged file is said here, in one line.
  const tokenizer = readJsonFile(path.join(dir, 'tokenizer.json'), 'tokenizer');
  if (typeof tokenizer.model !== 'object' || tokenizer.model === null) {
    throw new ModelFolderError(`${path.join(dir, 'tokenizer.json')}: no "model" object, so not a Hugging Face tokenizer file`);
  }
  const { ChatTemplate } = await import('./render.js');
  for (const text of new Set([template, toolTemplate])) {
    try {
      new ChatTemplate(text);
    } catch (error) {
      throw new ModelFolderError(`${source}: ${(error as Error).message}`);
    }
  }
}
