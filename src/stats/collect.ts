/** The `stats` sink: folds records into totals overall and per program, module, model and version. */
import type { DamagedLine, TraceRecord } from '../record.js';
import { Column } from '../pipeline/columns.js';
import { KeyIndex, slotsForTree } from '../pipeline/key-index.js';
import { partitionOf, planPartitions, rowFloat, setRowFloat } from '../pipeline/dedupe.js';
import { PartitionedSpill, RunTempDir } from '../pipeline/spill.js';
import { DEFAULT_KEY, keyOf, type KeyKind } from '../pipeline/keys.js';
import type { PriceTable } from '../pricing/table.js';
import { factsOf, Tally, type TallySnapshot } from './tally.js';
import { compareText } from '../order.js';
import { scrubbedDamage, scrubbedName, type ScrubSettings } from '../privacy/scrub.js';
import { versionNameOf } from '../sources/registry.js';

export const GROUP_DIMENSIONS = ['program', 'module', 'model', 'version'] as const;
export type GroupDimension = (typeof GROUP_DIMENSIONS)[number];

const MAX_LISTED_DAMAGE = 20;

/**
 * The groups one record counts in: its program, module, model and version; the version is
 * named `<recorder>\0<version>` (`versionNameOf`), null for a record of a source whose records
 * carry none, which then counts in no version group.
 */
type GroupNames = [string, string, string, string | null];

/** The version groups by the recorder they are versions of (`synalinks`), each version's tally by its text. */
export function versionsByRecorder(groups: ReadonlyMap<string, Tally>): Map<string, Map<string, Tally>> {
  const byRecorder = new Map<string, Map<string, Tally>>();
  for (const [name, tally] of groups) {
    const cut = name.indexOf('\0');
    const recorder = name.slice(0, cut);
    let versions = byRecorder.get(recorder);
    if (versions === undefined) byRecorder.set(recorder, (versions = new Map()));
    versions.set(name.slice(cut + 1), tally);
  }
  return new Map([...byRecorder].sort(([a], [b]) => compareText(a, b)));
}

/**
 * Trees from this size count their distinct ok keys a partition at a time, from rows set aside
 * on disk: one table of every key grew with the keys (300 MB peak on a 4 GB tree of 1.9M
 * distinct keys), where a partition's table holds about 64 MB of records' keys.
 */
const PARTITION_KEYS_FROM_BYTES = 256 << 20;

/** An ok record's key offered to the tree-wide count, as set aside: key, timestamp (float64), group set. */
const OfferRow = { key: 0, timestamp: 4, set: 6, words: 7 } as const;

/**
 * Per distinct ok key, the record dedupe keeps so far (the first by timestamp, ties to the one
 * offered first) and its group set: a duplicate is booked under the groups of the record dedupe
 * drops, not of the one read second. Typed columns, not arrays of numbers: half of all key
 * words would be heap numbers, and their survival made the young generation grow (about 25 MB
 * more on 1 GB).
 */
class KeyWinners {
  readonly keys: KeyIndex;
  readonly timestamps = new Column(Float64Array);
  readonly sets = new Column(Int32Array);

  constructor(slots: number) {
    this.keys = new KeyIndex(slots);
  }

  get size(): number {
    return this.keys.size;
  }

  /** Offers a key; returns the group set of the record that is now a duplicate, or -1 when the key is new. */
  offer(key: Uint32Array, timestamp: number, set: number): number {
    const row = this.keys.size;
    const existing = this.keys.addIfAbsent(key, row);
    const timestamps = this.timestamps;
    const sets = this.sets;
    if (existing === -1) {
      timestamps.ensure(row + 1);
      sets.ensure(row + 1);
      timestamps.data[row] = timestamp;
      sets.data[row] = set;
      return -1;
    }
    // As dedupe's `--keep first`: an older record wins; on a tie the one offered first stays.
    if (!(timestamp < timestamps.data[existing])) return set;
    const dropped = sets.data[existing];
    timestamps.data[existing] = timestamp;
    sets.data[existing] = set;
    return dropped;
  }
}

/** Offers set aside by a partition of their key, resolved a partition at a time once all have come. */
class PartitionedOffers {
  private readonly dir = new RunTempDir();
  private readonly rows: PartitionedSpill;
  private readonly row = new Uint32Array(OfferRow.words);

  constructor(readonly partitions: number) {
    this.rows = new PartitionedSpill(this.dir, 'ok-keys', OfferRow.words, partitions);
  }

  offer(key: Uint32Array, timestamp: number, set: number): void {
    this.row.set(key, OfferRow.key);
    setRowFloat(this.row, OfferRow.timestamp, timestamp);
    this.row[OfferRow.set] = set;
    this.rows.append(partitionOf(key, 0, this.partitions), this.row);
  }

  /** Resolves every partition, in the order offered within each; returns how many distinct keys there were. */
  resolve(onDuplicate: (droppedSet: number) => void): number {
    let distinct = 0;
    const key = new Uint32Array(4);
    try {
      for (let p = 0; p < this.partitions; p++) {
        const winners = new KeyWinners(Math.ceil(this.rows.rows(p) * 1.5));
        for (const row of this.rows.read(p)) {
          key.set(row.subarray(OfferRow.key, OfferRow.key + 4));
          const dropped = winners.offer(key, rowFloat(row, OfferRow.timestamp), row[OfferRow.set]);
          if (dropped !== -1) onDuplicate(dropped);
        }
        distinct += winners.size;
        this.rows.close(p);
      }
    } finally {
      this.rows.dispose();
      this.dir.remove();
    }
    return distinct;
  }
}


/** What a worker hands back for its share of the files. */
export interface StatsSnapshot {
  total: TallySnapshot;
  groups: Record<GroupDimension, [string, TallySnapshot][]>;
  damagedCount: number;
  damagedListed: DamagedLine[];
  /** Records that can never be exported, by reason (`notExportableReason`). */
  notExportable: Record<string, number>;
  /** Calls a source read but made no record of (e.g. the second span of a call instrumented twice), by reason. */
  skippedCalls: Record<string, number>;
  bytes: number;
  /** Distinct ok keys of the share in first-seen order (4 words each)… */
  keys: Uint32Array;
  /** …the groups of the record dedupe would keep of each (index into `groupSets`)… */
  keyGroups: Int32Array;
  /** …and that record's timestamp (0 when unknown). */
  keyTimestamps: Float64Array;
  groupSets: GroupNames[];
}

export class StatsCollector {
  readonly total = new Tally();
  readonly groups: Record<GroupDimension, Map<string, Tally>> = {
    program: new Map(),
    module: new Map(),
    model: new Map(),
    version: new Map(),
  };
  /** Each distinct ok key and the record dedupe keeps of it, held in memory (a small tree, a worker's share)… */
  private readonly winners: KeyWinners | null;
  /** …or set aside by partition for a big tree, counted by `finish`. */
  private readonly offers: PartitionedOffers | null;
  private partitionedUniqueKeys: number | null = null;
  damagedCount = 0;
  readonly damagedListed: DamagedLine[] = [];
  readonly notExportable: Record<string, number> = {};
  readonly skippedCalls: Record<string, number> = {};
  files = 0;
  bytes = 0;
  readonly keyKind: KeyKind;
  private readonly key = new Uint32Array(4);
  /**
   * Consecutive records nearly always share their groups: the last set is reused, found by
   * the record's own names (the same strings from one record to the next, so `===` is cheap).
   */
  private lastNames: GroupNames | null = null;
  private lastRecordNames: [program: string, module: string, model: string | null, version: string | null, source: string] | null = null;
  private lastTallies: Tally[] = [];
  /** The distinct group sets winners point at, and their index by joined names. */
  private readonly groupSets: GroupNames[] = [];
  private readonly setIndex = new Map<string, number>();
  private lastSetNames: GroupNames | null = null;
  private lastSetIndex = -1;
  /** Set when this collector is a worker's share: the keys in row order, handed to the main thread. */
  private readonly keyLog: Column<Uint32Array> | null;

  /** Estimates the cost of records that report none (null: no estimates). */
  readonly prices: PriceTable | null;
  /** How the names and file paths the report shows are scrubbed (recorded text, as export scrubs it); null: as recorded. */
  private readonly scrub: ScrubSettings | null;

  constructor(options: { logKeys?: boolean; prices?: PriceTable | null; bytes?: number; key?: KeyKind; scrub?: ScrubSettings | null } = {}) {
    const bytes = options.bytes ?? 0;
    // A share's keys go to the main thread whole: only the tree-wide count is partitioned.
    const partitioned = !options.logKeys && bytes >= PARTITION_KEYS_FROM_BYTES;
    this.offers = partitioned ? new PartitionedOffers(planPartitions(bytes)) : null;
    this.winners = partitioned ? null : new KeyWinners(slotsForTree(bytes));
    this.keyLog = options.logKeys ? new Column(Uint32Array, 4) : null;
    this.prices = options.prices ?? null;
    this.keyKind = options.key ?? DEFAULT_KEY;
    this.scrub = options.scrub ?? null;
  }

  /** The groups of a record, and their tallies in `lastTallies`. */
  private namesOf(record: TraceRecord): GroupNames {
    const program = record.program;
    const module = record.module;
    const model = record.model;
    const version = record.version;
    const source = record.source;
    const last = this.lastRecordNames;
    if (last !== null && last[0] === program && last[1] === module && last[2] === model && last[3] === version && last[4] === source) return this.lastNames!;
    // Groups are named scrubbed: names that scrub alike (differing by a key) are one group, as they are one export folder.
    const scrub = this.scrub;
    const shownProgram = scrubbedName(program, scrub);
    const recorder = versionNameOf(source);
    const names: GroupNames = [
      shownProgram,
      `${shownProgram}/${scrubbedName(module, scrub)}`,
      model === null ? '(unknown)' : scrubbedName(model, scrub),
      recorder === null ? null : `${recorder}\0${version === null ? '(unknown)' : scrubbedName(version, scrub)}`,
    ];
    this.talliesFor(names);
    this.lastRecordNames = [program, module, model, version, source];
    return names;
  }

  private talliesFor(names: GroupNames): Tally[] {
    const last = this.lastNames;
    if (last !== null && last[0] === names[0] && last[1] === names[1] && last[2] === names[2] && last[3] === names[3]) {
      return this.lastTallies;
    }
    this.lastRecordNames = null;
    this.lastNames = names;
    this.lastTallies = GROUP_DIMENSIONS.flatMap((dimension, i) => {
      const name = names[i];
      if (name === null) return [];
      let tally = this.groups[dimension].get(name);
      if (tally === undefined) this.groups[dimension].set(name, (tally = new Tally()));
      return [tally];
    });
    return this.lastTallies;
  }

  private setOf(names: GroupNames): number {
    if (names === this.lastSetNames) return this.lastSetIndex;
    // Recorded names may hold any character: JSON text tells every set apart.
    const joined = JSON.stringify(names);
    let index = this.setIndex.get(joined);
    if (index === undefined) {
      this.setIndex.set(joined, (index = this.groupSets.length));
      this.groupSets.push(names);
    }
    this.lastSetNames = names;
    this.lastSetIndex = index;
    return index;
  }

  /**
   * Offers an ok record's key (in `this.key`) with its timestamp and groups, booking the
   * duplicate it makes (at once in memory; when partitions are resolved by `finish` otherwise).
   */
  private offerKey(timestamp: number, set: number): void {
    if (this.offers !== null) {
      this.offers.offer(this.key, timestamp, set);
      return;
    }
    const winners = this.winners!;
    const row = winners.size;
    const dropped = winners.offer(this.key, timestamp, set);
    if (dropped !== -1) this.bookDuplicate(dropped);
    else if (this.keyLog !== null) {
      this.keyLog.ensure(row + 1);
      this.keyLog.data.set(this.key, row * 4);
    }
  }

  /** Counts the keys set aside by partition (once every record and share is in); nothing to do in memory. */
  finish(): void {
    if (this.offers === null || this.partitionedUniqueKeys !== null) return;
    this.partitionedUniqueKeys = this.offers.resolve((set) => this.bookDuplicate(set));
  }

  /** Distinct ok keys: duplicates are the other ok records. */
  get uniqueOkKeys(): number {
    if (this.winners !== null) return this.winners.size;
    if (this.partitionedUniqueKeys === null) throw new Error('StatsCollector.finish() must run before the key counts are read');
    return this.partitionedUniqueKeys;
  }

  private bookDuplicate(set: number): void {
    this.total.duplicates++;
    for (const tally of this.talliesFor(this.groupSets[set])) tally.duplicates++;
  }

  addRecord(record: TraceRecord): void {
    if (record.notExportable) addTo(this.notExportable, notExportableReason(record.notExportable), 1);
    const facts = factsOf(record, this.prices);
    const names = this.namesOf(record);
    const tallies = this.lastTallies;
    this.total.add(facts);
    for (const tally of tallies) tally.add(facts);
    if (facts.status !== 'ok') return;
    keyOf(record, this.keyKind, this.key);
    this.offerKey(record.timestamp ?? 0, this.setOf(names));
  }

  addSkipped(counts: Readonly<Record<string, number>> | undefined): void {
    for (const [reason, n] of Object.entries(counts ?? {})) addTo(this.skippedCalls, reason, n);
  }

  addDamaged(line: DamagedLine): void {
    this.damagedCount++;
    if (this.damagedListed.length < MAX_LISTED_DAMAGE) this.damagedListed.push(scrubbedDamage(line, this.scrub));
  }

  /** A share's counts for the main thread (a share's keys are always held in memory). */
  snapshot(): StatsSnapshot {
    const winners = this.winners!;
    const rows = winners.size;
    return {
      total: this.total.snapshot(),
      groups: Object.fromEntries(GROUP_DIMENSIONS.map((d) => [d, [...this.groups[d]].map(([name, t]) => [name, t.snapshot()])])) as StatsSnapshot['groups'],
      damagedCount: this.damagedCount,
      damagedListed: this.damagedListed,
      notExportable: this.notExportable,
      skippedCalls: this.skippedCalls,
      bytes: this.bytes,
      keys: this.keyLog === null ? new Uint32Array(0) : this.keyLog.data.slice(0, rows * 4),
      keyGroups: winners.sets.data.slice(0, rows),
      keyTimestamps: winners.timestamps.data.slice(0, rows),
      groupSets: this.groupSets,
    };
  }

  /**
   * Folds in a share of the files read elsewhere. Shares must come in file order: on a tie of
   * timestamps, the record of an earlier share is the one dedupe keeps.
   */
  merge(share: StatsSnapshot): void {
    this.total.merge(Tally.fromSnapshot(share.total));
    for (const dimension of GROUP_DIMENSIONS) {
      for (const [name, snapshot] of share.groups[dimension]) {
        const tally = this.groups[dimension].get(name);
        if (tally === undefined) this.groups[dimension].set(name, Tally.fromSnapshot(snapshot));
        else tally.merge(Tally.fromSnapshot(snapshot));
      }
    }
    this.lastNames = null;
    this.lastRecordNames = null;
    const shareSets = share.groupSets.map((names) => this.setOf(names));
    for (let i = 0; i < share.keyGroups.length; i++) {
      this.key.set(share.keys.subarray(i * 4, i * 4 + 4));
      this.offerKey(share.keyTimestamps[i], shareSets[share.keyGroups[i]]);
    }
    for (const line of share.damagedListed) if (this.damagedListed.length < MAX_LISTED_DAMAGE) this.damagedListed.push(line);
    this.damagedCount += share.damagedCount;
    for (const [reason, n] of Object.entries(share.notExportable)) addTo(this.notExportable, reason, n);
    this.addSkipped(share.skippedCalls);
    this.bytes += share.bytes;
  }

  toJSON(): Record<string, unknown> {
    const sorted = (dimension: GroupDimension) => [...this.groups[dimension]].sort(([a], [b]) => compareText(a, b));
    return {
      records: this.total.records,
      ok: this.total.ok,
      exception: this.total.exception,
      no_output: this.total.no_output,
      damaged_lines: this.damagedCount,
      not_exportable: sortedCounts(this.notExportable),
      skipped_calls: sortedCounts(this.skippedCalls),
      key: this.keyKind,
      unique_ok_keys: this.uniqueOkKeys,
      duplicate_ok_records: this.total.ok - this.uniqueOkKeys,
      files: this.files,
      bytes: this.bytes,
      totals: this.total.toJSON(),
      models: Object.fromEntries(sorted('model').map(([k, t]) => [k, t.records])),
      // Only for recorders whose records carry a version (`versionNameOf`): `synalinks_versions`.
      ...Object.fromEntries(
        [...versionsByRecorder(this.groups.version)].map(([recorder, versions]) => [
          `${recorder}_versions`,
          Object.fromEntries([...versions].sort(([a], [b]) => compareText(a, b)).map(([k, t]) => [k, t.records])),
        ]),
      ),
      programs: Object.fromEntries(sorted('program').map(([k, t]) => [k, t.toJSON()])),
      modules: Object.fromEntries(sorted('module').map(([k, t]) => [k, t.toJSON()])),
      damaged: this.damagedListed,
      damaged_not_listed: this.damagedCount - this.damagedListed.length,
      prices: this.prices === null ? null : { table: this.prices.origin, written: this.prices.written },
    };
  }
}

/**
 * The reason word of a record that can never be exported: the leading `word:` of its
 * reason (`no_content: …`), else `not_exportable`.
 */
export function notExportableReason(detail: string): string {
  const match = /^([a-z_]+):/.exec(detail);
  return match !== null ? match[1] : 'not_exportable';
}

function addTo(counts: Record<string, number>, key: string, n: number): void {
  counts[key] = (Object.hasOwn(counts, key) ? counts[key] : 0) + n;
}

function sortedCounts(counts: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(counts).sort(([a], [b]) => compareText(a, b)));
}
