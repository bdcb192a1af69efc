import { Command, Option } from 'commander';
import { StatsCollector, GROUP_DIMENSIONS, type GroupDimension, type StatsSnapshot } from '../stats/collect.js';
import { defaultWorkerCount, WorkerPool } from '../parallel/pool.js';
import { fileSizes, planShares } from '../parallel/units.js';
import { Progress } from '../progress.js';
import { renderStats } from '../stats/render.js';
import { findTraceFiles, printJson, withProgress } from './common.js';

interface StatsOptions {
  json?: boolean;
  by?: GroupDimension;
  verbose?: boolean;
}

/** Below this, starting worker threads costs more than it saves. */
const PARALLEL_MIN_BYTES = 32 << 20;

export async function collectStats(roots: string[], options: { verbose?: boolean }): Promise<StatsCollector> {
  const discovery = await findTraceFiles(roots, options);
  const stats = new StatsCollector();
  stats.files = discovery.files.length;
  const sizes = fileSizes(discovery.files);
  const workers = defaultWorkerCount();
  if (workers > 1 && sizes.reduce((a, b) => a + b, 0) >= PARALLEL_MIN_BYTES) {
    const shares = planShares(sizes, workers);
    const pool = new WorkerPool(workers);
    const progress = new Progress(discovery.files.length);
    try {
      for await (const share of pool.map<StatsSnapshot>('stats', shares.map((share) => ({ files: discovery.files, share })))) {
        stats.merge(share);
        progress.files = new Set(share.groupSets).size;
        progress.records = stats.total.records;
        progress.bytes = stats.bytes;
        progress.tick();
      }
    } finally {
      progress.done();
      await pool.close();
    }
    return stats;
  }
  for await (const batch of withProgress(discovery)) {
    stats.bytes += batch.bytes;
    for (const record of batch.records) stats.addRecord(record);
    for (const damaged of batch.damaged) stats.addDamaged(damaged);
  }
  return stats;
}

export function registerStats(program: Command): void {
  program
    .command('stats')
    .description('Count records by class, duplicates, tokens, cost and durations, overall and per program and module.')
    .argument('[roots...]', 'Synalinks trace folders or .jsonl files (default: $SYNALINKS_HOME or ~/.synalinks)')
    .option('--json', 'print a JSON object instead of tables')
    .addOption(new Option('--by <dimension>', 'group the table by this').choices([...GROUP_DIMENSIONS]))
    .option('-v, --verbose', 'list the files skipped as not being traces')
    .addHelpText(
      'after',
      `
Usage and cost count ok records only: records without output carry stale values.

Examples:
  traces stats
  traces stats samples/synalinks --by model
  traces stats ~/.synalinks --json | jq .unique_ok_keys`,
    )
    .action(async (roots: string[], options: StatsOptions) => {
      const stats = await collectStats(roots, options);
      if (options.json) printJson(stats.toJSON());
      else process.stdout.write(renderStats(stats, options.by ? [options.by] : ['program', 'module']));
    });
}
