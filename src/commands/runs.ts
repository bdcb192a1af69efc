import { Command, Option } from 'commander';
import { loadPriceTable } from '../pricing/table.js';
import type { SourceKind } from '../record.js';
import { RUN_SORTS, type RunSort } from '../runs/sorts.js';
import type { Run } from '../runs/runs.js';
import { formatCount, formatDuration, formatTokens, formatUsd, plural } from '../format.js';
import { table } from '../stats/render.js';
import { roundUsd } from '../stats/tally.js';
import { isoTime } from '../time.js';
import { refuseNoRecords } from '../sources/no-records.js';
import { addPricesOption, addSourceOption, findTraceFiles, printJsonArray, ROOTS_DESCRIPTION } from './common.js';
import { addScrubOptions, scrubSettings, type ScrubFlags } from './scrub-option.js';
import { scrubbedCallId, scrubbedName, scrubbedPath, type ScrubSettings } from '../privacy/scrub.js';

interface RunsFlags extends ScrubFlags {
  json?: boolean;
  sort: RunSort;
  verbose?: boolean;
  source?: SourceKind;
  prices?: string;
}

function usdOrNull(value: number | null): number | null {
  return value === null ? null : roundUsd(value);
}

/**
 * A run as the report shows it: its id, program, modules, step kinds, status word and calls
 * are recorded text (an Ask test name, a klieo agent and run_id, OTLP service and span names),
 * scrubbed as export scrubs the records.
 */
export function shownRun(run: Run, scrub: ScrubSettings | null): Run {
  if (scrub === null) return run;
  const name = (text: string) => scrubbedName(text, scrub);
  return {
    ...run,
    id: scrubbedCallId(run.id, scrub),
    program: name(run.program),
    modules: [...new Set(run.modules.map(name))].sort(),
    stepKinds: run.stepKinds === null ? null : summed(Object.entries(run.stepKinds).map(([kind, n]) => [name(kind), n])),
    recorderStatus: run.recorderStatus === null ? null : name(run.recorderStatus),
    calls: run.calls.map((call) => ({ ...call, file: scrubbedPath(call.file, scrub), callId: scrubbedCallId(call.callId, scrub) })),
  };
}

/** Counts by name, those of names that scrubbed alike added up. */
function summed(counts: [string, number][]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, n] of counts) out[name] = (Object.hasOwn(out, name) ? out[name] : 0) + n;
  return out;
}

export function runJson(run: Run): Record<string, unknown> {
  return {
    id: run.id,
    source: run.source,
    program: run.program,
    modules: run.modules,
    steps: run.steps,
    step_kinds: run.stepKinds,
    status: run.status,
    recorder_status: run.recorderStatus,
    partial_steps: run.partialSteps,
    tokens: {
      prompt: run.tokens.prompt,
      completion: run.tokens.completion,
      total: run.tokens.total,
      steps_without_usage: run.tokens.stepsWithoutUsage,
    },
    cost: {
      reported_usd: usdOrNull(run.cost.reportedUsd),
      estimated_usd: usdOrNull(run.cost.estimatedUsd),
      unpriced_steps: run.cost.unpricedSteps,
      recorder_total_usd: usdOrNull(run.cost.recorderTotalUsd),
    },
    overhead: run.overhead === null ? null : { steps: run.overhead.steps, tokens: run.overhead.tokens, cost_usd: usdOrNull(run.overhead.costUsd) },
    duration_s: run.duration,
    started_at: isoTime(run.startedAt),
    finished_at: isoTime(run.finishedAt),
    calls: run.calls.map((c) => ({ file: c.file, line: c.line, call_id: c.callId })),
  };
}

/** `$0.0081 + ≈$0.0063`, `+?` when some steps are unpriced, `unknown` when none is priced. */
export function runCostCell(run: Run): string {
  const parts: string[] = [];
  if (run.cost.reportedUsd !== null) parts.push(formatUsd(run.cost.reportedUsd));
  if (run.cost.estimatedUsd !== null) parts.push(formatUsd(run.cost.estimatedUsd, true));
  if (parts.length === 0) return 'unknown';
  return parts.join(' + ') + (run.cost.unpricedSteps > 0 ? '+?' : '');
}

function tokensCell(run: Run): string {
  if (run.tokens.stepsWithoutUsage === run.steps) return 'unknown';
  return formatTokens(run.tokens.total) + (run.tokens.stepsWithoutUsage > 0 ? '+?' : '');
}

function shortId(id: string): string {
  return id.length > 36 ? `${id.slice(0, 35)}…` : id;
}

/** What the marks in the rows mean, only those some row shows: `; ≈ cost estimated …, +? …`. */
function runsLegend(runs: readonly Run[]): string {
  const marks: string[] = [];
  if (runs.some((r) => r.cost.estimatedUsd !== null)) marks.push('≈ cost estimated from the price table');
  if (runs.some((r) => runCostCell(r).endsWith('+?'))) marks.push('cost +? some steps unpriced (unknown, not $0)');
  if (runs.some((r) => tokensCell(r).endsWith('+?'))) marks.push('tokens +? some steps without recorded usage');
  return marks.length === 0 ? '' : `; ${marks.join(', ')}`;
}

export function renderRuns(runs: Run[]): string {
  const rows = runs.map((run) => [
    shortId(run.id),
    run.source,
    run.program,
    formatCount(run.steps),
    run.recorderStatus ?? run.status,
    tokensCell(run),
    runCostCell(run),
    formatDuration(run.duration),
    isoTime(run.startedAt)?.replace('.000Z', 'Z') ?? '-',
  ]);
  const partial = runs.filter((r) => r.partialSteps > 0).length;
  const lines = [table(['run', 'source', 'program', 'steps', 'status', 'tokens', 'cost', 'duration', 'started'], rows)];
  lines.push(`${plural(runs.length, 'run')}${runsLegend(runs)}`);
  if (partial > 0) lines.push(`${plural(partial, 'run')} ${partial === 1 ? 'has' : 'have'} partial steps (rebuilt from a prompt holding only the last user turn)`);
  return `${lines.join('\n')}\n`;
}

export function registerRuns(program: Command): void {
  const command = program
    .command('runs')
    .description('One line per run (an agent run or session): steps, status, tokens, cost, duration, program.')
    .argument('[roots...]', ROOTS_DESCRIPTION)
    .option('--json', 'print the runs as a JSON array')
    .addOption(new Option('--sort <key>', 'order: start time, or the largest cost, tokens or duration first').choices([...RUN_SORTS]).default('start'))
    .option('-v, --verbose', 'list the files skipped as not being traces');
  addScrubOptions(command, 'the names shown (run ids, programs, modules, file paths, call_ids)');
  addSourceOption(command);
  addPricesOption(command);
  command
    .addHelpText(
      'after',
      `
A run is one agent run or session: an Ask recording; a klieo run_id; in a
Synalinks tree, an agent trajectory (records of a program chained because each
step's input begins with the previous step's whole conversation), else one call.
Costs the recorder reported and costs estimated from the price table are shown
apart (≈ marks estimates); steps with neither are unpriced, never counted as $0.

Examples:
  traces runs samples/synalinks
  traces runs path/to/ask-recordings klieo-runs/*.json --sort cost
  traces runs ~/.synalinks --json --prices prices.json | jq '.[0]'`,
    )
    .action(async (roots: string[], flags: RunsFlags) => {
      const prices = loadPriceTable(flags.prices);
      const scrub = scrubSettings(flags);
      const discovery = await findTraceFiles(roots, { ...flags, names: scrub });
      // Loaded on use: every other command would pay for it at start-up.
      const { groupRuns, sortRuns } = await import('../runs/runs.js');
      const runs = sortRuns(await groupRuns(discovery, prices), flags.sort).map((run) => shownRun(run, scrub));
      refuseNoRecords(discovery, runs.length, null);
      if (flags.json) await printJsonArray(runs, runJson);
      else process.stdout.write(renderRuns(runs));
    });
}
