/** `dedupe` and `filter`: the curation plan, then a copy of the kept lines into a new tree. */
import path from 'node:path';
import { Command } from 'commander';
import { UserError } from '../errors.js';
import { planCuration, type CurationPlan, type Drop } from '../pipeline/curate.js';
import { META_DIR, writeKeptKeys } from '../output/kept-keys.js';
import { OutputDir, type OutputFile } from '../output/output-dir.js';
import { copyKeptLines } from '../output/tree-copy.js';
import { addCurationOptions, addNearDuplicatesOption, parseCurationOptions, rootsAfterNearDuplicates, type CurationFlags } from './curation-options.js';
import { addSourceOption, findTraceFiles, printJson, ROOTS_DESCRIPTION } from './common.js';

interface OutputFlags {
  out?: string;
  force?: boolean;
  manifest?: string;
  dryRun?: boolean;
  json?: boolean;
  verbose?: boolean;
}

const DRY_RUN_LISTED = 50;

const NON_SYNALINKS_OUTPUT = `Ask recordings and klieo runs have no trace line to copy: each kept record is
written as a Synalinks-shaped JSONL line (messages rebuilt, usage, cost, hashes, plus
"source" and "partial") under <program>/<module>/<module>_<YYYYmmdd-HHMMSS>.jsonl,
names made safe, the time (UTC) being that of the first kept record of the source
file and module. traces reads and verifies that tree like any Synalinks tree.`;

export function describeDrop(drop: Drop): string {
  const who = drop.call_id ? ` ${drop.call_id}` : '';
  const why = drop.reason + (drop.kept ? ` of ${drop.kept}` : '') + (drop.detail ? ` (${drop.detail})` : '');
  return `${drop.file}:${drop.line}${who}: ${why}`;
}

export function summaryJson(plan: CurationPlan, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    records_read: plan.recordsRead,
    damaged_lines: plan.damagedLines,
    kept: plan.kept,
    dropped: plan.dropped,
    unique_keys: plan.uniqueKeys,
    index_bytes: plan.indexBytes,
    ...(plan.keepList !== null ? { keep_list: plan.keepList.toJSON() } : {}),
    ...extra,
  };
}

export function summaryText(plan: CurationPlan): string {
  const dropped = Object.entries(plan.dropped).filter(([, n]) => n > 0);
  const total = dropped.reduce((sum, [, n]) => sum + n, 0);
  return [
    `read ${plan.recordsRead.toLocaleString('en-US')} records from ${plan.files.length} files` +
      (plan.damagedLines > 0 ? ` (${plan.damagedLines} damaged line${plan.damagedLines === 1 ? "" : "s"}, listed in the manifest)` : ''),
    `kept ${plan.kept.toLocaleString('en-US')}`,
    `dropped ${total.toLocaleString('en-US')}${dropped.length > 0 ? `: ${dropped.map(([r, n]) => `${r} ${n.toLocaleString('en-US')}`).join(', ')}` : ''}`,
    ...(plan.keepList?.notFoundLines('--keep-list') ?? []),
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
    .option('--dry-run', 'write nothing; print what would be kept and dropped')
    .option('--json', 'print the summary as JSON on stdout')
    .option('-v, --verbose', 'list the files skipped as not being traces');
  addCurationOptions(command, { status: 'ok,exception,no_output', trajectories: 'all' });
  if (spec.dedupe) addNearDuplicatesOption(command);
  addSourceOption(command);
  command.addHelpText('after', `\n${spec.examples}\n\n${NON_SYNALINKS_OUTPUT}`).action(async (roots: string[], flags: CurationFlags & OutputFlags) => {
    if (!flags.dryRun && flags.out === undefined) throw new UserError(`${spec.name} needs --out DIR (or --dry-run)`);
    roots = rootsAfterNearDuplicates(flags, roots);
    const options = parseCurationOptions(flags, spec.dedupe);
    const discovery = await findTraceFiles(roots, flags, !flags.dryRun);
    const output = flags.dryRun ? null : OutputDir.open(flags.out!, { force: flags.force === true, roots: discovery.inputs ?? [] });
    try {
      let manifest: OutputFile | null = null;
      if (output !== null) {
        manifest = flags.manifest !== undefined ? output.createAt(path.resolve(flags.manifest)) : output.create(path.join(META_DIR, 'manifest.jsonl'));
      }
      const listed: Drop[] = [];
      const plan = await planCuration(discovery, options, (drop) => {
        if (manifest !== null) manifest.writeLine(JSON.stringify(drop));
        else if (listed.length < DRY_RUN_LISTED) listed.push(drop);
      });
      if (output !== null) {
        await copyKeptLines(plan.files, plan.keptLines, output);
        writeKeptKeys(output, plan.keptKeys, { command: spec.name, key: options.key });
        output.commit();
      }
      const totalDropped = Object.values(plan.dropped).reduce((a, b) => a + b, 0);
      if (flags.json) printJson(summaryJson(plan, { out: output?.dir ?? null, dry_run: output === null }));
      if (output === null && !flags.json) {
        for (const drop of listed) process.stdout.write(`${describeDrop(drop)}\n`);
        if (totalDropped + plan.damagedLines > listed.length) {
          process.stdout.write(`… ${(totalDropped + plan.damagedLines - listed.length).toLocaleString('en-US')} more drops not listed\n`);
        }
      }
      process.stderr.write(`${summaryText(plan)}\n${output === null ? 'dry run: nothing written' : `wrote ${flags.out}`}\n`);
    } catch (error) {
      output?.abort();
      throw error;
    }
  });
}
