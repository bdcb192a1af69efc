/** `dedupe` and `filter`: the curation plan, then a copy of the kept lines into a new tree. */
import { Command } from 'commander';
import { UserError } from '../errors.js';
import { planCuration, type CurationPlan } from '../pipeline/curate.js';
import { refuseNoRecords } from '../sources/no-records.js';
import { writeKeptKeys } from '../output/kept-keys.js';
import { META_DIR, OutputDir, type OutputFile } from '../output/output-dir.js';
import { TreeCopy } from '../output/tree-copy.js';
import { fileSizes } from '../parallel/units.js';
import { Progress } from '../progress.js';
import { addCurationOptions, addNearDuplicatesOption, parseCurationOptions, rootsAfterNearDuplicates, type CurationFlags } from './curation-options.js';
import { DropDigest } from './drop-digest.js';
import { addSourceOption, findTraceFiles, printJson, ROOTS_DESCRIPTION } from './common.js';
import { formatCount, plural } from '../format.js';
import { dropLines } from './run-summary.js';

interface OutputFlags {
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
    index_bytes: plan.indexBytes,
    ...(plan.keepList !== null ? { keep_list: plan.keepList.report() } : {}),
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
    ...(plan.keepList?.describe('--keep-list') ?? []),
  ].join('\n');
}

export function registerCurationCommand(
  program: Command,
  spec: { name: string; dedupe: boolean; description: string; examples: string },
): void {
  const command = program
    .command(spec.name)
    .description(spec.description)
    .argument('[roots...]', ROOTS_DESCRIPTION)
    .option('--out <dir>', 'write the kept records here, same layout and file names (see below for Ask and klieo)')
    .option('--force', 'write into a non-empty --out, replacing the files this run writes')
    .option('--manifest <file>', `where to list every dropped record (default: DIR/${META_DIR}/manifest.jsonl)`)
    .option('--dry-run', 'write nothing; print how many records would be kept and dropped, by reason, with a few examples')
    .option('--json', 'print the summary as JSON on stdout (with --dry-run: every drop too)')
    .option('-v, --verbose', 'with --dry-run, list every dropped record; always, list the files skipped as not being traces');
  addCurationOptions(command, { status: 'ok,exception,no_output', trajectories: 'all' });
  if (spec.dedupe) addNearDuplicatesOption(command);
  addSourceOption(command);
  command.addHelpText('after', `\n${spec.examples}\n\n${NON_SYNALINKS_OUTPUT}`).action(async (roots: string[], flags: CurationFlags & OutputFlags) => {
    if (!flags.dryRun && flags.out === undefined) throw new UserError(`${spec.name} needs --out DIR (or --dry-run)`);
    roots = rootsAfterNearDuplicates(flags, roots);
    const options = parseCurationOptions(flags, spec.dedupe);
    const discovery = await findTraceFiles(roots, flags, !flags.dryRun);
    const output = flags.dryRun ? null : OutputDir.open(flags.out!, { force: flags.force === true, roots: discovery.inputs ?? [] });
    const digest = output === null ? new DropDigest({ all: flags.json === true ? 'keep' : flags.verbose === true ? 'print' : 'none' }) : null;
    try {
      let manifest: OutputFile | null = null;
      if (output !== null) {
        manifest = output.manifest(flags.manifest);
      }
      let copy: TreeCopy | null = null;
      const plan = await planCuration(
        discovery,
        options,
        (drop) => {
          if (manifest !== null) manifest.writeLine(JSON.stringify(drop));
          else digest!.add(drop);
        },
        // The copy starts while the last drops are written (in worker threads, when the run has them).
        { whenKept: output === null ? undefined : (kept) => (copy = new TreeCopy(discovery.files, kept.keptLines, kept.keptOffsets, output)) },
      );
      refuseNoRecords(discovery, plan.recordsRead, plan.damagedLines);
      if (output !== null) {
        const copied = plan.files.filter((_, index) => plan.keptLines.has(index));
        const progress = new Progress(copied.length, undefined, { label: 'copying', totalBytes: fileSizes(copied).reduce((a, b) => a + b, 0) });
        try {
          await (copy ?? new TreeCopy(plan.files, plan.keptLines, plan.keptOffsets, output)).finish(progress);
        } finally {
          progress.done();
        }
        writeKeptKeys(output, plan.keptKeys, { command: spec.name, key: options.key });
        output.commit();
      }
      const extra = { out: output?.dir ?? null, dry_run: output === null, ...(options.exclude !== null ? { exclude: options.exclude.report() } : {}) };
      if (flags.json && digest !== null) await digest.printJson(summaryJson(plan, extra));
      else if (flags.json) printJson(summaryJson(plan, extra));
      else if (digest !== null && !flags.verbose) process.stdout.write(digest.examples());
      const listedIn = output !== null ? null : flags.json ? 'listed in the JSON "drops"' : 'see above';
      const lines = [summaryText(plan, listedIn), ...(options.exclude?.describe('--exclude') ?? [])];
      if (output === null) {
        const drops = digest!.total;
        lines.push(
          digest!.allShown || flags.verbose || flags.json
            ? 'dry run: nothing written'
            : `dry run: nothing written; -v lists all ${formatCount(drops)} dropped records and damaged lines, --json gives them as JSON`,
        );
      } else lines.push(`wrote ${flags.out} (dropped records and damaged lines listed in ${manifest!.finalPath})`);
      process.stderr.write(`${lines.join('\n')}\n`);
    } catch (error) {
      digest?.dispose();
      output?.abort();
      throw error;
    }
  });
}
