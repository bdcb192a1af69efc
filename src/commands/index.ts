/** `traces index`: one Parquet row per record, for SQL here (`traces sql`) or in any engine. */
import { createReadStream, existsSync, lstatSync, readdirSync } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { Command, Option } from 'commander';
import { PER_RECORD_TARGET_NAMES } from '../targets/index.js';
import type { ProjectionSettings } from '../export/project-share.js';
import { addExampleOptions, exampleSettings, type ExampleFlags } from './example-options.js';
import { scrubSettings } from './scrub-option.js';
import { addQualityOptions, parseQualityOptions, type QualityFlags } from './quality-options.js';
import { UserError } from '../errors.js';
import type { Engine as EngineType } from '../engine/duckdb.js';
import { loadPriceTable } from '../pricing/table.js';
import type { SourceKind } from '../record.js';
import { Scratch } from '../output/output-file.js';
import { checkOutputPath } from '../output/output-path.js';
import { nameTakenError } from '../output/publish.js';
import { pauseForTest } from '../output/test-pause.js';
import { addPricesOption, addSourceOption, findTraceFiles, printJson, ROOTS_DESCRIPTION, writeSummary } from './common.js';
import { plural } from '../format.js';
import { outputOption } from './path-options.js';

interface IndexFlags extends ExampleFlags, QualityFlags {
  out?: string;
  force?: boolean;
  json?: boolean;
  verbose?: boolean;
  source?: SourceKind;
  prices?: string;
  format?: string;
}

/**
 * With --format: the settings each record's example is made with, as export makes it (its
 * defaults), so the index holds the target's verdict and the example's digest (docs/engine.md).
 */
function projectionOf(flags: IndexFlags): ProjectionSettings | null {
  return flags.format === undefined ? null : exampleSettings(flags.format, flags, { verdictOnly: true });
}

type Target = { kind: 'stdout' } | { kind: 'file' | 'folder'; path: string };

const PART_FILE = /^part-\d+\.parquet$/;

function targetOf(out: string): Target {
  if (out === '-') return { kind: 'stdout' };
  let isFolder = out.endsWith('/');
  try {
    isFolder ||= lstatSync(out).isDirectory();
  } catch {
    // Not there yet: a file, unless named with a trailing slash.
  }
  return { kind: isFolder ? 'folder' : 'file', path: out };
}

function isEmptyFolder(folder: string): boolean {
  try {
    return readdirSync(folder).length === 0;
  } catch {
    return false;
  }
}

/** A folder is replaced under --force only when it holds nothing but part files traces index wrote. */
function checkFolderToReplace(folder: string): void {
  let entries: string[];
  try {
    entries = readdirSync(folder);
  } catch {
    return;
  }
  const foreign = entries.filter((e) => !PART_FILE.test(e));
  if (foreign.length > 0) {
    throw new UserError(`--out ${folder} holds other files than an index's part-N.parquet (${foreign[0]}): choose another folder`);
  }
}

export function registerIndex(program: Command): void {
  const command = program
    .command('index')
    .description('Write a Parquet index of every record (one row each: ids, place, status, hashes, tokens, cost) for SQL engines.')
    .argument('[roots...]', ROOTS_DESCRIPTION)
    .addOption(outputOption('--out <path>', 'FILE.parquet; a folder (DIR/ or an existing folder) of part-N.parquet files; or - for stdout'))
    .option('--force', 'replace an existing --out')
    .option('--json', 'print a JSON summary on stdout')
    .option('-v, --verbose', 'list the files skipped as not being traces');
  command.addOption(
    new Option('--format <target>', "also record, for this export target, its verdict on each record (refused), its example's digest (example) and group (fraction): the keep-list needs them").choices([...PER_RECORD_TARGET_NAMES]),
  );
  addExampleOptions(command, 'with --format', 'the names of every row (and with --format the examples)');
  // With --format, the quality stages export runs: the index records what they drop.
  addQualityOptions(command);
  addSourceOption(command);
  addPricesOption(command);
  command
    .addHelpText(
      'after',
      `
Columns: call_id, parent_call_id, source, root, file (relative to root), line,
offset, length, program, module, model, synalinks_version, status, timestamp
(epoch s), duration, inputs_hash, config_hash (recomputed for a record that
recorded none, as dedupe keys it), conversation_hash, prompt_tokens,
completion_tokens, reasoning_tokens, cached_tokens, total_tokens, cost_usd,
cost_source, messages, has_tool_calls, and what the keep-list compares (null
unless ok): trajectory, trajectory_inputs, trajectory_prefixes, minhash,
tool_calls; with --format, quality, flagged, refused, example and fraction (docs/engine.md).
Names are recorded text: program, module, model, synalinks_version, the tool
names of tool_calls and the folders of file are scrubbed by --scrub as export
scrubs the records (default secrets; --scrub none keeps them as recorded).
Unknown values are null, never 0: a cost
is reported by the recorder or estimated from the price table (cost_source), else
null. Damaged lines are not rows; they are listed on stderr. Rows come in file
order, in row groups of about 131,072 rows (the engine's target: a group can
come out a little larger), compressed with zstd.

A folder of part files suits engines best when shards are many: Spark, Trino,
DuckDB and BigQuery read a folder (or a glob over several hosts' folders) as one
table. --out - writes one Parquet file to stdout (e.g. to pipe to object storage).

Examples:
  traces index ~/.synalinks --out traces.parquet
  traces index /data/host-07 --out s3-staging/host-07/
  traces index ~/.synalinks --out - | aws s3 cp - s3://bucket/index/host-07.parquet
  traces index /data/traces --format openai --out index/host-07/   # then: traces keep-list index/ …
  traces sql "SELECT status, count(*) FROM records GROUP BY 1" --index traces.parquet`,
    )
    .action(async (roots: string[], flags: IndexFlags) => {
      if (flags.out === undefined) throw new UserError('index needs --out FILE.parquet (or DIR/ for part files, or - for stdout)');
      const target = targetOf(flags.out);
      if (target.kind === 'stdout' && flags.json) throw new UserError('--json and --out - both write to stdout: choose one');
      const prices = loadPriceTable(flags.prices);
      const projection = projectionOf(flags);
      // The names of every row are scrubbed as export scrubs the records, with --format or without.
      const scrub = scrubSettings(flags);
      const discovery = await findTraceFiles(roots, { ...flags, names: scrub });
      if (target.kind === 'stdout' && process.stdout.isTTY) throw new UserError('--out - writes binary Parquet: redirect stdout to a file or a program');
      // An empty folder is there to be written into: that needs no --force.
      const emptyFolder = target.kind === 'folder' && isEmptyFolder(target.path);
      const finalPath =
        target.kind === 'stdout'
          ? null
          : checkOutputPath({ flag: '--out', given: target.path, kind: target.kind, inputs: discovery.inputs ?? [], force: flags.force === true || emptyFolder }).absolute;
      if (target.kind === 'folder' && finalPath !== null) {
        checkFolderToReplace(finalPath);
        // Refused now, as an existing file --out is: not after the whole tree is read.
        if (!emptyFolder && flags.force !== true && existsSync(finalPath)) throw new UserError(`--out ${flags.out} already holds an index: pass --force to replace it, or choose another name`);
      }
      const scratch = finalPath === null ? Scratch.inTemp() : Scratch.beside(finalPath);
      // Loaded here, not at the top: the engine's native library is for this command and `sql` only.
      const { Engine } = await import('../engine/duckdb.js');
      const { buildIndex, reportDamage } = await import('../index/build.js');
      let engine: EngineType | null = null;
      // The engine loads while the first shares are read: its library takes a few tenths of a
      // second to load, in this thread, once the worker threads have started on the tree.
      // A library that cannot load stops the command at the next share. One engine thread: a
      // second one saved little time on 2 cores (one row group is encoded by one thread), cost
      // 30-40% more CPU for the Parquet writing and held a second row group in memory.
      const opening = new Promise<void>((resolve) => setImmediate(resolve)).then(() => Engine.open(scratch.file('spill'), { memoryLimit: '256MB', threads: 1 }));
      opening.catch(() => undefined);
      try {
        const summary = await buildIndex(opening, discovery, prices, scratch.file('parts'), false, projection, projection === null ? null : parseQualityOptions(flags), scrub);
        engine = await opening;
        await engine.writeParquet(scratch.file('out'), target.kind === 'folder');
        engine.close();
        engine = null;
        await pauseForTest('written');
        if (finalPath === null) {
          await pipeline(createReadStream(scratch.file('out')), process.stdout, { end: false });
          scratch.discard();
        } else scratch.commit('out', finalPath, flags.force === true, () => nameTakenError('--out', flags.out!, finalPath));
        reportDamage(summary);
        const where = target.kind === 'stdout' ? 'stdout' : flags.out;
        if (flags.json) {
          printJson({ records: summary.records, files: summary.files, damaged_lines: summary.damagedLines, damaged: summary.damaged, bytes: summary.bytes, out: finalPath });
        }
        writeSummary(
          `indexed ${plural(summary.records, 'record')} from ${plural(summary.files, 'file')}` +
            (summary.damagedLines > 0 ? ` (${plural(summary.damagedLines, 'damaged line')} not indexed)` : '') +
            ` into ${where}`,
        );
      } catch (error) {
        (engine ?? (await opening.catch(() => null)))?.close();
        scratch.discard();
        throw error;
      }
    });
}
