/** The human-readable `stats` report. */
import type { DamagedLine } from '../record.js';
import { versionsByRecorder, type GroupDimension, type StatsCollector } from './collect.js';
import { formatBytes, formatCount, formatDuration, formatTokens, formatUsd, plural, printable, SUMMARY_WIDTH, wrap } from '../format.js';
import type { QuantileSketch } from './quantiles.js';
import type { Tally } from './tally.js';
import { isoTime } from '../time.js';
import { compareText } from '../order.js';

/** A quantile of a sketch, marked `≈` when it comes from the histogram rather than the values. */
function quantileText(sketch: QuantileSketch, q: number): string {
  return formatDuration(sketch.quantile(q), sketch.approximate);
}

/** A table of columns, the first left-aligned; every cell printable (names come from recordings). */
export function table(headers: string[], textRows: string[][]): string {
  const rows = textRows.map((row) => row.map((cell) => printable(cell)));
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ').trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

/** Total tokens of ok records; `unknown` when none kept usage, `+?` when some did not. */
function tokensCell(t: Tally): string {
  if (t.ok > 0 && t.okWithoutUsage === t.ok) return 'unknown';
  return formatTokens(t.tokens.total) + (t.okWithoutUsage > 0 ? '+?' : '');
}

/** Reported and estimated costs apart (`$1.20 + ≈$0.30`), `+?` when some are unpriced; never $0 for unknown. */
export function costCell(t: Tally): string {
  if (t.ok === 0) return '-';
  const reported = t.ok - t.okWithoutCost;
  const parts: string[] = [];
  if (reported > 0) parts.push(formatUsd(t.costUsd));
  if (t.okWithEstimatedCost > 0) parts.push(formatUsd(t.estimatedCostUsd, true));
  if (parts.length === 0) return 'unknown';
  return parts.join(' + ') + (t.okUnpriced > 0 ? '+?' : '');
}

function costSummary(t: Tally, prices: string | null): string {
  const reported = t.ok - t.okWithoutCost;
  const parts = [reported > 0 ? `${formatUsd(t.costUsd)} reported (${plural(reported, 'record')})` : 'none reported'];
  if (t.okWithEstimatedCost > 0) parts.push(`${formatUsd(t.estimatedCostUsd, true)} estimated (${plural(t.okWithEstimatedCost, 'record')}${prices !== null ? `, ${prices}` : ''})`);
  if (t.okUnpriced > 0) parts.push(`${formatCount(t.okUnpriced)} unpriced (unknown, not $0)`);
  return parts.join(', ');
}

function groupTable(dimension: GroupDimension, groups: Map<string, Tally>): string {
  const rows = [...groups]
    .sort(([a], [b]) => compareText(a, b))
    .map(([name, t]) => [
      name,
      formatCount(t.records),
      formatCount(t.ok),
      formatCount(t.exception),
      formatCount(t.no_output),
      formatCount(t.duplicates),
      tokensCell(t),
      costCell(t),
      quantileText(t.durations, 0.5),
    ]);
  return table([dimension, 'records', 'ok', 'exception', 'no_output', 'dup', 'tokens', 'cost', 'p50'], rows);
}

/** `name (count)` for each group, the most common first (ties by name), so the main one reads first. */
function byCount(groups: Map<string, Tally>): string {
  const sorted = [...groups].sort(([a, x], [b, y]) => y.records - x.records || compareText(a, b));
  return sorted.map(([name, g]) => `${printable(name)} (${formatCount(g.records)})`).join(', ') || '-';
}

/** The version groups by their version's text, named `<recorder> <version>` when records of several recorders carry one. */
function versionGroups(groups: Map<string, Tally>): Map<string, Tally> {
  const byRecorder = versionsByRecorder(groups);
  return new Map([...byRecorder].flatMap(([recorder, versions]) => [...versions].map(([version, t]): [string, Tally] => [byRecorder.size > 1 ? `${recorder} ${version}` : version, t])));
}

function damageList(lines: readonly DamagedLine[], notListed: number): string {
  const listed = lines.map((d) => `  ${printable(d.file)}:${d.line}: ${d.reason}`);
  if (notListed > 0) listed.push(`  … and ${formatCount(notListed)} more`);
  return listed.join('\n');
}

/** The summary's lines and the damaged lines wrap at `width` (the tables are as wide as their cells). */
export function renderStats(stats: StatsCollector, by: GroupDimension[] = ['program', 'module'], width = SUMMARY_WIDTH): string {
  const t = stats.total;
  const out: string[] = [];
  const summary: [string, string][] = [
    ['files', `${formatCount(stats.files)} (${formatBytes(stats.bytes)})`],
    [
      'records',
      `${formatCount(t.records)}: ok ${formatCount(t.ok)}, exception ${formatCount(t.exception)}, no_output ${formatCount(t.no_output)}; damaged lines ${formatCount(stats.damagedCount)}`,
    ],
    ['unique ok keys', `${formatCount(stats.uniqueOkKeys)} (${plural(t.ok - stats.uniqueOkKeys, 'duplicate ok record')})`],
    [
      'tokens (ok)',
      `prompt ${formatCount(t.tokens.prompt)}, completion ${formatCount(t.tokens.completion)}, reasoning ${formatCount(t.tokens.reasoning)}, cached ${formatCount(t.tokens.cached)}` +
        (t.okWithoutUsage > 0 ? ` (${plural(t.okWithoutUsage, 'ok record')} without usage)` : '') +
        // What the calls consumed, as recorded: not the tokens of an exported example, which export counts in its text.
        ', as recorded (usage)',
    ],
    ['cost (ok)', t.ok === 0 ? '-' : costSummary(t, stats.prices?.describe() ?? null)],
    ['duration (ok)', `p50 ${quantileText(t.durations, 0.5)}, p95 ${quantileText(t.durations, 0.95)}`],
    ['period', `${isoTime(t.firstTimestamp) ?? '-'} → ${isoTime(t.lastTimestamp) ?? '-'}`],
    ['models', byCount(stats.groups.model)],
    // A line per recorder whose records carry a version (`synalinks`), none for the others.
    ...[...versionsByRecorder(stats.groups.version)].map(([recorder, versions]): [string, string] => [recorder, byCount(versions)]),
  ];
  const counts = (c: Record<string, number>) =>
    Object.entries(c)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([reason, n]) => `${reason} ${formatCount(n)}`)
      .join(', ');
  if (Object.keys(stats.notExportable).length > 0) summary.push(['not exportable', counts(stats.notExportable)]);
  if (Object.keys(stats.skippedCalls).length > 0) summary.push(['calls not kept', counts(stats.skippedCalls)]);
  const labelWidth = Math.max(...summary.map(([label]) => label.length));
  out.push(wrap(summary.map(([label, value]) => `${label.padEnd(labelWidth)}  ${value}`).join('\n'), width));
  for (const dimension of by) {
    if (dimension === 'version' && stats.groups.version.size === 0) out.push('version: no record read carries its recorder\'s version');
    else out.push(groupTable(dimension, dimension === 'version' ? versionGroups(stats.groups.version) : stats.groups[dimension]));
  }
  if (stats.damagedCount > 0) out.push(wrap(`damaged lines\n${damageList(stats.damagedListed, stats.damagedCount - stats.damagedListed.length)}`, width));
  return `${out.join('\n\n')}\n`;
}
