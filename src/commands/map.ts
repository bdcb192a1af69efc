/**
 * `traces map`: one stage of an engine's job (Spark RDD.pipe, Spark SQL TRANSFORM … USING,
 * Ray Data map_batches, Hadoop streaming). Synalinks trace lines come on standard input,
 * examples (or the kept lines) go to standard output as they are made: no file is read but
 * the keep-list and tool file, none is written. The global choice is made before, by
 * `traces keep-list` over every host's index: a record on the list is exported, on the side
 * the list settles; one not on it is left out. docs/engine.md shows both engines.
 */
import { Command, Option } from 'commander';
import { formatNamed } from './export.js';
import { UserError } from '../errors.js';
import { PER_RECORD_TARGET_NAMES, loadToolsFile, type ToolDefinition } from '../targets/index.js';
import { numberOption, writeSummary } from './common.js';
import { addExampleOptions, exampleSettings, type ExampleFlags } from './example-options.js';
import { metOnKeepList, readForcedSides, readKeepList } from '../pipeline/keep-list.js';
import { sideOf } from '../pipeline/split.js';
import { SynalinksRecord } from '../sources/synalinks-record.js';
import { lineTooLongReason, MAX_LINE_BYTES } from '../sources/lines.js';
import { formatCount, plural } from '../format.js';

interface MapFlags extends ExampleFlags {
  format: string;
  keepList?: string;
  inferredTools?: string;
  emit: 'examples' | 'kept';
  validationFraction: string;
  groupBy: 'none' | 'module';
  json?: boolean;
}

const NEWLINE = 0x0a;

/** A line of standard input without its newline; a line longer than MAX_LINE_BYTES is not held (`tooLong`, its bytes empty). */
interface StdinLine {
  bytes: Buffer;
  length: number;
  tooLong: boolean;
}

/**
 * The lines of standard input as they come (a last line without a newline included). A line
 * split over reads is gathered as a list of its parts and joined once, so a long line costs
 * its length, not its length times its reads; one longer than MAX_LINE_BYTES is measured and
 * dropped as it comes, as every command reads a file's (sources/lines.ts).
 */
async function* stdinLines(): AsyncGenerator<StdinLine> {
  let parts: Buffer[] = [];
  let pending = 0;
  for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
    let start = 0;
    for (let end = chunk.indexOf(NEWLINE, start); end !== -1; end = chunk.indexOf(NEWLINE, start)) {
      const length = pending + end - start;
      if (length > MAX_LINE_BYTES) yield { bytes: EMPTY, length, tooLong: true };
      else yield { bytes: pending === 0 ? chunk.subarray(start, end) : Buffer.concat([...parts, chunk.subarray(start, end)], length), length, tooLong: false };
      parts = [];
      pending = 0;
      start = end + 1;
    }
    pending += chunk.length - start;
    // Copied: the chunk's buffer is not ours to keep. Past the limit the bytes go, only counted.
    if (pending > MAX_LINE_BYTES) parts = [];
    else if (start < chunk.length) parts.push(Buffer.from(chunk.subarray(start)));
  }
  if (pending > 0) yield pending > MAX_LINE_BYTES ? { bytes: EMPTY, length: pending, tooLong: true } : { bytes: Buffer.concat(parts, pending), length: pending, tooLong: false };
}

const EMPTY = Buffer.alloc(0);

/** Writes to standard output, waiting when the reader is slower (an engine's pipe). */
async function write(text: string | Uint8Array): Promise<void> {
  if (!process.stdout.write(text)) await new Promise<void>((resolve) => process.stdout.once('drain', resolve));
}

export function registerMap(program: Command): void {
  const command = program
    .command('map')
    .description('One stage of an engine job: Synalinks trace lines on stdin, the examples of those on the keep-list (or the kept lines) on stdout.')
    .addOption(new Option('--format <target>', 'the trainer to write examples for (one per record: preference pairs need a whole export)').choices([...PER_RECORD_TARGET_NAMES]).argParser((value) => formatNamed(value, PER_RECORD_TARGET_NAMES)).makeOptionMandatory())
    .option('--keep-list <file>', 'the list traces keep-list wrote over every host\'s index (required): records not on it are left out')
    .option('--inferred-tools <file>', 'the tool definitions traces keep-list --tools-out wrote, so every task writes the same tools')
    .addOption(new Option('--emit <what>', 'examples: "split<TAB>dataset<TAB>example" lines; kept: the kept trace lines unchanged').choices(['examples', 'kept']).default('examples'))
    .option('--validation-fraction <f>', 'as export takes it', '0.1')
    .addOption(new Option('--group-by <what>', 'as export takes it: the dataset column names program/module').choices(['none', 'module']).default('none'))
    .option('--json', 'print a JSON summary on stderr at the end');
  addExampleOptions(command, 'the examples');
  command.addHelpText(
    'after',
    `
Each output line is one example: its split, its dataset ("" without --group-by,
else program/module) and the example's JSON line, tab-separated. Damaged input
lines and records the target refuses are counted on stderr, never on stdout.

Examples:
  cat traces/*.jsonl | traces map --format openai --keep-list keep.parquet --inferred-tools tools.json > examples.tsv
  rdd.pipe("traces map --format openai --keep-list keep.parquet --inferred-tools tools.json")`,
  );
  command.action(async (flags: MapFlags) => {
    if (flags.keepList === undefined) throw new UserError('map needs --keep-list FILE: the global choice (traces keep-list over every host\'s index) is made before the map stage');
    if (process.stdin.isTTY) throw new UserError('map reads Synalinks trace lines on standard input: pipe them in (cat trace.jsonl | traces map …)');
    const validationFraction = numberOption('--validation-fraction', flags.validationFraction, (value) => value >= 0 && value < 1, 'a number from 0 to below 1');
    let inferred: ToolDefinition[] = [];
    if (flags.inferredTools !== undefined) {
      try {
        inferred = await loadToolsFile(flags.inferredTools);
      } catch (error) {
        throw new UserError(`--inferred-tools ${(error as Error).message}`);
      }
    }
    const list = await readKeepList(flags.keepList);
    const forced = (await readForcedSides(flags.keepList)) ?? new Map();
    const { recordProjector, redactedInToolName, scrubDefinitions } = await import('../export/project-share.js');
    const settings = exampleSettings(flags.format, flags, { validationFraction, groupByModule: flags.groupBy === 'module' });
    // NeMo Customizer reads one schema per file: as export writes it, every line carries every tool (run.ts).
    const everyLineTools = settings.format === 'nemo-customizer' ? inferred.map((d) => d.function.name).filter((name) => redactedInToolName(name, settings.scrub) === null) : null;
    const project = await recordProjector({ ...settings, inferred: scrubDefinitions(inferred, settings.scrub), everyLineTools });
    const counts = { lines: 0, damaged: 0, not_in_keep_list: 0, examples: 0, kept: 0, refused: {} as Record<string, number> };
    let lineNumber = 0;
    for await (const { bytes: line, length, tooLong } of stdinLines()) {
      lineNumber++;
      if (length === 0 || (length === 1 && line[0] === 0x0d)) continue;
      counts.lines++;
      if (tooLong) {
        // Named as every command names it, on stderr: the line's bytes were never held.
        counts.damaged++;
        process.stderr.write(`traces map: <stdin>:${lineNumber}: damaged line, skipped: ${lineTooLongReason(length)}\n`);
        continue;
      }
      let record: SynalinksRecord;
      try {
        record = new SynalinksRecord(Buffer.from(line), { file: '<stdin>', line: lineNumber, offset: 0 });
      } catch {
        counts.damaged++;
        continue;
      }
      const listedAs = metOnKeepList(list, record.callId);
      if (listedAs === null) {
        counts.not_in_keep_list++;
        continue;
      }
      if (flags.emit === 'kept') {
        counts.kept++;
        await write(Buffer.concat([line, Buffer.from('\n')]));
        continue;
      }
      const { item, line: example } = project(record);
      if (item.kind === 'drop' || example === null) {
        const reason = item.kind === 'drop' ? item.reason : 'not_exportable';
        counts.refused[reason] = (counts.refused[reason] ?? 0) + 1;
        continue;
      }
      const side = forced.get(listedAs) ?? sideOf(item.fraction, validationFraction);
      counts.examples++;
      await write(Buffer.concat([Buffer.from(`${side}\t${item.folder.split('\\').join('/')}\t`), example, Buffer.from('\n')]));
    }
    if (flags.json) process.stderr.write(`${JSON.stringify(counts)}\n`);
    else {
      const refused = Object.entries(counts.refused).map(([reason, n]) => `${reason} ${formatCount(n)}`);
      writeSummary(
        `traces map: ${plural(counts.lines, 'line')}, ${flags.emit === 'kept' ? `${formatCount(counts.kept)} kept` : plural(counts.examples, 'example')}, ${formatCount(counts.not_in_keep_list)} not on the list, ${formatCount(counts.damaged)} damaged${refused.length > 0 ? `, refused: ${refused.join(', ')}` : ''}`,
      );
    }
  });
}
