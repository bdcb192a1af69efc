/** The export targets by name, and the library surface `traces export` and `traces validate` use. */
import { nemoCustomizerTarget } from './nemo-customizer.js';
import { nemoTarget } from './nemo.js';
import { openaiTarget } from './openai.js';
import type { Target, TargetName } from './target.js';

export const TARGETS: Readonly<Record<TargetName, Target>> = {
  openai: openaiTarget,
  nemo: nemoTarget,
  'nemo-customizer': nemoCustomizerTarget,
};

export function getTarget(name: string): Target {
  const target = (TARGETS as Record<string, Target>)[name];
  if (target === undefined) {
    throw new Error(`unknown target ${JSON.stringify(name)} (known: ${Object.keys(TARGETS).join(', ')})`);
  }
  return target;
}

export * from './target.js';
export { findSpecialTokens, findSpecialTokensDeep, KNOWN_SPECIAL_TOKENS } from './special-tokens.js';
export {
  completeForCustomizer,
  customizerGaps,
  loadToolsFile,
  parseToolDefinitions,
  ToolInference,
  toolCallFacts,
  ToolsFileError,
  toolsFor,
  type ExampleTools,
  type ToolDefinition,
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
  type ErrorClassSummary,
  type ValidateOptions,
  type ValidationReport,
} from './validate.js';
