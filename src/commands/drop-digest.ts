/**
 * What a dry run says about its drops: the count per reason with the first few examples, or
 * every drop (`-v` as lines, `--json` as objects). Every drop is kept on disk, not in memory,
 * until the JSON is printed: a big tree can drop millions of records.
 */
import { once } from 'node:events';
import { closeSync, createReadStream, openSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { Drop } from '../pipeline/curate.js';
import { RunTempDir } from '../pipeline/spill.js';
import { writeAll } from '../output/write-all.js';
import { withInputsReport } from './common.js';
import { formatCount } from '../format.js';
import { compareText } from '../order.js';

/** Examples shown per reason without -v. */
export const EXAMPLES_PER_REASON = 3;

export function describeDrop(drop: Drop): string {
  const who = drop.call_id ? ` ${drop.call_id}` : '';
  const why = drop.reason + (drop.kept ? ` of ${drop.kept}` : '') + (drop.detail ? ` (${drop.detail})` : '');
  return `${drop.file}:${drop.line}${who}: ${why}`;
}

/** `print`: every drop on stdout as it comes (-v); `keep`: every drop kept for the JSON; `none`: examples only. */
export type AllDrops = 'print' | 'keep' | 'none';

export class DropDigest {
  private readonly counts = new Map<string, number>();
  private readonly firsts = new Map<string, Drop[]>();
  private spill: { dir: RunTempDir; file: string; fd: number; pending: string } | null = null;
  total = 0;

  constructor(private readonly options: { all: AllDrops }) {}

  add(drop: Drop): void {
    this.total++;
    const count = (this.counts.get(drop.reason) ?? 0) + 1;
    this.counts.set(drop.reason, count);
    if (count <= EXAMPLES_PER_REASON) {
      const firsts = this.firsts.get(drop.reason);
      if (firsts === undefined) this.firsts.set(drop.reason, [drop]);
      else firsts.push(drop);
    }
    if (this.options.all === 'print') process.stdout.write(`${describeDrop(drop)}\n`);
    else if (this.options.all === 'keep') this.keep(drop);
  }

  /** Whether the examples show every drop (then -v would add nothing). */
  get allShown(): boolean {
    return [...this.counts.values()].every((n) => n <= EXAMPLES_PER_REASON);
  }

  /** Per reason, most drops first: `filter: 400 records, e.g.` and the first few. */
  examples(): string {
    const out: string[] = [];
    for (const [reason, count] of [...this.counts].sort(([a, x], [b, y]) => y - x || compareText(a, b))) {
      const firsts = this.firsts.get(reason) ?? [];
      const noun = reason === 'damaged' ? 'line' : 'record';
      out.push(`would drop ${formatCount(count)} ${noun}${count === 1 ? '' : 's'} as ${reason}${count > firsts.length ? `, first ${firsts.length}` : ''}:`);
      for (const drop of firsts) out.push(`  ${describeDrop(drop)}`);
      if (count > firsts.length) out.push(`  … ${formatCount(count - firsts.length)} more`);
    }
    return out.length === 0 ? 'would drop nothing\n' : `${out.join('\n')}\n`;
  }

  /** `summary` as indented JSON with a last member `drops`: every drop, one object a line. */
  async printJson(summary: Record<string, unknown>): Promise<void> {
    const head = JSON.stringify(withInputsReport(summary), null, 2).replace(/\n}$/, '');
    const write = async (text: string) => {
      if (!process.stdout.write(text)) await once(process.stdout, 'drain');
    };
    if (this.spill === null) {
      await write(`${head},\n  "drops": []\n}\n`);
      return;
    }
    this.flush();
    closeSync(this.spill.fd);
    try {
      await write(`${head},\n  "drops": [`);
      let first = true;
      const lines = createInterface({ input: createReadStream(path.join(this.spill.dir.path, 'drops.jsonl')), crlfDelay: Infinity });
      let chunk = '';
      for await (const line of lines) {
        chunk += `${first ? '\n' : ',\n'}    ${line}`;
        first = false;
        if (chunk.length >= 1 << 20) {
          await write(chunk);
          chunk = '';
        }
      }
      await write(`${chunk}\n  ]\n}\n`);
    } finally {
      this.spill.dir.remove();
      this.spill = null;
    }
  }

  private keep(drop: Drop): void {
    if (this.spill === null) {
      const dir = new RunTempDir();
      const file = path.join(dir.path, 'drops.jsonl');
      this.spill = { dir, file, fd: openSync(file, 'wx'), pending: '' };
    }
    this.spill.pending += `${JSON.stringify(drop)}\n`;
    if (this.spill.pending.length >= 1 << 16) this.flush();
  }

  private flush(): void {
    if (this.spill === null || this.spill.pending === '') return;
    writeAll(this.spill.fd, this.spill.pending, this.spill.file);
    this.spill.pending = '';
  }

  /** Removes the spill file of a run that failed before printing. */
  dispose(): void {
    if (this.spill === null) return;
    closeSync(this.spill.fd);
    this.spill.dir.remove();
    this.spill = null;
  }
}
