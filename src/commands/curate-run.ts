/** `dedupe` and `filter`: the curation plan, then a copy of the kept lines into a new tree. */
import { Command } from 'commander';
import { UserError } from '../errors.js';
import { planCuration, type CurationOptions, type CurationPlan } from '../pipeline/curate.js';
import type { Discovery } from '../sources/discover.js';
import { refuseNoRecords } from '../sources/no-records.js';
import { writeKeptKeys } from '../pipeline/kept-keys.js';
import { META_DIR, OutputDir } from '../output/output-dir.js';
import { TreeCopy } from '../pipeline/tree-copy.js';
import { fileSizes } from '../parallel/units.js';
import { Progress } from '../progress.js';
import { addCurationOptions, addNearDuplicatesOption, parseCurationOptions, rootsAfterNearDuplicates, type CurationFlags } from './curation-options.js';
import { DropDigest } from './drop-digest.js';
import { addSourceOption, findTraceFiles, printJson, ROOTS_DESCRIPTION, writeSummary } from './common.js';
import { formatCount, plural } from '../format.js';
import { qualityLines } from './quality-options.js';
import { dropLines } from './run-summary.js';
import { pairCounts } from '../pipeline/pairs.js';
import type { ScrubSettings } from '../privacy/scrub.js';
import { addScrubOptions, scrubSettings, type ScrubFlags } from './scrub-option.js';
import { outputOption } from './path-options.js';

interface OutputFlags extends ScrubFlags {
  out?: string;
  force?: boolean;
  manifest?: string;
  dryRun?: boolean;
  json?: boolean;
  verbose?: boolean;
}

const NON_SYNALINKS_OUTPUT = `Ask recordings and klieo runs have no trace line to copy: each kept record is
written as a Synalinks-shaped JSONL line (messages rebuilt, usage, cost, hashes, plus
"source" and "partial") under <program>/<module>/<module>_<YYYYmmdd-HHMMSS>.jsonl,
names made safe, the time (UTC) being that of the first kept record of the source
file and module. traces reads and verifies that tree like any Synalinks tree.`;

export function summaryJson(plan: CurationPlan, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    records_read: plan.recordsRead,
    damaged_lines: plan.damagedLines,
    kept: plan.kept,
    dropped: plan.dropped,
    unique_keys: plan.uniqueKeys,
    ...(plan.mergedAcrossModules !== null ? { merged_across_modules: plan.mergedAcrossModules } : {}),
    index_bytes: plan.indexBytes,
    ...(plan.keepList !== null ? { keep_list: plan.keepList.report() } : {}),
    ...(plan.quality !== null ? { quality: plan.quality } : {}),
    ...(plan.pairs != null ? { pairs: { found: pairCounts(plan.pairs) } } : {}),
    ...extra,
  };
}

/** The end-of-run lines; `listedIn` says where the damaged lines are shown (null: the last line says it). */
export function summaryText(plan: CurationPlan, listedIn: string | null): string {
  const total = Object.values(plan.dropped).reduce((sum, n) => sum + n, 0);
  return [
    `read ${plural(plan.recordsRead, 'record')} from ${plural(plan.files.length, 'file')}` +
      (plan.damagedLines > 0 ? ` (${plural(plan.damagedLines, 'damaged line')}${listedIn !== null ? `, ${listedIn}` : ''})` : ''),
    `kept ${plural(plan.kept, 'record')}`,
    total === 0 ? 'dropped nothing' : `dropped ${plural(total, 'record')}:`,
    ...dropLines(plan.dropped),
    ...(plan.pairs != null ? [pairsFoundLine(pairCounts(plan.pairs))] : []),
    ...acrossModulesLines(plan),
    ...qualityLines(plan.quality, plan.dropped),
    ...(plan.keepList?.describe('--keep-list') ?? []),
  ].join('\n');
}

/** `pairs found by signal: empty 3, score 2 (5 in all)`. */
export function pairsFoundLine(counts: Record<string, number>): string {
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  const parts = Object.entries(counts).filter(([, n]) => n > 0).map(([signal, n]) => `${signal} ${formatCount(n)}`);
  return `pairs found by signal: ${parts.length === 0 ? 'none' : parts.join(', ')} (${formatCount(total)} in all)`;
}

/** With a key that ignores program and module, the line saying how many duplicates it merged across modules. */
export function acrossModulesLines(plan: Pick<CurationPlan, 'mergedAcrossModules'>): string[] {
  const merged = plan.mergedAcrossModules;
  if (merged === null) return [];
  return [
    `merged ${plural(merged, 'duplicate')} across modules: this --key ignores program and module` +
      (merged > 0 ? ' (the manifest names each pair; the default --key inputs,config,module keeps them)' : ''),
  ];
}

export function registerCurationCommand(
  program: Command,
  spec: { name: string; dedupe: boolean; description: string; examples: string },
): void {
  const command = program
    .command(spec.name)
    .description(spec.description)
    .argument('[roots...]', ROOTS_DESCRIPTION)
    .addOption(outputOption('--out <dir>', 'write the kept records here, same layout and file names (see below for Ask and klieo)'))
    .option('--force', 'write into a non-empty --out, replacing the files this run writes')
    .addOption(outputOption('--manifest <file>', `where to list every dropped record (default: DIR/${META_DIR}/manifest.jsonl)`))
    .option('--dry-run', 'write nothing; print how many records would be kept and dropped, by reason, with a few examples')
    .option('--json', 'print the summary as JSON on stdout (with --dry-run: every drop too)')
    .option('-v, --verbose', 'with --dry-run, list every dropped record; always, list the files skipped as not being traces');
  addCurationOptions(command, { status: 'ok,exception,no_output', trajectories: 'all' });
  if (spec.dedupe) addNearDuplicatesOption(command);
  addScrubOptions(command, 'the names in what it prints (drops, file paths, call_ids; the copied records stay as recorded)');
  addSourceOption(command);
  command.addHelpText('after', `\n${spec.examples}\n\n${NON_SYNALINKS_OUTPUT}`).action(async (roots: string[], flags: CurationFlags & OutputFlags) => {
    if (!flags.dryRun && flags.out === undefined) throw new UserError(`${spec.name} needs --out DIR (or --dry-run)`);
    roots = rootsAfterNearDuplicates(flags, roots);
    const options = parseCurationOptions(flags, spec.dedupe);
    // The records are copied as recorded; what the run prints is scrubbed by --scrub.
    const scrub = scrubSettings(flags);
    const discovery = await findTraceFiles(roots, { ...flags, names: scrub }, !flags.dryRun);
    if (flags.dryRun) return dryRunCuration(discovery, options, flags, { scrub });
    const output = OutputDir.open(flags.out!, { force: flags.force === true, roots: discovery.inputs ?? [] });
    let planned: CurationPlan | null = null;
    try {
      const manifest = output.manifest(flags.manifest);
      let copy: TreeCopy | null = null;
      const plan = await planCuration(discovery, options, (drop) => manifest.writeJsonLine(JSON.stringify(drop)), {
        // The copy starts while the last drops are written (in worker threads, when the run has them).
        whenKept: (kept) => (copy = new TreeCopy(discovery.files, kept.keptLines, kept.keptOffsets, output)),
      });
      planned = plan;
      refuseNoRecords(discovery, plan.recordsRead, plan.damagedLines);
      const copied = plan.files.filter((_, index) => plan.keptLines.has(index));
      const progress = new Progress(copied.length, undefined, { label: 'copying', totalBytes: fileSizes(copied).reduce((a, b) => a + b, 0) });
      try {
        await (copy ?? new TreeCopy(plan.files, plan.keptLines, plan.keptOffsets, output)).finish(progress);
      } finally {
        progress.done();
      }
      writeKeptKeys(output, plan.keptKeys, { command: spec.name, key: options.key });
      output.commit();
      const extra = { out: output.dir, dry_run: false, ...(options.exclude !== null ? { exclude: options.exclude.report() } : {}) };
      if (flags.json) printJson(summaryJson(plan, extra));
      const lines = [summaryText(plan, null), ...(options.exclude?.describe('--exclude') ?? [])];
      lines.push(`wrote ${flags.out} (dropped records and damaged lines listed in ${manifest.finalPath})`);
      writeSummary(lines);
    } catch (error) {
      planned?.keptKeys.dispose();
      output.abort();
      throw error;
    } finally {
      planned?.keptFile.dispose();
    }
  });
}

/** How a dry run shows its drops: scrubbed by the command's --scrub; export's adds what only writing would drop. */
export interface DryRunReport {
  scrub: ScrubSettings | null;
  notCounted?: string;
}

/**
 * `--dry-run` of dedupe, filter and export: the curation plan alone, nothing written; the
 * drops by reason with a few examples (-v: all of them, --json: as JSON). The drops and quality
 * overlaps are shown scrubbed, as an export's manifest and report.json would hold them: a file
 * path or call_id can carry a key (a program folder named after one).
 */
export async function dryRunCuration(discovery: Discovery, options: CurationOptions, flags: { json?: boolean; verbose?: boolean }, report: DryRunReport): Promise<void> {
  const scrubs = await import('../privacy/scrub.js');
  const scrub = report.scrub;
  const digest = new DropDigest({ all: flags.json === true ? 'keep' : flags.verbose === true ? 'print' : 'none' });
  try {
    const planned = await planCuration(discovery, options, (drop) => digest.add(scrubs.scrubbedDrop(drop, scrub)));
    // Nothing is written: the kept keys' and kept lines' files go now.
    planned.keptKeys.dispose();
    planned.keptFile.dispose();
    const plan = { ...planned, quality: scrubs.scrubbedQualityReport(planned.quality, scrub) };
    refuseNoRecords(discovery, plan.recordsRead, plan.damagedLines);
    const extra = { out: null, dry_run: true, ...(options.exclude !== null ? { exclude: options.exclude.report() } : {}) };
    if (flags.json) await digest.printJson(summaryJson(plan, extra));
    else if (!flags.verbose) writeSummary(digest.examples(), process.stdout);
    const listedIn = flags.json ? 'listed in the JSON "drops"' : 'see above';
    const lines = [summaryText(plan, listedIn), ...(options.exclude?.describe('--exclude') ?? [])];
    if (report.notCounted !== undefined) lines.push(report.notCounted);
    lines.push(
      digest.allShown || flags.verbose || flags.json
        ? 'dry run: nothing written'
        : `dry run: nothing written; -v lists all ${formatCount(digest.total)} dropped records and damaged lines, --json gives them as JSON`,
    );
    writeSummary(lines);
  } catch (error) {
    digest.dispose();
    throw error;
  }
}
