import type { Command } from 'commander';
import { browse, DEFAULT_EXCLUDE_FILE } from '../ui/launch.js';

interface BrowseCommandOptions {
  exclude?: string;
}

export function registerBrowse(program: Command): void {
  program
    .command('browse')
    .description('Look through recorded calls in the terminal: tree, record list, chat view; mark calls to exclude.')
    .argument('[roots...]', 'Synalinks trace folders or .jsonl files (default: $SYNALINKS_HOME or ~/.synalinks)')
    .option('--exclude <file>', 'exclusion file that w writes (its call_ids start marked when it exists)', DEFAULT_EXCLUDE_FILE)
    .addHelpText(
      'after',
      `
Keys (? shows them all): j/k move, Enter/l open, h/Esc back, Tab pane, / search (regex),
n/N next/previous match, f status filter, d hide duplicates, D duplicate group,
x mark for exclusion, w write the marked call_ids, y copy call_id, s stats, q quit.

The exclusion file has one call_id per line (# comments allowed); pass it to
export, dedupe or filter with --exclude.

Examples:
  traces browse
  traces browse samples/synalinks
  traces browse ~/.synalinks --exclude curated-out.txt`,
    )
    .action(async (roots: string[], options: BrowseCommandOptions) => {
      process.exitCode = await browse(roots, { exclude: options.exclude });
    });
}
