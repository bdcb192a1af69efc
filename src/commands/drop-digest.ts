/**
 * What a dry run says about its drops: the count per reason with the first few examples, or
 * every drop (`-v` as lines, `--json` as objects). Every drop is kept on disk, not in memory,
 * until the JSON is printed: a big tree can drop millions of records.
 */
import type { Drop } from '../pipeline/curate.js';
import { JsonLinesSpill } from '../pipeline/spill.js';
import { FirstsByKind } from '../lists.js';
import { printJsonWithList } from './common.js';
import { formatCount, plural, printable } from '../format.js';
import { compareText } from '../order.js';

/** Examples shown per reason without -v. */
export const EXAMPLES_PER_REASON = 3;

export function describeDrop(drop: Drop): string {
  const who = drop.call_id ? ` ${drop.call_id}` : '';
  const why = drop.reason + (drop.kept ? ` of ${drop.kept}` : '') + (drop.detail ? ` (${drop.detail})` : '') + (drop.flagged ? ', flagged and kept' : '');
  return printable(`${drop.file}:${drop.line}${who}: ${why}`);
}

/** `print`: every drop on stdout as it comes (-v); `keep`: every drop kept for the JSON; `none`: examples only. */
export type AllDrops = 'print' | 'keep' | 'none';

export class DropDigest {
  private readonly byReason = new FirstsByKind<Drop>(EXAMPLES_PER_REASON);
  /** Kept records a flagging quality stage found something in, by reason. */
  private readonly flagged = new FirstsByKind<Drop>(EXAMPLES_PER_REASON);
  private readonly spill = new JsonLinesSpill();
  total = 0;

  constructor(private readonly options: { all: AllDrops }) {}

  add(drop: Drop): void {
    if (drop.flagged) this.flagged.add(drop.reason, drop);
    else {
      this.total++;
      this.byReason.add(drop.reason, drop);
    }
    if (this.options.all === 'print') process.stdout.write(`${describeDrop(drop)}\n`);
    else if (this.options.all === 'keep') this.keep(drop);
  }

  /** Whether the examples show every drop (then -v would add nothing). */
  get allShown(): boolean {
    return [...this.byReason.counts.values(), ...this.flagged.counts.values()].every((n) => n <= EXAMPLES_PER_REASON);
  }

  /** Per reason, most drops first: `filter: 400 records, e.g.` and the first few. */
  examples(): string {
    const out: string[] = [];
    const list = (kinds: FirstsByKind<Drop>, verb: string) => {
      for (const [reason, count] of [...kinds.counts].sort(([a, x], [b, y]) => y - x || compareText(a, b))) {
        const firsts = kinds.firsts.get(reason) ?? [];
        const noun = reason === 'damaged' ? 'line' : 'record';
        out.push(`${verb} ${plural(count, noun)} as ${reason}${count > firsts.length ? `, first ${firsts.length}` : ''}:`);
        for (const drop of firsts) out.push(`  ${describeDrop(drop)}`);
        if (count > firsts.length) out.push(`  … ${formatCount(count - firsts.length)} more`);
      }
    };
    list(this.byReason, 'would drop');
    const dropped = out.length;
    list(this.flagged, 'would flag (and keep)');
    if (dropped === 0) out.unshift('would drop nothing');
    return `${out.join('\n')}\n`;
  }

  /** `summary` as indented JSON with a last member `drops`: every drop, one object a line. */
  async printJson(summary: Record<string, unknown>): Promise<void> {
    await printJsonWithList({ ...summary, drops: null }, 'drops', this.spill.lines(), false);
  }

  private keep(drop: Drop): void {
    this.spill.add(drop);
  }

  /** Removes the spill file of a run that failed before printing. */
  dispose(): void {
    this.spill.dispose();
  }
}
