/** The selection, dedupe and collapse options that `dedupe`, `filter` and `export` share. */
import { existsSync } from 'node:fs';
import { repeatable } from './option-repeats.js';
import { Command, Option } from 'commander';
import { UserError } from '../errors.js';
import { readIdListFiles } from '../pipeline/id-list.js';
import { STATUSES, type Status } from '../record.js';
import type { CurationOptions } from '../pipeline/curate.js';
import type { KeepRule } from '../pipeline/dedupe.js';
import { DEFAULT_KEY, KEY_KINDS, KEY_MEANING, type KeyKind } from '../pipeline/keys.js';
import { everything, parseTime, parseVersionSpec, type Selection } from '../pipeline/selection.js';
import { readKeptKeys } from '../pipeline/kept-keys.js';
import { nameGlob } from '../pipeline/glob.js';
import { DEFAULT_NEAR_DUPLICATE_THRESHOLD } from '../pipeline/minhash.js';
import { numberOption } from './common.js';
import { addQualityOptions, parseQualityOptions, type QualityFlags } from './quality-options.js';

export interface CurationFlags extends QualityFlags {
  status: string;
  program?: string[];
  module?: string[];
  model?: string[];
  synalinksVersion?: string;
  since?: string;
  until?: string;
  minTokens?: string;
  maxTokens?: string;
  maxCost?: string;
  maxDuration?: string;
  grep?: string;
  exclude?: string[];
  keepList?: string;
  key: KeyKind;
  keep: KeepRule;
  trajectories: 'all' | 'last';
  against?: string;
  /** `--near-duplicates [threshold]` (dedupe and export): true without a value. */
  nearDuplicates?: boolean | string;
}

/** Said of a key kind in --help beyond what its records share. */
const KEY_NOTES: Partial<Record<KeyKind, string>> = {
  [DEFAULT_KEY]: "the default: the recorded hashes cover neither tools nor output schema, so an agent's last tool step and its final answer share them",
  'inputs,config': 'the run says how many records it merged across modules',
};

export const KEY_HELP = `what makes two records duplicates: ${KEY_KINDS.map((kind) => `${kind} = ${KEY_MEANING[kind]}${KEY_NOTES[kind] === undefined ? '' : ` (${KEY_NOTES[kind]})`}`).join('; ')}`;

export function addCurationOptions(command: Command, defaults: { status: string; trajectories: 'all' | 'last' }): Command {
  addSelectionOptions(command, defaults);
  return addQualityOptions(command);
}

function addSelectionOptions(command: Command, defaults: { status: string; trajectories: 'all' | 'last' }): Command {
  return command
    .option('--status <list>', `classes to keep, comma-separated: ${STATUSES.join(',')}`, defaults.status)
    .option('--program <glob>', 'keep programs matching (repeatable)', repeatable)
    .option('--module <glob>', 'keep modules matching (repeatable)', repeatable)
    .option('--model <glob>', 'keep records whose config.config.model matches (repeatable)', repeatable)
    .option('--synalinks-version <spec>', "keep records of these versions, e.g. '>=0.9.010,<0.10'")
    .option('--since <time>', 'keep calls started at or after: ISO 8601 date or time, UTC unless it names a zone (a date, a month 2026-07 or a year 2026 starts at UTC midnight; 20260707 is a date), or epoch seconds')
    .option('--until <time>', 'keep calls started before (same forms as --since)')
    .option('--min-tokens <n>', 'keep records whose usage total_tokens is at least this (records without usage are dropped)')
    .option('--max-tokens <n>', 'keep records whose usage total_tokens is at most this (records without usage are dropped)')
    .option('--max-cost <usd>', 'keep records whose recorded cost is at most this many USD (records without a cost are dropped)')
    .option('--max-duration <seconds>', 'keep calls that took at most this many seconds (records without a duration are dropped)')
    .option('--grep <regex>', 'keep records whose message text (content, reasoning, tool arguments) matches')
    .option('--exclude <file>', 'drop the call_ids listed in FILE, one per line, # comments (traces browse writes these)', repeatable)
    .option('--keep-list <file>', 'keep only the call_ids FILE lists (text, one per line, # comments; or Parquet with a call_id column), e.g. computed by SQL over traces index')
    .addOption(new Option('--key <kind>', KEY_HELP).choices([...KEY_KINDS]).default(DEFAULT_KEY))
    .addOption(new Option('--keep <which>', 'which duplicate to keep, by timestamp').choices(['first', 'last']).default('first'))
    .addOption(
      new Option('--trajectories <which>', 'last: drop agent steps contained in a later step of the same run')
        .choices(['all', 'last'])
        .default(defaults.trajectories),
    )
    .option('--against <dir>', 'drop records whose key an earlier output (of dedupe, filter or export) already holds');
}

/** `--near-duplicates [threshold]`, for the commands that dedupe (dedupe, export). */
export function addNearDuplicatesOption(command: Command): Command {
  return command.option(
    '--near-duplicates [threshold]',
    `also drop near-duplicates: records whose user, assistant and tool text (system prompts left out) has an estimated Jaccard similarity (MinHash over 5-word shingles) at or above the threshold to a record kept by the --keep rule (default ${DEFAULT_NEAR_DUPLICATE_THRESHOLD})`,
  );
}

/**
 * `--near-duplicates` takes an optional value, so `--near-duplicates ~/.synalinks` would read
 * the root as the threshold: a value that is not a number is given back to the roots.
 */
export function rootsAfterNearDuplicates(flags: CurationFlags, roots: string[]): string[] {
  const value = flags.nearDuplicates;
  if (typeof value !== 'string' || /^\s*[-+.\d]/.test(value)) return roots;
  flags.nearDuplicates = true;
  return [value, ...roots];
}

/** `--near-duplicates [threshold]`'s value: null when off, the default threshold when given bare. */
export function nearDuplicateThreshold(value: boolean | string | undefined): number | null {
  if (value === undefined || value === false) return null;
  if (value === true) return DEFAULT_NEAR_DUPLICATE_THRESHOLD;
  return numberOption('--near-duplicates', value, (threshold) => threshold > 0 && threshold <= 1, 'a similarity above 0 and at most 1, e.g. 0.8');
}

function number(flag: string, text: string | undefined, integer = false): number | null {
  if (text === undefined) return null;
  return numberOption(flag, text, (value) => value >= 0 && (!integer || Number.isInteger(value)), `a ${integer ? 'whole ' : ''}number >= 0`);
}

function time(flag: string, text: string | undefined): number | null {
  if (text === undefined) return null;
  const value = parseTime(text);
  if (value === null) {
    throw new UserError(`${flag} ${JSON.stringify(text)}: expected an ISO 8601 date or time (2026-07-07, 2026-07, 2026-07-07T10:15:30Z) or epoch seconds`);
  }
  return value;
}

export function parseStatuses(text: string): Set<Status> {
  const statuses = new Set<Status>();
  for (const part of text.split(',').map((s) => s.trim())) {
    if (!(STATUSES as readonly string[]).includes(part)) {
      throw new UserError(`--status ${JSON.stringify(part)}: expected a comma-separated list of ${STATUSES.join(', ')}`);
    }
    statuses.add(part as Status);
  }
  return statuses;
}

export function parseSelection(flags: CurationFlags): Selection {
  const selection = everything(parseStatuses(flags.status));
  // Compiled now to refuse a glob that is none; kept as text for the worker threads.
  selection.programs = (flags.program ?? []).map((glob) => nameGlob(glob, '--program').text);
  selection.modules = (flags.module ?? []).map((glob) => nameGlob(glob, '--module').text);
  selection.models = (flags.model ?? []).map((glob) => nameGlob(glob, '--model').text);
  if (flags.synalinksVersion !== undefined) {
    const ranges = parseVersionSpec(flags.synalinksVersion);
    if (ranges === null) {
      throw new UserError(`--synalinks-version ${JSON.stringify(flags.synalinksVersion)}: expected versions like 0.9.014, >=0.9.010 or '>=0.9,<0.10'`);
    }
    selection.versions = ranges;
  }
  selection.since = time('--since', flags.since);
  selection.until = time('--until', flags.until);
  selection.minTokens = number('--min-tokens', flags.minTokens, true);
  selection.maxTokens = number('--max-tokens', flags.maxTokens, true);
  selection.maxCost = number('--max-cost', flags.maxCost);
  selection.maxDuration = number('--max-duration', flags.maxDuration);
  if (flags.grep !== undefined) {
    try {
      selection.grep = new RegExp(flags.grep, 'u');
    } catch (error) {
      throw new UserError(`--grep ${JSON.stringify(flags.grep)}: not a valid regular expression (${(error as Error).message})`);
    }
  }
  return selection;
}

export function parseCurationOptions(flags: CurationFlags, dedupe: boolean): CurationOptions {
  if (flags.keepList !== undefined && !existsSync(flags.keepList)) throw new UserError(`--keep-list ${flags.keepList}: no such file`);
  return {
    selection: parseSelection(flags),
    dedupe,
    key: flags.key,
    keep: flags.keep,
    trajectories: flags.trajectories,
    exclude: flags.exclude && flags.exclude.length > 0 ? readIdListFiles('--exclude', flags.exclude) : null,
    seen: flags.against !== undefined ? readKeptKeys(flags.against, flags.key) : null,
    nearDuplicates: dedupe ? nearDuplicateThreshold(flags.nearDuplicates) : null,
    keepListFile: flags.keepList ?? null,
    quality: parseQualityOptions(flags),
  };
}
