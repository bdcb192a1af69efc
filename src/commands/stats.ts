import { summaryWidth } from '../format.js';
import { Command, Option } from 'commander';
import { StatsCollector, GROUP_DIMENSIONS, type GroupDimension } from '../stats/collect.js';
import { runOverFiles } from '../parallel/run-shares.js';
import { fileSizes } from '../parallel/units.js';
import { loadPriceTable } from '../pricing/table.js';
import type { SourceKind } from '../record.js';
import { renderStats } from '../stats/render.js';
import { addPricesOption, addSourceOption, findTraceFiles, printJson, ROOTS_DESCRIPTION } from './common.js';
import { JOBS } from '../parallel/jobs.js';
import { DEFAULT_KEY, KEY_KINDS, type KeyKind } from '../pipeline/keys.js';
import { KEY_HELP } from './curation-options.js';
import { refuseNoRecords } from '../sources/no-records.js';
import type { Discovery } from '../sources/discover.js';
import { addScrubOptions, scrubSettings, type ScrubFlags } from './scrub-option.js';

interface StatsOptions extends Partial<ScrubFlags> {
  json?: boolean;
  by?: GroupDimension;
  verbose?: boolean;
  source?: SourceKind;
  prices?: string;
  key?: KeyKind;
}

export async function collectStats(
  roots: string[],
  options: { verbose?: boolean; source?: SourceKind; prices?: string; key?: KeyKind } & Partial<ScrubFlags>,
): Promise<{ stats: StatsCollector; discovery: Discovery }> {
  const key = options.key ?? DEFAULT_KEY;
  // Names are shown scrubbed as export scrubs the records (default: secrets).
  const scrub = scrubSettings({ scrub: options.scrub ?? 'secrets', scrubRules: options.scrubRules });
  const prices = loadPriceTable(options.prices);
  const discovery = await findTraceFiles(roots, { ...options, names: scrub });
  // Sized for the whole tree: the shares' keys are merged into its key table.
  const stats = new StatsCollector({ prices, key, scrub, bytes: fileSizes(discovery.files).reduce((a, b) => a + b, 0) });
  stats.files = discovery.files.length;
  const shares = runOverFiles(
    JOBS.stats,
    discovery,
    (share) => ({ files: discovery.files, share, key, scrub, prices: { data: prices.data, origin: prices.origin } }),
    (share) => ({ records: share.total.records, bytes: share.bytes }),
  );
  for await (const share of shares) stats.merge(share);
  stats.finish();
  return { stats, discovery };
}

export function registerStats(program: Command): void {
  const command = program
    .command('stats')
    .description('Count records by class, duplicates, tokens, cost and durations, overall and per program and module.')
    .argument('[roots...]', ROOTS_DESCRIPTION)
    .option('--json', 'print a JSON object instead of tables')
    .addOption(new Option('--by <dimension>', 'group the table by this').choices([...GROUP_DIMENSIONS]))
    .option('-v, --verbose', 'list the files skipped as not being traces')
    .addOption(new Option('--key <kind>', `${KEY_HELP}; duplicates are counted as traces dedupe --key drops them`).choices([...KEY_KINDS]).default(DEFAULT_KEY))
    .addHelpText(
      'after',
      `
Usage and cost count ok records only: records without output carry stale values.
Costs the recorder reported and costs estimated from the price table (--prices)
are kept apart; a record with neither is unpriced: unknown, never $0.

Examples:
  traces stats
  traces stats samples/synalinks --by model
  traces stats ~/.synalinks --json | jq .unique_ok_keys
  traces stats path/to/ask-recordings --prices prices.json`,
    );
  addScrubOptions(command, 'the names shown (program, module, model, file paths)');
  addSourceOption(command);
  addPricesOption(command);
  command.action(async (roots: string[], options: StatsOptions) => {
      const { stats, discovery } = await collectStats(roots, options);
      // With no record, the JSON still says what was found (damaged lines); a table of zeros would not.
      if (options.json) printJson(stats.toJSON());
      refuseNoRecords(discovery, stats.total.records, stats.damagedCount, stats.damagedListed[0]);
      if (!options.json) process.stdout.write(renderStats(stats, options.by ? [options.by] : ['program', 'module'], summaryWidth(process.stdout)));
    });
}
