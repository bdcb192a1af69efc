/** The export targets by name, and the library surface `traces export` and `traces validate` use. */
/**
 * The export targets by name, and the library surface `traces export` and `traces validate` use.
 * A target is one folder here (its `index.ts` exports a `Target`) and one line below: no other
 * module names it.
 */
import { nemoCustomizerTarget } from './nemo-customizer/index.js';
import { nemoTarget } from './nemo/index.js';
import { openaiTarget } from './openai/index.js';
import { hfTarget } from './hf/index.js';
import { openaiPreferenceTarget } from './openai-preference/index.js';
import { hfPreferenceTarget } from './hf-preference/index.js';
import { nemoPreferenceTarget } from './nemo-preference/index.js';
import { stsTarget } from './sts/index.js';
import type { ExampleMeter, Target, TargetName, TargetOption } from './target.js';
import { encodingMeter, type TokenizerSpec } from './meter.js';
import { loadTokenCounter } from './tokens.js';

export const TARGETS: Readonly<Record<TargetName, Target>> = {
  openai: openaiTarget,
  nemo: nemoTarget,
  'nemo-customizer': nemoCustomizerTarget,
  hf: hfTarget,
  'openai-preference': openaiPreferenceTarget,
  'hf-preference': hfPreferenceTarget,
  'nemo-preference': nemoPreferenceTarget,
  sts: stsTarget,
};

/** Every target's name, in the registry's order (`--format` choices). */
export const TARGET_NAMES: readonly TargetName[] = Object.keys(TARGETS);

/**
 * The targets that write one example per record: what an index's verdicts and a map stage can
 * make record by record. A preference row needs every answer to its prompt, which only a whole
 * export sees.
 */
export const PER_RECORD_TARGET_NAMES: readonly TargetName[] = TARGET_NAMES.filter((name) => TARGETS[name].preference === undefined);

/** The target, set up by its own options' values (`settings`, as `Target.settings` holds them) when it has any. */
export function getTarget(name: string, settings?: Readonly<Record<string, string>>): Target {
  const target = Object.hasOwn(TARGETS, name) ? TARGETS[name] : undefined;
  if (target === undefined) {
    throw new Error(`unknown target ${JSON.stringify(name)} (known: ${TARGET_NAMES.join(', ')})`);
  }
  return settings !== undefined && target.configure !== undefined ? target.configure(settings) : target;
}

/** Every target's own options with the target that declares each (for the commands' --help). */
export function targetOptions(): { target: Target; option: TargetOption }[] {
  return Object.values(TARGETS).flatMap((target) => (target.options ?? []).map((option) => ({ target, option })));
}

const modelMeters = new Map<string, Promise<ExampleMeter>>();

/**
 * The meter of a spec, loaded once per process and spec (a model folder takes a few seconds to
 * read); a model folder's meter gets the trainer of the target the spec names.
 */
export async function loadMeter(spec: TokenizerSpec): Promise<ExampleMeter> {
  if (typeof spec === 'string') return encodingMeter(await loadTokenCounter(spec));
  const key = JSON.stringify([spec.folder, spec.chatTemplate, spec.target, spec.trainOn]);
  let pending = modelMeters.get(key);
  if (pending === undefined) {
    // Only a --tokenizer DIR run pays for loading the template engine and the tokenizer.
    pending = import('./model/meter.js').then(({ loadModelMeter }) => loadModelMeter(spec, getTarget(spec.target).trainer));
    modelMeters.set(key, pending);
  }
  return pending;
}

export * from './target.js';
export { findSpecialTokens, findSpecialTokensDeep, KNOWN_SPECIAL_TOKENS } from './special-tokens.js';
export {
  completeForCustomizer,
  customizerGaps,
  loadToolsFile,
  parseToolDefinitions,
  recordedDefinitions,
  ToolInference,
  ToolsFileError,
  toolsFor,
  type ExampleTools,
} from './tools.js';
export {
  countExampleTokens,
  ENCODING_NAMES,
  loadTokenCounter,
  summarize,
  type Distribution,
  type EncodingName,
  type ExampleTokens,
  type TokenCounter,
} from './tokens.js';
export {
  DEFAULT_TOKEN_LIMIT,
  fileLines,
  LineTooLong,
  validateFile,
  validateLines,
  validationJson,
  LineValidator,
  inspectExample,
  type Inspection,
  type ValidateOptions,
} from './validate.js';
