/** The `traces` command line: one thin module per command, registered here. */
import { Command, CommanderError } from 'commander';
import { UserError } from './errors.js';
import { registerStats } from './commands/stats.js';
import { registerVerify } from './commands/verify.js';
import { registerDedupe } from './commands/dedupe.js';
import { registerFilter } from './commands/filter.js';
import { registerExport } from './commands/export.js';
import { registerValidate } from './commands/validate.js';
import { registerScan } from './commands/scan.js';
import { registerBrowse } from './commands/browse.js';
import { registerRuns } from './commands/runs.js';

const VERSION = '0.1.0';

export function buildProgram(): Command {
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

Exit codes: 0 success, 1 the run found problems (mismatches, invalid files), 2 usage or input error.`,
    );
  registerStats(program);
  registerVerify(program);
  registerDedupe(program);
  registerFilter(program);
  registerExport(program);
  registerValidate(program);
  registerScan(program);
  registerBrowse(program);
  registerRuns(program);
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
  const program = buildProgram();
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
