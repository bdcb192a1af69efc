import { Command, InvalidArgumentError, Option } from 'commander';
import { UserError } from '../errors.js';
import { scrubSettings } from './scrub-option.js';
import { getTarget, TARGET_NAMES, TARGETS, type ReasoningMode, type TargetName } from '../targets/index.js';
import { addTargetOptions, targetSettings } from './target-options.js';
import { addTokenizerOptions, parseTokenizer, type TokenizerFlags } from './tokenizer-option.js';
import { DEFAULT_KEY, KEY_MEANING } from '../pipeline/keys.js';
import { addCurationOptions, addNearDuplicatesOption, parseCurationOptions, rootsAfterNearDuplicates, type CurationFlags } from './curation-options.js';
import { describeValidation } from './validate.js';
import { acrossModulesLines } from './curate-run.js';
import { addSourceOption, findTraceFiles, numberOption, printJson, ROOTS_DESCRIPTION, takeSkippedNote, writeSummary } from './common.js';
import { formatCount, paragraph, plural } from '../format.js';
import path from 'node:path';
import { droppedSummary, exportLines, writtenSummary, type ExportStory, type SplitFile } from './run-summary.js';
import { SPLITS } from '../export/dataset.js';
import { REPORT_FILE } from '../output/names.js';
import { META_DIR } from '../output/output-dir.js';
import { compareText } from '../order.js';
import { qualityLines } from './quality-options.js';
import type { QualityReport } from '../pipeline/curate.js';
import { dryRunCuration } from './curate-run.js';
import { pairsWrittenLine } from '../export/preference-summary.js';
import { outputOption } from './path-options.js';
import type { PreferenceExport } from '../export/run.js';

/** The export of a preference format: loaded only when the format is one (export/run.ts calls it, without importing it). */
const exportPreference: PreferenceExport = async (...args) => (await import('../export/preference-run.js')).exportPreference(...args);

interface ExportFlags extends CurationFlags, TokenizerFlags {
  format: string;
  out?: string;
  force?: boolean;
  reasoning?: ReasoningMode;
  tools?: string;
  inferredTools?: string;
  validationFraction: string;
  seed: string;
  maxExampleTokens?: string;
  maxFileMb?: string;
  groupBy: 'none' | 'module';
  manifest?: string;
  scrub: string;
  scrubRules?: string;
  dropOn?: string;
  json?: boolean;
  verbose?: boolean;
  dryRun?: boolean;
  scores?: string;
  minMargin?: string;
}

function positive(flag: string, text: string | undefined): number | null {
  if (text === undefined) return null;
  return numberOption(flag, text, (value) => value > 0, 'a number > 0');
}

/** Options that shape a training set: Ask recordings have no split, tokens, shards or tool list. */
const TRAINING_SET_OPTIONS = ['reasoning', 'tools', 'inferredTools', 'validationFraction', 'seed', 'tokenizer', 'chatTemplate', 'maxSeqLength', 'trainOn', 'maxExampleTokens', 'maxFileMb', 'groupBy'];

/** A training-set option given with --format ask-recording would be ignored without a word: refused instead. */
function refuseTrainingSetOptions(command: Command): void {
  for (const name of TRAINING_SET_OPTIONS) {
    if (command.getOptionValueSource(name) !== 'cli') continue;
    const flag = command.options.find((o) => o.attributeName() === name)?.long ?? name;
    throw new UserError(`${flag} shapes a training set (${TARGET_NAMES.join(', ')}); --format ask-recording writes recordings and has no use for it: leave it out`);
  }
}

/** Said whenever personal data went unchecked: "redacted nothing" must not read as "holds none". */
const PII_NOT_CHECKED = 'personal data (email addresses, phone numbers, …) is not checked unless --scrub secrets,pii';

/**
 * What the scrubber replaced, by detector, the most frequent first (report.json holds the same
 * counts), and what it did not look for.
 */
export function redactionSummary(scrub: { kinds: string[]; redactions: Record<string, number> } | null): string {
  if (scrub === null) return 'redacted nothing (--scrub none): neither secrets nor personal data were checked';
  const kinds = Object.entries(scrub.redactions).sort(([a, x], [b, y]) => y - x || compareText(a, b));
  const total = kinds.reduce((sum, [, n]) => sum + n, 0);
  const unchecked = scrub.kinds.includes('pii') ? '' : `; ${PII_NOT_CHECKED}`;
  const checked = scrub.kinds.includes('pii') ? 'no secret or personal data found' : 'no secret found';
  if (total === 0) return `redacted nothing: ${checked}${unchecked}`;
  return `redacted ${plural(total, 'value')} by kind: ${kinds.map(([k, n]) => `${k} ${formatCount(n)}`).join(', ')}${unchecked}`;
}

/** `read 24 records from 8 files (1 damaged line, listed in the manifest)`. */
function readLine(plan: { recordsRead: number; files: readonly unknown[]; damagedLines: number }): string {
  const damaged = plan.damagedLines > 0 ? ` (${plural(plan.damagedLines, 'damaged line')}, listed in the manifest)` : '';
  return `read ${plural(plan.recordsRead, 'record')} from ${plural(plan.files.length, 'file')}${damaged}`;
}

/** What an export dry run leaves out: the drops only writing the examples finds. */
const EXPORT_DRY_RUN_NOTE =
  'not counted in a dry run: what writing the examples drops (too_long, secret, duplicate_example, not_representable)';
/** With --tokenizer DIR or --train-on last: each split's tokens and those trained on (report.json has each file's distribution). */
function tokensBySplit(report: Record<string, unknown>): string[] {
  const bySplit = report.tokens_by_split as Record<string, { tokens: number; trained_tokens: number }> | undefined;
  if (bySplit === undefined) return [];
  const splits = Object.entries(bySplit).map(([split, t]) => `${split} ${formatCount(t.tokens)} (${formatCount(t.trained_tokens)} trained)`);
  return [`tokens (${String(report.tokenizer)}, train on ${String(report.train_on)}): ${splits.join(', ')}`];
}

/** Files a target wrote beside the data (hf: the dataset card and each trainer's entry), a few named. */
function besideData(report: Record<string, unknown>, out: string): string[] {
  const files = report.beside_data as string[] | undefined;
  if (files === undefined || files.length === 0) return [];
  const named = files.slice(0, 4).map((f) => path.join(out, f)).join(', ');
  return [`beside the data: ${named}${files.length > 4 ? `, … ${formatCount(files.length - 4)} more (report.json lists them)` : ''}`];
}

/**
 * `--format`'s value: one of the formats, else, for the name of a trainer that reads one
 * (`trl`, `axolotl`: a target's `readBy`), the format to give; else the choices.
 */
export function formatNamed(value: string, choices: readonly string[] = [...TARGET_NAMES, 'ask-recording']): string {
  if (choices.includes(value)) return value;
  const readers = Object.values(TARGETS).filter((target) => choices.includes(target.name) && target.readBy?.includes(value.toLowerCase()));
  if (readers.length > 0) {
    throw new InvalidArgumentError(`${value} names no format: ${readers.map((t) => `--format ${t.name} writes what ${value} reads (${t.description ?? t.name})`).join('; ')}.`);
  }
  throw new InvalidArgumentError(`Allowed choices are ${choices.join(', ')}.`);
}

export function registerExport(program: Command): void {
  const command = program
    .command('export')
    .description('Write a fine-tuning dataset (training.jsonl, validation.jsonl, report.json) that the trainer accepts.')
    .argument('[roots...]', ROOTS_DESCRIPTION)
    .addOption(
      new Option('--format <target>', `the trainer to write for (${Object.values(TARGETS).map((t) => `${t.name}: ${t.description ?? t.name}`).join('; ')}), or ask-recording (Ask recording files for replay tests)`)
        .choices([...TARGET_NAMES, 'ask-recording'])
        .argParser((value: string) => formatNamed(value))
        .makeOptionMandatory(),
    )
    .addOption(outputOption('--out <dir>', 'output folder (required)'))
    .option('--force', 'write into a non-empty --out, replacing the files this run writes')
    .addOption(new Option('--reasoning <mode>', 'reasoning_content: keep (nemo default), drop (openai), inline as <think>…</think> (customizer default)').choices(['keep', 'drop', 'inline']))
    .option('--tools <file>', 'JSON array of OpenAI-style tool definitions (otherwise inferred from the recorded calls); a record that kept the tools its call was offered (OTLP spans) carries those')
    .option('--inferred-tools <file>', 'tool definitions inferred once for a sharded run (traces keep-list --tools-out), used as if inferred here: every host then writes the same tools')
    .option('--validation-fraction <f>', 'share of first-user-message groups for validation (0: an empty file, none for nemo-customizer)', '0.1')
    .option('--seed <s>', 'seed of the split', '0');
  addTokenizerOptions(command);
  command
    .option('--max-example-tokens <n>', 'drop examples longer than this (reason too_long)')
    .option('--max-file-mb <n>', 'split files into numbered shards past this size (default 512 for openai, 256 for hf)')
    .addOption(new Option('--group-by <what>', 'one dataset per program and module under DIR/<program>/<module>/').choices(['none', 'module']).default('none'))
    .addOption(outputOption('--manifest <file>', 'where to list every dropped record (default: DIR/_traces/manifest.jsonl)'))
    .option('--scrub <kinds>', 'redact what the detectors find: secrets, secrets,pii (adds personal data), or none', 'secrets')
    .option('--scrub-rules <file>', 'extra named regular expressions to redact: [{"name","pattern"}]')
    .addOption(new Option('--drop-on <kinds>', 'drop a whole example holding a secret instead of redacting it (reason secret)').choices(['secrets']))
    .option('--dry-run', 'write nothing; print how many records the curation (selection, quality, dedupe, collapse) would keep and drop, by reason, with a few examples')
    .option('--json', 'print the report as JSON on stdout (with --dry-run: the summary and every drop)')
    .option('-v, --verbose', 'list the files skipped as not being traces; with --dry-run, every dropped record')
    .option('--scores <file>', 'preference formats: a score per call (JSONL, CSV or Parquet with call_id and score); per prompt, the highest-scored answer is chosen over the lowest')
    .option('--min-margin <n>', 'preference formats: pair scored answers only when their scores are at least this far apart (default: any difference)');
  addTargetOptions(command);
  addCurationOptions(command, { status: 'ok', trajectories: 'last' });
  addNearDuplicatesOption(command);
  addSourceOption(command);
  command
    .addHelpText(
      'after',
      `
${paragraph(`Defaults for export: --status ok, one record per --key ${DEFAULT_KEY} (${KEY_MEANING[DEFAULT_KEY]}), an answer no quality stage flagged kept over a flagged one, then the first (--keep first), and agent runs collapsed to their last step (--trajectories last). Secrets found in messages, reasoning, tool arguments and tool results are replaced by [REDACTED:<detector>] (--scrub secrets is the default; traces scan lists them first). Each output file is validated before it is renamed into place: export fails (exit 1, nothing written) rather than leave a file the trainer would reject. The summary says what the files hold that the records did not (tool definitions inferred from calls, what became of reasoning) and ends with where they go (next: …); a training file the trainer refuses as it is (OpenAI: fewer than 10 examples) is written, and the last line says so.`)}

${paragraph(`Preference formats (openai-preference, hf-preference, nemo-preference) write pairs of answers to one prompt (one --key, by default ${DEFAULT_KEY}): a good answer chosen over one a quality stage names (empty, broken, truncated, repetition, refusal, identity), and with --scores the highest-scored answer over the lowest (one pair per prompt, at least --min-margin apart). Two different answers with no signal are no pair; a failed call is never the rejected answer; every record in no pair is in the manifest as no_pair, with why. Agent steps are kept whole (--trajectories all).`)}

--format ask-recording writes the curated conversations back as Ask recordings,
one per program and module: DIR/<program>__<module>/recording.yml (JSON, like
Ask's own), each conversation as the provider and tool interactions Ask records,
so a fine-tuned model can be tested against them with Ask's replay. They are
scrubbed like every export (--scrub, --drop-on): recordings get committed.

Examples:
  traces export --format nemo --out dataset/
  traces export samples/synalinks --format openai --out ft/ --validation-fraction 0.2 --seed 7
  traces export ~/.synalinks --format nemo-customizer --tools tools.json --out nc/ --group-by module
  traces export ~/.synalinks --format openai --against ft/ --out ft-today/
  traces export ~/.synalinks --format nemo --tokenizer ./Qwen3-0.6B --max-seq-length 8192 --out ds/
  traces export ~/.synalinks --format openai-preference --out dpo/
  traces export ~/.synalinks --format hf-preference --scores rewards.jsonl --min-margin 0.2 --out dpo/
  traces export ~/.synalinks --format nemo-preference --scores scores.csv --dry-run`,
    )
    .action(async (roots: string[], flags: ExportFlags, command: Command) => {
      if (flags.out === undefined && !flags.dryRun) throw new UserError('export needs --out DIR (or --dry-run)');
      roots = rootsAfterNearDuplicates(flags, roots);
      let curation = parseCurationOptions(flags, true);
      const preference = flags.format !== 'ask-recording' && getTarget(flags.format).preference !== undefined;
      if (!preference && (flags.scores !== undefined || flags.minMargin !== undefined)) {
        throw new UserError(`${flags.scores !== undefined ? '--scores' : '--min-margin'} pairs answers for a preference format (${TARGET_NAMES.filter((name) => getTarget(name).preference !== undefined).join(', ')}); --format ${flags.format} writes no pairs: leave it out`);
      }
      if (preference && curation.nearDuplicates != null) throw new UserError('--near-duplicates compares answers, which is what a preference pair does: leave it out with a preference format');
      if (preference && flags.groupBy === 'module') throw new UserError(`--group-by module: --format ${flags.format} writes one dataset of pairs; export each module with --program and --module instead`);
      const minMargin = flags.minMargin === undefined ? 0 : numberOption('--min-margin', flags.minMargin, (value) => value >= 0, 'a number ≥ 0');
      // Every option a real run would refuse is refused by a dry run too: checked before either starts.
      const askRecording = flags.format === 'ask-recording';
      if (askRecording) refuseTrainingSetOptions(command);
      const settings = targetSettings(command, flags.format);
      // 1 would put every group in validation and leave training, the file every trainer needs, empty.
      const fraction = askRecording ? 0 : numberOption('--validation-fraction', flags.validationFraction, (value) => value >= 0 && value < 1, 'a number from 0 to below 1 (at 1 nothing trains)');
      const refusal = askRecording ? undefined : getTarget(flags.format).trainOnLastRefusal;
      if (flags.trainOn === 'last' && refusal !== undefined) throw new UserError(`--train-on last: ${refusal}`);
      const tokenizer = askRecording ? null : await parseTokenizer(flags, flags.format as TargetName);
      const seed = askRecording ? 0 : numberOption('--seed', flags.seed, (value) => Number.isSafeInteger(value) && value >= 0, 'a whole number ≥ 0');
      const maxExampleTokens = askRecording ? null : positive('--max-example-tokens', flags.maxExampleTokens);
      const maxFileMb = askRecording ? null : positive('--max-file-mb', flags.maxFileMb);
      if (flags.dryRun) {
        if (!askRecording) {
          const { exportInputs } = await import('../export/run.js');
          await exportInputs({ format: flags.format, targetSettings: settings, reasoning: flags.reasoning, toolsFile: flags.tools, inferredToolsFile: flags.inferredTools });
        }
        const scrub = scrubSettings(flags);
        const discovery = await findTraceFiles(roots, { ...flags, names: scrub }, false);
        if (preference) {
          const { preferenceCuration } = await import('../export/preference-run.js');
          curation = (await preferenceCuration(curation, { scoresFile: flags.scores ?? null, minMargin })).curation;
        }
        return dryRunCuration(discovery, curation, flags, { notCounted: EXPORT_DRY_RUN_NOTE, scrub });
      }
      if (askRecording) {
        const discovered = await findTraceFiles(roots, { ...flags, names: scrubSettings(flags) }, true);
        // Implementations load on use: every other command would pay for them at start-up.
        const { runAskRecordingExport } = await import('../export/ask-recording.js');
        const { plan, report } = await runAskRecordingExport(discovered, curation, { out: flags.out!, force: flags.force === true, manifest: flags.manifest, scrub: scrubSettings(flags), invocation: { arguments: process.argv.slice(2) } });
        if (flags.json) printJson(report);
        writeSummary(
          [
            readLine(plan),
            `wrote ${plural(report.conversations as number, 'conversation')} in ${plural((report.files as unknown[]).length, 'Ask recording')} to ${flags.out}`,
            `report: ${path.join(flags.out!, REPORT_FILE)}`,
            ...droppedSummary(report.dropped as Record<string, number>, flags.manifest ?? path.join(flags.out!, META_DIR, 'manifest.jsonl')),
            redactionSummary(report.scrub as { kinds: string[]; redactions: Record<string, number> } | null),
            ...acrossModulesLines(plan),
            ...qualityLines((report.quality as QualityReport | undefined) ?? null, report.dropped as Record<string, number>),
            ...(curation.exclude?.describe('--exclude') ?? []),
            ...(report.warnings as string[]).map((w) => `warning: ${w}`),
            ...(plan.keepList?.describe('--keep-list') ?? []),
          ],
        );
        return;
      }
      const discovery = await findTraceFiles(roots, { ...flags, names: scrubSettings(flags) }, true);
      const { runExport } = await import('../export/run.js');
      const { plan, report, invalid } = await runExport(discovery, curation, {
        format: flags.format,
        targetSettings: settings,
        out: flags.out!,
        force: flags.force === true,
        reasoning: flags.reasoning,
        toolsFile: flags.tools,
        inferredToolsFile: flags.inferredTools,
        validationFraction: fraction,
        seed,
        invocation: { arguments: process.argv.slice(2) },
        tokenizer: tokenizer!.spec,
        maxSeqLength: tokenizer!.maxSeqLength,
        trainOn: flags.trainOn,
        maxExampleTokens,
        maxFileMb,
        groupBy: flags.groupBy,
        manifest: flags.manifest,
        scrub: scrubSettings(flags),
        scoresFile: flags.scores ?? null,
        minMargin,
      }, exportPreference);
      if (invalid.length > 0) {
        for (const r of invalid) process.stderr.write(describeValidation(r));
        process.stderr.write(`traces: export would write files ${flags.format} rejects; nothing was written (this is a bug in traces: please report it with the lines above)\n`);
        process.exitCode = 1;
        return;
      }
      if (flags.json) printJson(report);
      writeSummary(
        [
          readLine(plan),
          ...writtenSummary(report.files as SplitFile[], SPLITS, flags.out!),
          `report: ${path.join(flags.out!, REPORT_FILE)}`,
          ...besideData(report, flags.out!),
          ...droppedSummary(report.dropped as Record<string, number>, flags.manifest ?? path.join(flags.out!, META_DIR, 'manifest.jsonl'), (report.drop_fixes as Record<string, string> | undefined) ?? {}),
          redactionSummary(report.scrub as { kinds: string[]; redactions: Record<string, number> } | null),
          ...acrossModulesLines(plan),
          ...qualityLines((report.quality as QualityReport | undefined) ?? null, report.dropped as Record<string, number>),
          ...tokensBySplit(report),
          ...(report.pairs !== undefined ? [pairsWrittenLine(report.pairs as { found: Record<string, number>; written: Record<string, number> })] : []),
          ...(curation.exclude?.describe('--exclude') ?? []),
          ...(report.warnings as string[]).map((w) => `warning: ${w}`),
          ...(plan.keepList?.describe('--keep-list') ?? []),
          ...takeSkippedNote(),
          ...exportLines(report as unknown as ExportStory, getTarget(flags.format, settings), flags.out!),
        ],
      );
    });
}
