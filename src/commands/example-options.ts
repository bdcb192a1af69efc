/**
 * The options that shape each example, as export takes them, for the commands that make
 * examples one record at a time beside it: `index --format` (the target's verdict and the
 * example's digest) and `map`. One parser, so the three cannot read them differently.
 */
import type { Command } from 'commander';
import { Option } from 'commander';
import type { ProjectionSettings } from '../export/project-share.js';
import { scrubSettings } from './scrub-option.js';
import { getTarget, type ReasoningMode } from '../targets/index.js';
import { resolveReasoning } from '../export/reasoning.js';
import { numberOption } from './common.js';

export interface ExampleFlags {
  reasoning?: ReasoningMode;
  scrub: string;
  scrubRules?: string;
  dropOn?: string;
  seed: string;
}

/**
 * Adds export's example-shaping options, each described `as export takes it` (`what` says what
 * for; `scrubbed`, what --scrub applies to when that is more).
 */
export function addExampleOptions(command: Command, what: string, scrubbed = what): Command {
  return command
    .addOption(new Option('--reasoning <mode>', `${what}: as export takes it`).choices(['keep', 'drop', 'inline']))
    .option('--scrub <kinds>', `${scrubbed}: as export takes it`, 'secrets')
    .option('--scrub-rules <file>', `${scrubbed}: as export takes it`)
    .addOption(new Option('--drop-on <kinds>', `${what}: as export takes it`).choices(['secrets']))
    .option('--seed <s>', `${what}: the seed of the split, as export takes it`, '0');
}

/**
 * The settings each example is made with, one record at a time, with export's defaults: no
 * supplied tools (the inferred ones are given), no token limit, o200k_base counts.
 */
export function exampleSettings(
  format: string,
  flags: ExampleFlags,
  more: { inferred?: ProjectionSettings['inferred']; validationFraction?: number; groupByModule?: boolean; verdictOnly?: boolean } = {},
): ProjectionSettings {
  const target = getTarget(format);
  return {
    scrub: scrubSettings(flags),
    format: target.name,
    targetSettings: target.settings,
    reasoning: resolveReasoning(target, flags.reasoning),
    supplied: [],
    inferred: more.inferred ?? [],
    everyLineTools: null,
    maxExampleTokens: null,
    seed: numberOption('--seed', flags.seed, (value) => Number.isSafeInteger(value) && value >= 0, 'a whole number ≥ 0'),
    validationFraction: more.validationFraction ?? 0,
    tokenizer: 'o200k_base',
    maxSeqLength: null,
    trainOn: 'all',
    groupByModule: more.groupByModule ?? false,
    verdictOnly: more.verdictOnly,
  };
}
