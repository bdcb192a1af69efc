/**
 * What a run says at its end, in the words an ML engineer reads: counts with their nouns, the
 * examples and tokens of each split, where the report is, and a gloss beside each drop reason.
 */
import { compareText } from '../order.js';
import { formatCount, plural } from '../format.js';
import { glossOf } from '../pipeline/drop-reasons.js';

/** One line per reason that dropped anything, the most first: `  prefix  6  an earlier agent step, …`. */
export function dropLines(dropped: Readonly<Record<string, number>>, indent = '  '): string[] {
  const rows = Object.entries(dropped)
    .filter(([, n]) => n > 0)
    .sort(([a, x], [b, y]) => y - x || compareText(a, b));
  const nameWidth = Math.max(0, ...rows.map(([reason]) => reason.length));
  const countWidth = Math.max(0, ...rows.map(([, n]) => formatCount(n).length));
  return rows.map(([reason, n]) => {
    const gloss = glossOf(reason);
    return `${indent}${reason.padEnd(nameWidth)}  ${formatCount(n).padStart(countWidth)}${gloss === '' ? '' : `  ${gloss}`}`;
  });
}

/** `dropped 10 records, each listed with its reason in FILE:` and a line per reason; `dropped nothing` else. */
export function droppedSummary(dropped: Readonly<Record<string, number>>, manifest: string): string[] {
  const total = Object.values(dropped).reduce((sum, n) => sum + n, 0);
  if (total === 0) return ['dropped nothing'];
  return [`dropped ${plural(total, 'record')}, each listed with its reason in ${manifest}:`, ...dropLines(dropped)];
}

export interface SplitFile {
  split: string;
  examples: number;
  tokens: { encoding: string; total: { total: number } };
}

/**
 * `wrote 14 examples (1,861 tokens, o200k_base) to DIR` and one line per split with its
 * examples and tokens, over every shard and --group-by dataset of the split.
 */
export function writtenSummary(files: readonly SplitFile[], splits: readonly string[], out: string): string[] {
  const bySplit = splits.map((split) => {
    const of = files.filter((f) => f.split === split);
    return { split, examples: of.reduce((n, f) => n + f.examples, 0), tokens: of.reduce((n, f) => n + f.tokens.total.total, 0), files: of.length };
  });
  const examples = bySplit.reduce((n, s) => n + s.examples, 0);
  const tokens = bySplit.reduce((n, s) => n + s.tokens, 0);
  const encoding = files[0]?.tokens.encoding;
  const lines = [`wrote ${plural(examples, 'example')} (${plural(tokens, 'token')}${encoding !== undefined ? `, ${encoding}` : ''}) to ${out}`];
  const splitWidth = Math.max(...bySplit.map((s) => s.split.length));
  const exampleWidth = Math.max(...bySplit.map((s) => formatCount(s.examples).length));
  const tokenWidth = Math.max(...bySplit.map((s) => formatCount(s.tokens).length));
  for (const s of bySplit) {
    const counts = `${formatCount(s.examples).padStart(exampleWidth)} ${(s.examples === 1 ? 'example' : 'examples').padEnd(8)}  ${formatCount(s.tokens).padStart(tokenWidth)} ${s.tokens === 1 ? 'token' : 'tokens'}`;
    lines.push(`  ${s.split.padEnd(splitWidth)}  ${s.files === 0 ? 'no file written' : counts}`);
  }
  return lines;
}
