import { closeSync, constants, existsSync, fstatSync, openSync, readSync, statSync } from 'node:fs';
import { readSmallFile } from '../small-file.js';
import path from 'node:path';
import { Command, Option } from 'commander';
import { UserError } from '../errors.js';
import { ENCODING_NAMES, fileLines, getTarget, TARGET_NAMES, validateLines, validationJson, DEFAULT_TOKEN_LIMIT, type LineTooLong, type TargetName, type ValidationReport } from '../targets/index.js';
import { addTokenizerOptions, loadCheckedMeter, parseTokenizer, type TokenizerFlags } from './tokenizer-option.js';
import type { Distribution } from '../targets/tokens.js';
import { Progress } from '../progress.js';
import { printJson, writeSummary } from './common.js';
import { formatCount, plural, printable } from '../format.js';

function distribution(d: Distribution): string {
  return d.count === 0 ? '-' : `min ${formatCount(d.min)}, median ${formatCount(d.median)}, p95 ${formatCount(d.p95)}, max ${formatCount(d.max)}`;
}

export function describeValidation(report: ValidationReport): string {
  const lines = [`${report.file}: ${plural(report.examples, 'example')}, ${report.ok ? 'valid' : `${plural(report.linesWithErrors, 'line')} with errors`} for ${report.target}`];
  for (const e of [...report.errors, ...report.warnings]) {
    const where = e.lines.length > 0 ? ` (line${e.lines.length > 1 ? 's' : ''} ${e.lines.join(', ')}${e.count > e.lines.length ? ', …' : ''})` : '';
    lines.push(`  ${e.severity} ${e.code}: ${formatCount(e.count)}${where}: ${e.message}`);
  }
  lines.push(`  without system message: ${formatCount(report.missingSystem)}, without user message: ${formatCount(report.missingUser)}`);
  lines.push(`  tokens (${report.tokens.encoding}) per example: ${distribution(report.tokens.total)}`);
  // A model folder's counts come from the rendered template, and its mask decides what is trained.
  const byModel = !(ENCODING_NAMES as readonly string[]).includes(report.tokens.encoding);
  lines.push(`  ${byModel ? 'trained' : 'assistant'} tokens per example: ${distribution(report.tokens.assistant)}`);
  if (report.overTokenLimit > 0) lines.push(`  over ${formatCount(report.tokenLimit)} tokens: ${formatCount(report.overTokenLimit)}`);
  // Messages quote the file's own text (keys, roles, names).
  return `${printable(lines.join('\n'), true)}\n`;
}

/**
 * The data files of an export folder, as its report.json lists them (`files[].file`, every split
 * and --group-by dataset), or a UserError saying what the folder lacks.
 */
function exportFolderFiles(folder: string): string[] {
  const report = path.join(folder, 'report.json');
  let listed: unknown;
  const read = readSmallFile(report, 16 << 20);
  try {
    if (!('bytes' in read)) throw new Error(read.problem);
    listed = (JSON.parse(read.bytes.toString('utf8')) as { files?: unknown }).files;
  } catch {
    throw new UserError(`${folder}: a folder with no export's report.json to list its files: name the JSONL files (traces validate ${path.join(folder, 'training.jsonl')})`);
  }
  const files = Array.isArray(listed) ? listed.map((f) => (f as { file?: unknown }).file).filter((f): f is string => typeof f === 'string') : [];
  if (files.length === 0) throw new UserError(`${report}: lists no data file (files[].file): name the JSONL files to validate`);
  return files.map((file) => {
    const at = path.join(folder, file);
    // The report is an input like any other: a listed path leaving the folder, or gone, is said.
    if (path.relative(folder, at).startsWith('..') || path.isAbsolute(path.relative(folder, at))) throw new UserError(`${report}: lists ${JSON.stringify(file)}, outside the folder: name the files to validate`);
    if (!existsSync(at)) throw new UserError(`${at}: listed in ${report} but not there: export again, or name the files to validate`);
    return at;
  });
}

/** What a file says of its format: the export's report.json, else keys only one format writes. */
function formatOf(file: string): { format: TargetName; from: string } | null {
  // A dataset folder holds its export's report.json; a file sits in it or below it.
  const folder = statSync(file).isDirectory();
  let dir = folder ? path.resolve(file) : path.dirname(path.resolve(file));
  for (let up = 0; up <= 2; up++, dir = path.dirname(dir)) {
    const report = path.join(dir, 'report.json');
    if (!existsSync(report)) continue;
    const read = readSmallFile(report, 16 << 20);
    if (!('bytes' in read)) break;
    try {
      const value = JSON.parse(read.bytes.toString('utf8')) as { command?: unknown; format?: unknown };
      if (value.command === 'export' && (TARGET_NAMES as readonly unknown[]).includes(value.format)) {
        const relative = path.relative(process.cwd(), report);
        return { format: value.format as TargetName, from: `the export's ${relative.startsWith('..') ? report : relative}` };
      }
    } catch {
      // Not an export's report: the content may still tell.
    }
    break;
  }
  if (folder) return null;
  const first = firstLine(file);
  if (first === null) return null;
  let value: unknown;
  try {
    value = JSON.parse(first);
  } catch {
    return null;
  }
  const messages = (value as { messages?: unknown }).messages;
  if (!Array.isArray(messages)) return null;
  const has = (key: string) => messages.some((m) => typeof m === 'object' && m !== null && key in m);
  const objectArguments = messages.some(
    (m) => Array.isArray(m?.tool_calls) && m.tool_calls.some((c: { function?: { arguments?: unknown } }) => typeof c?.function?.arguments === 'object' && c.function.arguments !== null),
  );
  const from = `the keys of ${path.basename(file)}'s first line`;
  if (has('weight')) return { format: 'openai', from };
  if (has('reasoning_content')) return { format: 'nemo', from };
  if (has('thinking') || (objectArguments && !has('tool_call_id'))) return { format: 'nemo-customizer', from };
  return null;
}

/** The first non-blank line of a regular file, read up to 1 MB; null when there is none. */
function firstLine(file: string): string | null {
  const fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    if (!fstatSync(fd).isFile()) return null;
    const buffer = Buffer.alloc(1 << 20);
    const n = readSync(fd, buffer, 0, buffer.length, 0);
    const line = buffer.subarray(0, n).toString('utf8').split('\n').find((l) => l.trim() !== '');
    return line ?? null;
  } finally {
    closeSync(fd);
  }
}

/** One format for every file, or a usage error that says to give --format. */
function guessFormat(files: readonly string[]): { format: TargetName; from: string } {
  const guesses = files.map((file) => ({ file, guess: formatOf(file) }));
  const unknown = guesses.find((g) => g.guess === null);
  if (unknown !== undefined) {
    throw new UserError(`${unknown.file}: validate needs --format ${TARGET_NAMES.join('|')}: no export's report.json beside it names one, and its first line fits more than one format`);
  }
  const formats = [...new Set(guesses.map((g) => g.guess!.format))];
  if (formats.length > 1) throw new UserError(`the files look like different formats (${formats.join(', ')}): validate them one format at a time, with --format`);
  return guesses[0].guess!;
}

/** The file's lines as `validateFile` reads them, advancing `progress`. */
async function* linesCounted(file: string, progress: Progress): AsyncGenerator<Buffer | LineTooLong> {
  for await (const line of fileLines(file, (bytes) => (progress.bytes += bytes))) {
    progress.records++;
    if ((progress.records & 1023) === 0) progress.tick();
    yield line;
  }
}

export function registerValidate(program: Command): void {
  const command = program
    .command('validate')
    .description("Check JSONL files against a trainer's rules, the way the trainer would reject them.")
    .argument('<files...>', 'JSONL files to check, or an export folder (its report.json lists the files; --format hf: its card, entries and every Parquet or JSONL file)')
    .addOption(new Option('--format <target>', "the trainer whose rules apply (default: the export's report.json beside the file says, else the first line's keys where only one format has them)").choices([...TARGET_NAMES]))
    .option('--json', 'print the reports as JSON');
  addTokenizerOptions(command);
  command
    .addHelpText(
      'after',
      `
Error classes follow the OpenAI cookbook (data_type, missing_messages_list,
message_missing_key, message_unrecognized_key, unrecognized_role,
missing_content, example_missing_assistant_message), extended to tool calls,
special tokens and the NeMo formats. Exit 1 when any file has an error.

Without --format, the format is the one the export that wrote the file recorded
(its report.json, beside the file or up to two folders above), else the one the
first line's keys belong to (weight: openai; reasoning_content: nemo; thinking, or
tool-call arguments as an object: nemo-customizer); a file that fits several
formats needs --format.

Examples:
  traces validate dataset/training.jsonl
  traces validate dataset/training.jsonl --format nemo
  traces validate ft/*.jsonl --format openai --json
  traces validate ds/training.jsonl --format nemo --tokenizer ./Qwen3-0.6B --max-seq-length 8192
  traces validate ft/
  traces validate hf-out/ --format hf`,
    )
    .action(async (files: string[], flags: TokenizerFlags & { format?: string; json?: boolean }) => {
      for (const file of files) if (!existsSync(file)) throw new UserError(`${file}: no such file`);
      if (flags.format === undefined) {
        const guessed = guessFormat(files);
        flags.format = guessed.format;
        writeSummary(`validate: --format ${guessed.format} (${guessed.from}; give --format to choose)`);
      }
      const target = getTarget(flags.format);
      // An export folder of a format without a folder check (`validate ft`): the data files its report.json lists.
      if (target.validateFolder === undefined) files = files.flatMap((file) => (statSync(file).isDirectory() ? exportFolderFiles(file) : [file]));
      for (const file of files) {
        if (statSync(file).isDirectory() && target.validateFolder !== undefined) continue;
        // Read as JSONL, a Parquet file would be a file of damaged lines.
        if (/\.parquet$/i.test(file)) {
          throw new UserError(`${file}: a Parquet file; validate reads JSONL files${target.validateFolder !== undefined ? `, and the dataset folder that holds this one (traces validate ${path.dirname(path.dirname(file)) || '.'} --format ${target.name}), which checks it with its card` : ''}`);
        }
        if (!statSync(file).isFile()) {
          const folders = TARGET_NAMES.filter((name) => getTarget(name).validateFolder !== undefined);
          throw new UserError(`${file}: not a file (validate reads JSONL files, e.g. DIR/training.jsonl${folders.length > 0 ? `, or a dataset folder with --format ${folders.join(' or ')}` : ''})`);
        }
      }
      const { spec, maxSeqLength } = await parseTokenizer(flags, flags.format as TargetName);
      // The file's own weights decide what an encoding counts as trained: the option would change nothing.
      if (typeof spec === 'string' && flags.trainOn === 'last') throw new UserError('--train-on last needs --tokenizer DIR here: validate counts the tokens a model folder trains on, and an encoding counts every assistant turn');
      const meter = await loadCheckedMeter(spec);
      const reports: ValidationReport[] = [];
      const folders = files.filter((file) => statSync(file).isDirectory());
      for (const folder of folders) reports.push(...(await target.validateFolder!(folder, { meter, tokenLimit: maxSeqLength ?? DEFAULT_TOKEN_LIMIT })));
      files = files.filter((file) => !folders.includes(file));
      const sizes = files.map((file) => statSync(file).size);
      const progress = new Progress(files.length, undefined, { label: 'validating', totalBytes: sizes.reduce((a, b) => a + b, 0) });
      try {
        for (const file of files) {
          reports.push(await validateLines(linesCounted(file, progress), target, { meter, tokenLimit: maxSeqLength ?? DEFAULT_TOKEN_LIMIT }, file));
          progress.advance({ files: 1 });
        }
      } finally {
        progress.done();
      }
      if (flags.json) printJson(reports.length === 1 ? validationJson(reports[0]) : reports.map(validationJson));
      else for (const report of reports) writeSummary(describeValidation(report), process.stdout);
      process.exitCode = reports.every((r) => r.ok) ? 0 : 1;
    });
}
