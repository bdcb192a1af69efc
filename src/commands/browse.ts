import type { Command } from 'commander';
import type { SourceKind } from '../record.js';
import { browse, DEFAULT_EXCLUDE_FILE } from '../ui/launch.js';
import { addSourceOption, ROOTS_DESCRIPTION } from './common.js';
import { checkOutputPath, realInputs } from '../output/output-path.js';
import { defaultRoot } from '../sources/discover.js';
import { outputOption } from './path-options.js';

interface BrowseCommandOptions {
  exclude?: string;
  source?: SourceKind;
}

export function registerBrowse(program: Command): void {
  const command = program
    .command('browse')
    .description('Look through recorded calls in the terminal: tree, record list, runs, chat view; mark calls to exclude.')
    .argument('[roots...]', ROOTS_DESCRIPTION)
    .addOption(outputOption('--exclude <file>', 'exclusion file that w writes (its call_ids start marked when it exists)', DEFAULT_EXCLUDE_FILE));
  addSourceOption(command);
  command
    .addHelpText(
      'after',
      `
Keys (? shows them all): j/k move, Enter/l open, h/Esc back, Tab pane, / search (regex),
n/N next/previous match, f status filter, d hide duplicates, D duplicate group,
x mark for exclusion, w write the marked call_ids, y copy call_id, s stats,
r runs view (one row per run; Enter opens a run as one conversation), q quit.

Ask recordings and klieo RunLog/Capture files are read whole and shown with the
Synalinks records (their program and module come from the recording).

The exclusion file has one call_id per line (# comments allowed); pass it to
export, dedupe or filter with --exclude.

Examples:
  traces browse
  traces browse samples/synalinks
  traces browse ~/.synalinks --exclude curated-out.txt
  traces browse path/to/ask-recordings klieo-runs/*.json`,
    )
    .action(async (roots: string[], options: BrowseCommandOptions) => {
      // The file w writes passes the output checks before the browser starts: never an input, never through a link.
      const inputs = realInputs(roots.length > 0 ? roots : [defaultRoot()]);
      checkOutputPath({ flag: '--exclude', given: options.exclude ?? DEFAULT_EXCLUDE_FILE, kind: 'file', inputs, force: true });
      process.exitCode = await browse(roots, { exclude: options.exclude, source: options.source, inputs });
    });
}
