/**
 * Records the target refused in an earlier pass of an export (too_long, not_representable, …),
 * and the call_ids the comparing stages named as `kept`.
 *
 * Whether a target takes a record is known only once the record is written as an example,
 * after the plan: so a record that others gave way to (its duplicates, its earlier agent steps,
 * its near-duplicates) could be refused, and they would be lost with it. The target's verdict
 * belongs with the stages a record decides alone, before any comparing stage; an export that
 * finds a refused record named as `kept` plans again with every refusal learnt so far dropped
 * up front, until no refusal is named (each pass refuses at least one record more, so it ends).
 */
import type { CurationOptions, Drop } from './curate.js';
import type { TraceFile } from '../sources/discover.js';
import { addCount } from '../own.js';
import { plural } from '../format.js';

export class RefusedRecords {
  /** Per file index, per line, the drop the target gave it (as the target reported it). */
  private readonly byFile = new Map<number, Map<number, Drop>>();
  private size = 0;

  add(fileIndex: number, line: number, drop: Drop): void {
    let lines = this.byFile.get(fileIndex);
    if (lines === undefined) this.byFile.set(fileIndex, (lines = new Map()));
    if (!lines.has(line)) this.size++;
    lines.set(line, drop);
  }

  /** Refusals met again in this pass, by reason: the plan drops them, the report counts them with the target's. */
  met: Record<string, number> = {};

  /**
   * Whether the target refused an agent step whose earlier steps gave way to it (dropped as its
   * `prefix`): the next pass exports the run up to a step it takes. A refused record no earlier
   * step gave way to (tool results in a prompt, no trajectory) has no such step to fall back on.
   */
  refusedTrajectoryStep = false;

  /** A new pass: nothing met yet. */
  startPass(): void {
    this.met = {};
  }

  /** The record's earlier refusal (counted as met), or undefined. */
  meet(fileIndex: number, line: number): Drop | undefined {
    if (this.size === 0) return undefined;
    const drop = this.byFile.get(fileIndex)?.get(line);
    if (drop !== undefined) addCount(this.met, drop.reason);
    return drop;
  }

  get count(): number {
    return this.size;
  }

  /** Refusals met again in this pass: records the curation kept, which the target had refused. */
  get metCount(): number {
    return Object.values(this.met).reduce((sum, n) => sum + n, 0);
  }
}

/**
 * call_ids named as `kept`, as 32-bit fingerprints in an open-addressing table: 4 to 8 bytes an
 * id, so it follows the kept records named, not the tree. A fingerprint shared by chance only
 * makes an export plan once more than it needed to.
 */
export class NamedIds {
  private slots = new Uint32Array(1024);
  private used = 0;

  private static fingerprint(id: string): number {
    let h = 0x811c9dc5;
    for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
    h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d);
    return (h ^ (h >>> 12)) >>> 0 || 1;
  }

  add(id: string): void {
    if ((this.used + 1) * 2 > this.slots.length) this.grow();
    if (NamedIds.place(this.slots, NamedIds.fingerprint(id))) this.used++;
  }

  has(id: string): boolean {
    const f = NamedIds.fingerprint(id);
    const mask = this.slots.length - 1;
    for (let at = f & mask; this.slots[at] !== 0; at = (at + 1) & mask) if (this.slots[at] === f) return true;
    return false;
  }

  /** Puts `f` in `slots`; false when it was there already. */
  private static place(slots: Uint32Array, f: number): boolean {
    const mask = slots.length - 1;
    let at = f & mask;
    for (; slots[at] !== 0; at = (at + 1) & mask) if (slots[at] === f) return false;
    slots[at] = f;
    return true;
  }

  private grow(): void {
    const grown = new Uint32Array(this.slots.length * 2);
    for (const f of this.slots) if (f !== 0) NamedIds.place(grown, f);
    this.slots = grown;
  }
}

/** One pass of an export: what its drops name as `kept`, and whether the target refused one of those. */
export class ExportPass {
  private readonly named = new NamedIds();
  /** Named by a `prefix` drop: the later step of an agent run its earlier steps gave way to. */
  private readonly laterSteps = new NamedIds();
  private fileIndexOf: Map<string, number> | null = null;
  private namedRefused = false;

  constructor(
    readonly refused: RefusedRecords,
    private readonly files: readonly TraceFile[],
    /** A pass that only asks the target about every record the comparing stages would see: its output is never kept. */
    readonly probe = false,
  ) {
    refused.startPass();
  }

  /** Sees every drop of the plan (before it is scrubbed): the records it names. */
  noteDrop(drop: Drop): void {
    if (drop.kept !== undefined && drop.reason !== 'duplicate_example') this.named.add(drop.kept);
    if (drop.kept !== undefined && drop.reason === 'prefix') this.laterSteps.add(drop.kept);
  }

  /** The target refused this record of the plan's. */
  refuse(drop: Drop): void {
    this.fileIndexOf ??= new Map(this.files.map((file, index) => [file.display, index]));
    const fileIndex = this.fileIndexOf.get(drop.file);
    if (fileIndex !== undefined) this.refused.add(fileIndex, drop.line, { ...drop });
    if (drop.call_id !== undefined && this.named.has(drop.call_id)) this.namedRefused = true;
    if (drop.call_id !== undefined && this.laterSteps.has(drop.call_id)) this.refused.refusedTrajectoryStep = true;
  }

  /** Whether this pass's output must not be kept: a probe, or a record that others gave way to was refused. */
  get mustPlanAgain(): boolean {
    return this.probe || this.namedRefused;
  }
}

/**
 * Runs export passes until one refuses no record a drop names: `pass` returns null when its
 * `ExportPass` says it must plan again (having written nothing). Peeling one refused step a
 * pass would take a pass per step of the longest agent run, so a pass that fails is followed
 * by a probe: the plan without its comparing stages (every record they would see is kept),
 * whose examples are made only to learn the target's verdict on each. The pass after it
 * drops every refusal before the comparing stages, and so keeps only records the target
 * takes: three passes where one is not enough, unless a verdict depends on the rest (a tool
 * definition inferred from fewer calls, near --max-example-tokens), when the same goes on.
 */
export async function exportUntilAgreed<T>(
  targetName: string,
  files: readonly TraceFile[],
  curationOptions: CurationOptions,
  pass: (options: CurationOptions, tracker: ExportPass) => Promise<T | null>,
): Promise<T> {
  const refused = new RefusedRecords();
  let probe = false;
  for (let count = 1; ; count++) {
    const before = refused.count;
    const options: CurationOptions = probe
      ? { ...curationOptions, refused, dedupe: false, trajectories: 'all', nearDuplicates: null }
      : { ...curationOptions, refused };
    const result = await pass(options, new ExportPass(refused, files, probe));
    if (result !== null) return result;
    // A pass asks for another only when it refused a named record, which it added.
    if (!probe && refused.count === before) throw new Error('an export pass asked for another without refusing a record more');
    process.stderr.write(
      probe
        ? `planning again without the ${plural(refused.count, 'record')} ${targetName} refused (pass ${count + 1})\n`
        : `${targetName} refused a record that other records gave way to; asking it about every record first (pass ${count + 1})\n`,
    );
    probe = !probe;
  }
}
