/**
 * What a run says at its end, in the words an ML engineer reads: counts with their nouns, the
 * examples and tokens of each split, where the report is, and a gloss beside each drop reason.
 */
import path from 'node:path';
import { compareText } from '../order.js';
import type { Target } from '../targets/target.js';
import { formatCount, plural, printable } from '../format.js';
import { glossOf } from '../pipeline/drop-reasons.js';

/**
 * One line per reason that dropped anything, the most first: `  prefix  6  an earlier agent step, …`,
 * and below a reason the user can fix, the fix (`fixes`, report.json's `drop_fixes`).
 */
export function dropLines(dropped: Readonly<Record<string, number>>, indent = '  ', fixes: Readonly<Record<string, string>> = {}): string[] {
  const rows = Object.entries(dropped)
    .filter(([, n]) => n > 0)
    .sort(([a, x], [b, y]) => y - x || compareText(a, b));
  const nameWidth = Math.max(0, ...rows.map(([reason]) => reason.length));
  const countWidth = Math.max(0, ...rows.map(([, n]) => formatCount(n).length));
  return rows.flatMap(([reason, n]) => {
    const gloss = glossOf(reason);
    const line = `${indent}${reason.padEnd(nameWidth)}  ${formatCount(n).padStart(countWidth)}${gloss === '' ? '' : `  ${gloss}`}`;
    return fixes[reason] === undefined ? [line] : [line, `${indent}${' '.repeat(nameWidth + 2)}fix: ${fixes[reason]}`];
  });
}

/** `dropped 10 records, each listed with its reason in FILE:` and a line per reason; `dropped nothing` else. */
export function droppedSummary(dropped: Readonly<Record<string, number>>, manifest: string, fixes: Readonly<Record<string, string>> = {}): string[] {
  const total = Object.values(dropped).reduce((sum, n) => sum + n, 0);
  if (total === 0) return ['dropped nothing'];
  return [`dropped ${plural(total, 'record')}, each listed with its reason in ${manifest}:`, ...dropLines(dropped, '  ', fixes)];
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
  // The written text's tokens by an encoding or model: not the usage `stats` reports, which the calls consumed.
  const lines = [`wrote ${plural(examples, 'example')} (${plural(tokens, 'token')} of written text${encoding !== undefined ? ` by ${encoding}` : ''}) to ${out}`];
  const splitWidth = Math.max(...bySplit.map((s) => s.split.length));
  const exampleWidth = Math.max(...bySplit.map((s) => formatCount(s.examples).length));
  const tokenWidth = Math.max(...bySplit.map((s) => formatCount(s.tokens).length));
  for (const s of bySplit) {
    const counts = `${formatCount(s.examples).padStart(exampleWidth)} ${(s.examples === 1 ? 'example' : 'examples').padEnd(8)}  ${formatCount(s.tokens).padStart(tokenWidth)} ${s.tokens === 1 ? 'token' : 'tokens'}`;
    lines.push(`  ${s.split.padEnd(splitWidth)}  ${s.files === 0 ? 'no file written' : counts}`);
  }
  return lines;
}

/** What report.json says of the tools, reasoning and trainer's verdict, as `exportLines` reads it. */
export interface ExportStory {
  format: string;
  reasoning: string;
  reasoning_recorded: { examples: number; turns: number } | null;
  tools: { supplied: string[]; recorded?: string[]; recorded_examples?: number; inferred: string[]; inferred_calls: Record<string, number>; every_line: boolean };
  files: { file: string; split: string; dataset: string | null }[];
  refused_by_trainer: { dataset: string | null; files: string[]; reason: string }[];
  /** With a model folder: the --chat-template FILE that replaced the folder's, or null. */
  chat_template?: string | null;
  /** The encoding or model folder that counted the tokens. */
  tokenizer?: string;
  /** Said where it changes the counts (a model folder, or last). */
  train_on?: string;
}

/** What each reasoning mode did to the recorded reasoning, in a user's words. */
const REASONING_DONE: Readonly<Record<string, string>> = {
  drop: 'left out',
  keep: 'kept in its own field (reasoning_content), apart from the answer',
  inline: 'inlined as <think>…</think> before the answer',
};

/**
 * What the file holds that the records did not, and where it goes: inferred tool definitions
 * (which, from how many calls, and how to give the real ones), what became of recorded
 * reasoning, the target's next steps (`next: …`), and last of all a training file the trainer
 * refuses as it is.
 */
export function exportLines(report: ExportStory, target: Target, out: string): string[] {
  const lines: string[] = [];
  const { inferred, inferred_calls: calls } = report.tools;
  const recorded = report.tools.recorded ?? [];
  if (recorded.length > 0) {
    lines.push(`tools: ${plural(report.tools.recorded_examples ?? 0, 'example')} ${report.tools.recorded_examples === 1 ? 'carries' : 'carry'} the tool definitions recorded with their call (${recorded.map((name) => printable(name)).join(', ')}), not inferred ones`);
  }
  if (inferred.length > 0) {
    // Recorded names (scrubbed as the definitions are), shown without control characters.
    const each = inferred.map((name) => `${printable(name)} from ${plural(calls[name] ?? 0, 'call')}`).join(', ');
    lines.push(
      `tools: ${plural(inferred.length, 'definition')} inferred from the recorded calls (${each}), written into the training text with the description "Inferred by traces from N recorded calls."; give the real ones with --tools FILE`,
    );
  }
  if (report.tools.every_line) {
    lines.push(`tools: every line carries the whole tool list, plain answers too: ${target.name} reads one schema per file, set by its first line`);
  }
  const { examples, turns } = report.reasoning_recorded ?? { examples: 0, turns: 0 };
  if (examples > 0) {
    const alternatives = target.reasoningModes.filter((m) => m !== report.reasoning).map((m) => `--reasoning ${m}`);
    lines.push(
      `reasoning: recorded in ${plural(examples, 'example')} (${plural(turns, 'assistant turn')}); ${target.name}: ${REASONING_DONE[report.reasoning] ?? report.reasoning}${alternatives.length > 0 ? ` (other choices: ${alternatives.join(', ')})` : ''}`,
    );
  }
  if (target.nextSteps !== undefined) {
    const datasets = [...new Set(report.files.map((f) => f.dataset))];
    const of = (split: string) => report.files.filter((f) => f.dataset === datasets[0] && f.split === split).map((f) => path.join(out, f.file));
    const modelFolder = report.chat_template !== undefined ? (report.tokenizer ?? null) : null;
    lines.push(...target.nextSteps({ training: of('training'), validation: of('validation'), chatTemplate: report.chat_template, modelFolder, trainOn: report.train_on ?? 'all' }));
    if (datasets.length > 1) lines.push(`next: the same for each of the ${formatCount(datasets.length)} datasets in ${out} (one folder each)`);
  }
  // Last: the file is written, but the trainer's upload would fail (said once for many --group-by datasets).
  const refused = report.refused_by_trainer;
  if (refused.length > 0 && refused.length <= 3) {
    for (const r of refused) lines.push(`${target.name} will refuse ${r.files.map((f) => path.join(out, f)).join(', ')} as it is: ${r.reason}`);
  } else if (refused.length > 3) {
    const named = refused.slice(0, 3).map((r) => path.join(out, r.files[0] ?? ''));
    lines.push(`${target.name} will refuse ${formatCount(refused.length)} training files as they are (${named.join(', ')}, … ${formatCount(refused.length - 3)} more; report.json lists each), the first: ${refused[0].reason}`);
  }
  return lines.map((line) => printable(line));
}
