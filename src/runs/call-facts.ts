/**
 * The part of run grouping that looks at one record alone, where records are read (this
 * thread or a worker): its usage, cost, timing and the digests that chain agent steps. Kept in
 * columns: as an object per call with its digests as hex text, a call held about 640 bytes of
 * heap (70 MB for the 110,843 calls of the 200 MB bench tree), and crossed threads as that many
 * objects to clone.
 */
import { STATUSES, type Status, type TraceRecord } from '../record.js';
import { trajectoryDigests } from '../pipeline/collapse.js';
import { sourceOf } from '../sources/registry.js';
import { Column } from '../pipeline/columns.js';
import type { PriceTable } from '../pricing/table.js';

/** The numbers kept per call, in this order; NaN when unknown. */
export const TIMESTAMP = 0;
export const DURATION = 1;
export const PROMPT = 2;
export const COMPLETION = 3;
export const TOTAL = 4;
export const REPORTED_COST = 5;
export const ESTIMATED_COST = 6;
const NUMBERS = 7;

/** `flags`: the status's index in STATUSES, plus these. */
export const PARTIAL = 4;
export const HAS_CONVERSATION = 8;

/** The calls of a share, in columns (plain typed arrays and strings: they cross threads as they are). */
export interface CallColumns {
  count: number;
  fileIndex: Int32Array;
  line: Int32Array;
  /** NUMBERS per call. */
  numbers: Float64Array;
  flags: Uint8Array;
  callIds: string[];
  /** Program and module of each call (two per call), as indexes into `names`. */
  nameIds: Int32Array;
  names: string[];
  /** Synalinks chaining: the digest of the whole conversation of an ok record (4 words), when HAS_CONVERSATION… */
  conversations: Uint32Array;
  /** …and of its input prefixes ending at an assistant turn: call i's are digests prefixStarts[i] to prefixStarts[i + 1]. */
  prefixStarts: Int32Array;
  prefixes: Uint32Array;
}

const unknown = (value: number | null | undefined): number => value ?? Number.NaN;

/**
 * Calls by index, in columns: filled record by record where a share is read (`add`, then
 * `columns` to hand it over), or share by share in file order where runs are grouped (`append`).
 */
export class CallTable {
  count = 0;
  readonly fileIndex = new Column(Int32Array);
  readonly line = new Column(Int32Array);
  readonly numbers = new Column(Float64Array, NUMBERS);
  readonly flags = new Column(Int32Array);
  readonly callIds: string[] = [];
  readonly nameIds = new Column(Int32Array, 2);
  readonly names: string[] = [];
  private readonly nameIndex = new Map<string, number>();
  readonly conversations = new Column(Uint32Array, 4);
  readonly prefixStarts = new Column(Int32Array);
  readonly prefixes = new Column(Uint32Array, 4);
  private prefixCount = 0;
  /** The columns with one row per call (the prefixes have their own count). */
  private readonly perCall = [this.fileIndex, this.line, this.numbers, this.flags, this.nameIds, this.conversations];

  private nameId(name: string): number {
    let id = this.nameIndex.get(name);
    if (id === undefined) {
      id = this.names.push(name) - 1;
      this.nameIndex.set(name, id);
    }
    return id;
  }

  /** Makes room for `more` calls. */
  private grow(more: number): number {
    const base = this.count;
    this.count += more;
    for (const column of this.perCall) column.ensure(this.count);
    this.prefixStarts.ensure(this.count + 1);
    return base;
  }

  /** The facts of one record; `prices` estimates what it does not report. */
  add(record: TraceRecord, fileIndex: number, prices: PriceTable | null): void {
    const row = this.grow(1);
    this.fileIndex.data[row] = fileIndex;
    this.line.data[row] = record.ref.line;
    const usage = record.usage;
    const cost = record.cost;
    const numbers = this.numbers.data;
    const at = row * NUMBERS;
    numbers[at + TIMESTAMP] = unknown(record.timestamp);
    numbers[at + DURATION] = unknown(record.duration);
    numbers[at + PROMPT] = unknown(usage?.prompt_tokens);
    numbers[at + COMPLETION] = unknown(usage?.completion_tokens);
    numbers[at + TOTAL] = usage === null ? Number.NaN : (usage.total_tokens ?? (usage.prompt_tokens ?? 0) + (usage.completion_tokens ?? 0));
    numbers[at + REPORTED_COST] = unknown(cost);
    numbers[at + ESTIMATED_COST] = cost === null && usage !== null && prices !== null ? unknown(prices.costOf(record).usd) : Number.NaN;
    let flags = STATUSES.indexOf(record.status) + (record.partial ? PARTIAL : 0);
    this.callIds.push(record.callId);
    this.nameIds.data[row * 2] = this.nameId(record.program);
    this.nameIds.data[row * 2 + 1] = this.nameId(record.module);
    this.prefixStarts.data[row] = this.prefixCount;
    // Records of a recorder that describes its runs belong to those; the others are chained.
    if (sourceOf(record.source)?.describesRuns !== true) {
      const digests = trajectoryDigests(record);
      if (digests !== null) {
        if (record.status === 'ok') {
          this.conversations.data.set(digests.conversation, row * 4);
          flags += HAS_CONVERSATION;
        }
        const added = digests.prefixes.length / 4;
        this.prefixes.ensure(this.prefixCount + added);
        this.prefixes.data.set(digests.prefixes, this.prefixCount * 4);
        this.prefixCount += added;
      }
    }
    this.prefixStarts.data[row + 1] = this.prefixCount;
    this.flags.data[row] = flags;
  }

  /** The calls added, as plain arrays to hand to another thread. */
  columns(): CallColumns {
    const n = this.count;
    return {
      count: n,
      fileIndex: this.fileIndex.data.slice(0, n),
      line: this.line.data.slice(0, n),
      numbers: this.numbers.data.slice(0, n * NUMBERS),
      flags: Uint8Array.from(this.flags.data.subarray(0, n)),
      callIds: this.callIds,
      nameIds: this.nameIds.data.slice(0, n * 2),
      names: this.names,
      conversations: this.conversations.data.slice(0, n * 4),
      prefixStarts: this.prefixStarts.data.slice(0, n + 1),
      prefixes: this.prefixes.data.slice(0, this.prefixCount * 4),
    };
  }

  /** A share's calls, after those appended before. */
  append(share: CallColumns): void {
    const base = this.grow(share.count);
    this.fileIndex.data.set(share.fileIndex, base);
    this.line.data.set(share.line, base);
    this.numbers.data.set(share.numbers, base * NUMBERS);
    this.flags.data.set(share.flags, base);
    for (const callId of share.callIds) this.callIds.push(callId);
    const ids = share.names.map((name) => this.nameId(name));
    for (let i = 0; i < share.count * 2; i++) this.nameIds.data[base * 2 + i] = ids[share.nameIds[i]];
    this.conversations.data.set(share.conversations, base * 4);
    const added = share.prefixes.length / 4;
    this.prefixes.ensure(this.prefixCount + added);
    this.prefixes.data.set(share.prefixes, this.prefixCount * 4);
    for (let i = 0; i <= share.count; i++) this.prefixStarts.data[base + i] = this.prefixCount + share.prefixStarts[i];
    this.prefixCount += added;
  }

  number(call: number, which: number): number | null {
    const value = this.numbers.data[call * NUMBERS + which];
    return Number.isNaN(value) ? null : value;
  }

  status(call: number): Status {
    return STATUSES[this.flags.data[call] & 3];
  }

  program(call: number): string {
    return this.names[this.nameIds.data[call * 2]];
  }

  module(call: number): string {
    return this.names[this.nameIds.data[call * 2 + 1]];
  }
}
