/** The `traces` command line: one thin module per command, registered here. */
import { SOURCES } from './sources/registry.js';
import { Command, CommanderError, type Option } from 'commander';
import { describeFileSystemError, UserError } from './errors.js';
import { TRACES_VERSION } from './version.js';
import { JOBS } from './parallel/jobs.js';
import type { Job } from './parallel/job.js';
import { startWorkersEarly } from './parallel/run-shares.js';
import { printable } from './format.js';
import { refuseRepeatedOptions } from './commands/option-repeats.js';
import { noteInputOptions } from './commands/path-options.js';

type Register = (program: Command) => void;

/**
 * Commands in help order, each loaded on demand: `traces stats` need not load the browser,
 * the export targets or the privacy scanners (about a third of its start-up time).
 */
const COMMANDS: Record<string, () => Promise<Register>> = {
  stats: async () => (await import('./commands/stats.js')).registerStats,
  verify: async () => (await import('./commands/verify.js')).registerVerify,
  dedupe: async () => (await import('./commands/dedupe.js')).registerDedupe,
  filter: async () => (await import('./commands/filter.js')).registerFilter,
  export: async () => (await import('./commands/export.js')).registerExport,
  validate: async () => (await import('./commands/validate.js')).registerValidate,
  scan: async () => (await import('./commands/scan.js')).registerScan,
  browse: async () => (await import('./commands/browse.js')).registerBrowse,
  runs: async () => (await import('./commands/runs.js')).registerRuns,
  index: async () => (await import('./commands/index.js')).registerIndex,
  sql: async () => (await import('./commands/sql.js')).registerSql,
  'keep-list': async () => (await import('./commands/keep-list.js')).registerKeepList,
  map: async () => (await import('./commands/map.js')).registerMap,
};

/** The jobs each command that reads trace files runs in worker threads, in order. */
const READING_JOBS: Record<string, readonly Job[]> = {
  stats: [JOBS.stats],
  verify: [JOBS.verify],
  dedupe: [JOBS.curate, JOBS.copy],
  filter: [JOBS.curate, JOBS.copy],
  export: [JOBS.curate, JOBS.project],
  scan: [JOBS.scan],
  runs: [JOBS.runs],
  index: [JOBS.index],
};


/** The program with the command `argv` names, none for --version, or every command (for help, or an unknown name). */
export async function buildProgram(argv: readonly string[]): Promise<Command> {
  const program = new Command('traces')
    .version(TRACES_VERSION)
    .description(`Turn recorded LLM calls (Synalinks trace trees, ${SOURCES.map((source) => `${source.label}s`).join(', ')}) into clean fine-tuning datasets.`)
    .showHelpAfterError('(run with --help for usage)')
    // Commander's own errors (an unknown option, a missing value) read like traces' own: `traces: …`.
    .configureOutput({ outputError: (text, write) => write(text.replace(/^error: /, 'traces: ')) })
    .exitOverride()
    .addHelpText(
      'after',
      `
Roots default to $SYNALINKS_HOME, else ~/.synalinks. A root may be a Synalinks tree, any
folder holding files of other recorders (${SOURCES.map((source) => `${source.label}s`).join(', ')}),
or such files: the format is told from the content (--source forces it).

Examples:
  traces stats                              summarise ~/.synalinks
  traces verify samples/synalinks --json    recompute every hash
  traces export samples/synalinks --format nemo --out dataset/
  traces index ~/.synalinks --out traces.parquet   one Parquet row per record
  traces sql "SELECT model, count(*) FROM records GROUP BY 1" ~/.synalinks

Each command has its own options and examples: traces <command> --help.
Exit codes: 0 success, 1 the run found problems (mismatches, invalid files), 2 usage or input error.`,
    );
  const named = argv[2];
  const names =
    named === '--version' || named === '-V' ? [] : named !== undefined && Object.hasOwn(COMMANDS, named) ? [named] : Object.keys(COMMANDS);
  const registers = await Promise.all(names.map((name) => COMMANDS[name]!()));
  for (const register of registers) register(program);
  refuseRepeatedOptions(program);
  for (const command of program.commands) unknownOptionBeforeMissing(command);
  noteInputOptions(program);
  return program;
}

/**
 * A typo in a required option (`--fromat hf`) leaves it missing, and commander says only that
 * (it checks required options before unknown ones): the unknown option is named first, with
 * the suggestion commander makes for it (`Did you mean --format?`).
 */
function unknownOptionBeforeMissing(command: Command): void {
  // Commander's own hooks (not in its typings): its error for a missing option, and for an unknown one with the suggestion.
  const hooks = command as unknown as { missingMandatoryOptionValue(option: Option): void; unknownOption(flag: string): void };
  if (typeof hooks.missingMandatoryOptionValue !== 'function' || typeof hooks.unknownOption !== 'function') return;
  const missing = hooks.missingMandatoryOptionValue.bind(command);
  hooks.missingMandatoryOptionValue = (option) => {
    const known = new Set(command.options.flatMap((o) => [o.long, o.short]).filter((flag) => flag !== undefined));
    // Everything after `--` is an operand; a value `--x=1` is the option `--x`.
    const args = command.args.slice(0, command.args.includes('--') ? command.args.indexOf('--') : undefined);
    const unknown = args.find((arg) => arg.startsWith('-') && arg !== '-' && !known.has(arg.split('=')[0]));
    if (unknown !== undefined) hooks.unknownOption(unknown.split('=')[0]);
    missing(option);
  };
}

/**
 * `traces stats --json | head` closes the pipe early: that is the reader's choice, not an
 * error. Any other failure to write standard output (a full disk under `> file`) is named so.
 */
function exitQuietlyOnClosedPipe(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
      if (stream === process.stdout) error.path ??= 'standard output';
      throw error;
    });
  }
}

/**
 * A file-system error that escapes a command (a callback, a stream) still ends the run with
 * one line and exit 2; the exit handlers remove what the run created.
 */
function exitCleanlyOnFileSystemErrors(): void {
  const handle = (error: unknown) => {
    const line = describeFileSystemError(error);
    if (line === null) {
      process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exit(70);
    }
    failed(line, 2);
    process.exit(2);
  };
  process.on('uncaughtException', handle);
  process.on('unhandledRejection', handle);
}

/**
 * Whether this run asked for JSON (a command with --json given it) and has written nothing to
 * standard output yet: a run that fails then still prints one JSON object, so `traces stats
 * --json | jq` reads the failure instead of an empty input.
 */
let jsonFailure: { wanted: boolean; stdoutWritten: boolean } = { wanted: false, stdoutWritten: false };

function watchJsonOutput(argv: readonly string[], program: Command): void {
  const command = program.commands.find((c) => c.name() === argv[2]);
  const wanted = command !== undefined && command.options.some((o) => o.long === '--json') && argv.slice(3).includes('--json');
  jsonFailure = { wanted, stdoutWritten: false };
  if (!wanted) return;
  const write = process.stdout.write;
  process.stdout.write = function (this: typeof process.stdout, ...args: Parameters<typeof write>) {
    jsonFailure.stdoutWritten = true;
    return write.apply(this, args);
  } as typeof write;
}

/** A run ends on an error the user must act on: the line on stderr, and with --json the same as JSON on stdout unless the run already printed its own. */
function failed(message: string, exitCode: number): void {
  const line = printable(message, true);
  process.stderr.write(`traces: ${line}\n`);
  printJsonFailure(line, exitCode);
}

function printJsonFailure(line: string, exitCode: number): void {
  if (jsonFailure.wanted && !jsonFailure.stdoutWritten) process.stdout.write(`${JSON.stringify({ error: line, exit_code: exitCode }, null, 2)}\n`);
}

export async function main(argv: string[]): Promise<number> {
  exitQuietlyOnClosedPipe();
  exitCleanlyOnFileSystemErrors();
  const jobs = Object.hasOwn(READING_JOBS, argv[2] ?? '') ? READING_JOBS[argv[2]!] : undefined;
  if (jobs !== undefined && !argv.includes('--help') && !argv.includes('-h')) {
    startWorkersEarly(jobs, argv.slice(3).filter((arg) => !arg.startsWith('-')));
  }
  const program = await buildProgram(argv);
  watchJsonOutput(argv, program);
  try {
    await program.parseAsync(argv);
    const code = typeof process.exitCode === 'number' ? process.exitCode : 0;
    // Unreadable inputs count like damaged lines: the run found problems.
    const { unreadableInputs, skippedNote } = await import('./commands/common.js');
    const note = skippedNote();
    if (note !== null) process.stderr.write(`${note}\n`);
    return unreadableInputs.length > 0 && code === 0 ? 1 : code;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help asked for (--help, help <command>) and --version succeed; anything else was a usage error, already on stderr.
      if (error.exitCode === 0) return 0;
      printJsonFailure(printable(error.message.replace(/^error: /, ''), true), 2);
      return 2;
    }
    if (error instanceof UserError) {
      // Messages name files and values the user gave or recorded: never a control sequence.
      failed(error.message, error.exitCode);
      return error.exitCode;
    }
    const line = describeFileSystemError(error);
    if (line !== null) {
      failed(line, 2);
      return 2;
    }
    throw error;
  }
}
