import path from 'node:path';
import { existsSync, statSync } from 'node:fs';
import { Command, Option } from 'commander';
import { UserError } from '../errors.js';
import { ENCODING_NAMES, fileLines, getTarget, TARGET_NAMES, validateLines, validationJson, DEFAULT_TOKEN_LIMIT, type LineTooLong, type TargetName, type ValidationReport } from '../targets/index.js';
import { addTokenizerOptions, loadCheckedMeter, parseTokenizer, type TokenizerFlags } from './tokenizer-option.js';
import type { Distribution } from '../targets/tokens.js';
import { Progress } from '../progress.js';
import { printJson } from './common.js';
import { formatCount, plural } from '../format.js';

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
  return `${lines.join('\n')}\n`;
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
    .argument('<files...>', 'JSONL files to check, or a dataset folder (--format hf: its card, entries and every Parquet or JSONL file)')
    .addOption(new Option('--format <target>', 'the trainer whose rules apply').choices([...TARGET_NAMES]).makeOptionMandatory())
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

Examples:
  traces validate dataset/training.jsonl --format nemo
  traces validate ft/*.jsonl --format openai --json
  traces validate ds/training.jsonl --format nemo --tokenizer ./Qwen3-0.6B --max-seq-length 8192
  traces validate hf-out/ --format hf`,
    )
    .action(async (files: string[], flags: TokenizerFlags & { format: string; json?: boolean }) => {
      const target = getTarget(flags.format);
      for (const file of files) {
        if (!existsSync(file)) throw new UserError(`${file}: no such file`);
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
      else for (const report of reports) process.stdout.write(describeValidation(report));
      process.exitCode = reports.every((r) => r.ok) ? 0 : 1;
    });
}
