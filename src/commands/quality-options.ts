/** `--quality` and the options of each quality stage, shared by dedupe, filter and export. */
import { existsSync, readFileSync } from 'node:fs';
import { repeatable } from './option-repeats.js';
import type { Command } from 'commander';
import { UserError } from '../errors.js';
import { buildEvalIndex, DEFAULT_FIELDS, NGRAM_WORDS } from '../pipeline/quality/contamination.js';
import { DEFAULT_MODES, QUALITY_FILTERS, type QualityFilter, type QualityMode, type QualitySettings } from '../pipeline/quality/index.js';
import { foldPhrases, IDENTITY_PHRASES, REFUSAL_PHRASES } from '../pipeline/quality/phrases.js';
import { numberOption } from './common.js';
import { formatCount, plural, printable } from '../format.js';
import type { QualityReport } from '../pipeline/curate.js';

export interface QualityFlags {
  quality?: string;
  drop?: string;
  /** Commander's `--no-<filter>`: false when given. */
  truncated?: boolean;
  broken?: boolean;
  empty?: boolean;
  repetition?: boolean;
  refusals?: boolean;
  identity?: boolean;
  maxCompletionTokens?: string;
  refusalPhrases?: string;
  identityPhrases?: string;
  decontaminate?: string[];
  decontaminateField?: string;
}

/** Names `--quality` and `--drop` take: each filter, plus the plural the issue and docs use. */
const ALIASES: Record<string, QualityFilter> = { refusals: 'refusal', refused: 'refusal', identities: 'identity', repetitions: 'repetition' };
/** The `--no-<name>` flag of each filter (commander's attribute name). */
const OFF_FLAGS: Record<QualityFilter, keyof QualityFlags> = {
  truncated: 'truncated',
  broken: 'broken',
  empty: 'empty',
  repetition: 'repetition',
  refusal: 'refusals',
  identity: 'identity',
};

export function addQualityOptions(command: Command): Command {
  return command
    .option(
      '--quality <list>',
      `quality stages to run: all, none, default, or a comma-separated list of ${QUALITY_FILTERS.join(',')} (replaces the default: truncated,broken,empty drop; refusal,identity flag; repetition off)`,
    )
    .option('--drop <list>', 'drop, not just flag, what these flagging stages find: refusals,identity')
    .option('--no-truncated', 'keep answers cut at the token limit (Ask/klieo stop reason length or max_tokens): reads the recorded stop reason and usage, no measurable cost')
    .option('--no-broken', 'keep answers with an unclosed or unopened <think>, or the answer in the reasoning field; broken, empty, refusal and identity read the completion alone, at no time an export notices')
    .option('--no-empty', 'keep empty or white-space answers without tool calls (reads the completion alone)')
    .option('--no-repetition', 'skip Gopher repetition rules on the answer (off by default: it tokenizes every answer, the one stage that makes an export noticeably slower, and drops some normal answers too; docs/quality-filters.md)')
    .option('--no-refusals', 'do not look for refusal phrases (flagged by default; one substring search per phrase over the answer)')
    .option('--no-identity', 'do not look for identity phrases ("As an AI developed by", "my knowledge cutoff"; flagged by default)')
    .option('--max-completion-tokens <n>', 'count a completion of N tokens or more (recorded usage) as truncated, for records without a stop reason (Synalinks records none)')
    .option('--refusal-phrases <file>', 'phrases that mark a refusal, one a line (# comments): replaces the built-in list')
    .option('--identity-phrases <file>', 'phrases that mark a model speaking of itself, one a line: replaces the built-in list')
    .option(
      '--decontaminate <file>',
      `drop records whose user text shares a word ${NGRAM_WORDS}-gram with an item of this evaluation set (JSONL, CSV, or text one item a line; repeatable; parses every record's messages, a little slower)`,
      repeatable,
    )
    .option('--decontaminate-field <name>', `the JSONL field or CSV column holding each evaluation item (default: the first user message of \`messages\`, else the first of ${DEFAULT_FIELDS.join(', ')} that holds text)`);
}

function filterNamed(flag: string, name: string): QualityFilter {
  const filter = (QUALITY_FILTERS as readonly string[]).includes(name) ? (name as QualityFilter) : ALIASES[name];
  if (filter === undefined) {
    // --quality also takes the set words; --drop only names stages (all, none and default are no stage).
    const expected = flag === '--quality' ? 'all, none, default or a comma-separated list of' : 'a comma-separated list of stages to drop with, from';
    throw new UserError(`${flag} ${JSON.stringify(name)}: expected ${expected} ${QUALITY_FILTERS.join(', ')}`);
  }
  return filter;
}

function phrasesFile(flag: string, file: string): string[] {
  if (!existsSync(file)) throw new UserError(`${flag} ${file}: no such file`);
  const phrases = foldPhrases(
    readFileSync(file, 'utf8')
      .split(/\r?\n/)
      .filter((line) => !line.trimStart().startsWith('#')),
  );
  if (phrases.length === 0) throw new UserError(`${flag} ${file}: lists no phrase (one a line, # comments)`);
  return phrases;
}

/** How each filter runs: `--quality` picks the set, `--drop` turns a flag into a drop, `--no-<filter>` turns one off. */
function qualityModes(flags: QualityFlags): Record<QualityFilter, QualityMode> {
  const modes = { ...DEFAULT_MODES };
  const text = (flags.quality ?? 'default').trim();
  if (text === 'none') for (const name of QUALITY_FILTERS) modes[name] = 'off';
  else if (text === 'all') for (const name of QUALITY_FILTERS) modes[name] = DEFAULT_MODES[name] === 'off' ? 'drop' : DEFAULT_MODES[name];
  else if (text !== 'default') {
    const chosen = new Set(text.split(',').map((part) => filterNamed('--quality', part.trim())));
    for (const name of QUALITY_FILTERS) modes[name] = !chosen.has(name) ? 'off' : DEFAULT_MODES[name] === 'off' ? 'drop' : DEFAULT_MODES[name];
  }
  for (const part of flags.drop?.split(',') ?? []) modes[filterNamed('--drop', part.trim())] = 'drop';
  for (const name of QUALITY_FILTERS) if (flags[OFF_FLAGS[name]] === false) modes[name] = 'off';
  return modes;
}

export function parseQualityOptions(flags: QualityFlags): QualitySettings {
  const maxCompletionTokens =
    flags.maxCompletionTokens === undefined
      ? null
      : numberOption('--max-completion-tokens', flags.maxCompletionTokens, (value) => Number.isInteger(value) && value > 0, 'a whole number > 0');
  const files = flags.decontaminate ?? [];
  for (const file of files) {
    if (!existsSync(file)) throw new UserError(`--decontaminate ${file}: no such file`);
  }
  if (flags.decontaminateField !== undefined && files.length === 0) throw new UserError('--decontaminate-field names a field of the --decontaminate files: give those too');
  return {
    modes: qualityModes(flags),
    maxCompletionTokens,
    refusalPhrases: flags.refusalPhrases !== undefined ? phrasesFile('--refusal-phrases', flags.refusalPhrases) : foldPhrases(REFUSAL_PHRASES),
    identityPhrases: flags.identityPhrases !== undefined ? phrasesFile('--identity-phrases', flags.identityPhrases) : foldPhrases(IDENTITY_PHRASES),
    evals: files.length > 0 ? buildEvalIndex(files, flags.decontaminateField ?? null) : null,
  };
}

/** The summary's quality lines: what was flagged and kept, and contamination per evaluation file. */
export function qualityLines(report: QualityReport | null, dropped: Readonly<Record<string, number>> = {}): string[] {
  if (report === null) return [];
  const lines: string[] = [];
  const flagged = Object.entries(report.flagged);
  const total = flagged.reduce((sum, [, n]) => sum + n, 0);
  // Stages that ran and found nothing are said so: silence read as "did not run".
  const ran = (mode: string) => Object.entries(report.modes).filter(([, m]) => m === mode).map(([stage]) => stage);
  // Records that hold no stop reason and no token limit: truncated could not look, which is not "found nothing".
  const unchecked = report.truncated_not_checked ?? 0;
  const dropping = ran('drop').filter((stage) => !(stage === 'truncated' && unchecked > 0 && (dropped.truncated ?? 0) === 0));
  const dropsFound = dropping.reduce((sum, stage) => sum + (dropped[stage] ?? 0), 0);
  if (total === 0 && dropsFound === 0 && dropping.length + ran('flag').length > 0) {
    const said = [dropping.length > 0 ? `${dropping.join(', ')} dropped none` : '', ran('flag').length > 0 ? `${ran('flag').join(', ')} flagged none` : ''].filter((s) => s !== '');
    lines.push(`the quality stages found nothing: ${said.join('; ')}`);
  }
  if (unchecked > 0) {
    lines.push(`truncated: not checked for ${plural(unchecked, 'record')} that record no stop reason; --max-completion-tokens N checks them`);
  }
  if (total > 0) {
    const found = flagged.filter(([, n]) => n > 0);
    // Within a key an answer no stage named is kept over a flagged one (dedupe.ts): those flagged records are not kept.
    const gaveWay = report.flagged_gave_way ?? 0;
    lines.push(
      `flagged ${formatCount(total)}${gaveWay === 0 ? ' kept' : ''} record${total === 1 ? '' : 's'}: ${found.map(([r, n]) => `${r} ${formatCount(n)}`).join(', ')}` +
        ` (listed with "flagged": true; --drop ${found.map(([r]) => r).join(',')} drops them)`,
    );
    if (gaveWay > 0) {
      lines.push(`  ${formatCount(gaveWay)} of them gave way to an unflagged answer of their key, which is kept (a key keeps a flagged record only when it has no other)`);
    }
  }
  for (const file of report.evaluation_files) {
    const first = file.overlaps[0];
    lines.push(
      printable(
        `${file.file}: ${formatCount(file.contaminated_records)} contaminated record${file.contaminated_records === 1 ? '' : 's'} matching ${formatCount(file.items_matched)} of ${formatCount(file.items)} items` +
          (file.items_under_8_words > 0 ? ` (${formatCount(file.items_under_8_words)} items under ${NGRAM_WORDS} words cannot match)` : '') +
          (first !== undefined ? `, e.g. ${JSON.stringify(first.ngram)} (item at line ${first.line})` : ''),
      ),
    );
  }
  return lines;
}
