/** The `traces` command line: one thin module per command, registered here. */
import { Command, CommanderError } from 'commander';
import { UserError } from './errors.js';

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
};

const VERSION = '0.1.0';

/** The program with the command `argv` names, none for --version, or every command (for help, or an unknown name). */
export async function buildProgram(argv: readonly string[]): Promise<Command> {
  const program = new Command('traces')
    .version(VERSION)
    .description('Turn recorded LLM calls (Synalinks trace trees, Ask recordings, klieo runs) into clean fine-tuning datasets.')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .addHelpText(
      'after',
      `
Roots default to $SYNALINKS_HOME, else ~/.synalinks. A root may be a Synalinks tree, a
folder of Ask recordings (<test>/recording.yml) or klieo RunLog/Capture JSON files, or
such files: the format is told from the content (--source forces it).

Examples:
  traces stats                              summarise ~/.synalinks
  traces verify samples/synalinks --json    recompute every hash
  traces export samples/synalinks --format nemo --out dataset/

Each command has its own options and examples: traces <command> --help.
Exit codes: 0 success, 1 the run found problems (mismatches, invalid files), 2 usage or input error.`,
    );
  const named = argv[2];
  const names =
    named === '--version' || named === '-V' ? [] : named !== undefined && Object.hasOwn(COMMANDS, named) ? [named] : Object.keys(COMMANDS);
  const registers = await Promise.all(names.map((name) => COMMANDS[name]!()));
  for (const register of registers) register(program);
  return program;
}

/** `traces stats --json | head` closes the pipe early: that is the reader's choice, not an error. */
function exitQuietlyOnClosedPipe(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
      throw error;
    });
  }
}

export async function main(argv: string[]): Promise<number> {
  exitQuietlyOnClosedPipe();
  const program = await buildProgram(argv);
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return 0;
      return 2;
    }
    if (error instanceof UserError) {
      process.stderr.write(`traces: ${error.message}\n`);
      return error.exitCode;
    }
    throw error;
  }
}
