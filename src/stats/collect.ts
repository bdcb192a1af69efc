/** The `stats` sink: folds records into totals overall and per program, module, model and version. */
import type { DamagedLine, TraceRecord } from '../record.js';
import { Column } from '../pipeline/columns.js';
import { KeyIndex, slotsForTree } from '../pipeline/key-index.js';
import { keyOf } from '../pipeline/keys.js';
import type { PriceTable } from '../pricing/table.js';
import { factsOf, Tally, type TallySnapshot } from './tally.js';
import { compareText } from '../order.js';

export const GROUP_DIMENSIONS = ['program', 'module', 'model', 'version'] as const;
export type GroupDimension = (typeof GROUP_DIMENSIONS)[number];

const MAX_LISTED_DAMAGE = 20;

/** The groups one record counts in: its program, module, model and version. */
type GroupNames = [string, string, string, string];


/** What a worker hands back for its share of the files. */
export interface StatsSnapshot {
  total: TallySnapshot;
  groups: Record<GroupDimension, [string, TallySnapshot][]>;
  damagedCount: number;
  damagedListed: DamagedLine[];
  bytes: number;
  /** Distinct ok keys of the share in first-seen order (4 words each)… */
  keys: Uint32Array;
  /** …and the groups of the record each was first seen in (index into `groupSets`). */
  keyGroups: Int32Array;
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
  readonly okKeys: KeyIndex;
  damagedCount = 0;
  readonly damagedListed: DamagedLine[] = [];
  files = 0;
  bytes = 0;
  private readonly key = new Uint32Array(4);
  /**
   * Consecutive records nearly always share their groups: the last set is reused, found by
   * the record's own names (the same strings from one record to the next, so `===` is cheap).
   */
  private lastNames: GroupNames | null = null;
  private lastRecordNames: [program: string, module: string, model: string | null, version: string | null] | null = null;
  private lastTallies: Tally[] = [];
  /**
   * Set when this collector is a worker's share: first-seen keys and their groups. Typed
   * columns, not arrays of numbers: half of all key words would be heap numbers, and their
   * survival made the young generation grow (about 25 MB more resident on 1 GB).
   */
  private readonly keyLog: {
    keys: Column<Uint32Array>;
    keyGroups: Column<Int32Array>;
    count: number;
    groupSets: GroupNames[];
    setIndex: Map<string, number>;
    /** The set of the last key logged: nearly always the next one's too. */
    lastNames: GroupNames | null;
    lastSetIndex: number;
  } | null;

  /** Estimates the cost of records that report none (null: no estimates). */
  readonly prices: PriceTable | null;

  constructor(options: { logKeys?: boolean; prices?: PriceTable | null; bytes?: number } = {}) {
    this.okKeys = new KeyIndex(slotsForTree(options.bytes ?? 0));
    this.keyLog = options.logKeys
      ? { keys: new Column(Uint32Array, 4), keyGroups: new Column(Int32Array), count: 0, groupSets: [], setIndex: new Map(), lastNames: null, lastSetIndex: -1 }
      : null;
    this.prices = options.prices ?? null;
  }

  /** The groups of a record, and their tallies in `lastTallies`. */
  private namesOf(record: TraceRecord): GroupNames {
    const program = record.program;
    const module = record.module;
    const model = record.model;
    const version = record.version;
    const last = this.lastRecordNames;
    if (last !== null && last[0] === program && last[1] === module && last[2] === model && last[3] === version) return this.lastNames!;
    const names: GroupNames = [program, `${program}/${module}`, model ?? '(unknown)', version ?? '(unknown)'];
    this.talliesFor(names);
    this.lastRecordNames = [program, module, model, version];
    return names;
  }

  private talliesFor(names: GroupNames): Tally[] {
    const last = this.lastNames;
    if (last !== null && last[0] === names[0] && last[1] === names[1] && last[2] === names[2] && last[3] === names[3]) {
      return this.lastTallies;
    }
    this.lastRecordNames = null;
    this.lastNames = names;
    this.lastTallies = GROUP_DIMENSIONS.map((dimension, i) => {
      let tally = this.groups[dimension].get(names[i]);
      if (tally === undefined) this.groups[dimension].set(names[i], (tally = new Tally()));
      return tally;
    });
    return this.lastTallies;
  }

  addRecord(record: TraceRecord): void {
    const facts = factsOf(record, this.prices);
    const names = this.namesOf(record);
    let isDuplicate = false;
    if (facts.status === 'ok') {
      isDuplicate = this.okKeys.addIfAbsent(keyOf(record, 'inputs,config', this.key), 0) !== -1;
      if (!isDuplicate && this.keyLog !== null) this.logKey(names);
    }
    this.total.add(facts, isDuplicate);
    for (const tally of this.lastTallies) tally.add(facts, isDuplicate);
  }

  private logKey(names: GroupNames): void {
    const log = this.keyLog!;
    let setIndex = log.lastSetIndex;
    if (names !== log.lastNames) {
      const setKey = names.join('\0');
      setIndex = log.setIndex.get(setKey) ?? -1;
      if (setIndex === -1) {
        log.setIndex.set(setKey, (setIndex = log.groupSets.length));
        log.groupSets.push(names);
      }
      log.lastNames = names;
      log.lastSetIndex = setIndex;
    }
    const row = log.count++;
    log.keys.ensure(log.count);
    log.keyGroups.ensure(log.count);
    log.keys.data.set(this.key, row * 4);
    log.keyGroups.data[row] = setIndex;
  }

  addDamaged(line: DamagedLine): void {
    this.damagedCount++;
    if (this.damagedListed.length < MAX_LISTED_DAMAGE) this.damagedListed.push(line);
  }

  snapshot(): StatsSnapshot {
    const log = this.keyLog;
    return {
      total: this.total.snapshot(),
      groups: Object.fromEntries(GROUP_DIMENSIONS.map((d) => [d, [...this.groups[d]].map(([name, t]) => [name, t.snapshot()])])) as StatsSnapshot['groups'],
      damagedCount: this.damagedCount,
      damagedListed: this.damagedListed,
      bytes: this.bytes,
      keys: log === null ? new Uint32Array(0) : log.keys.data.slice(0, log.count * 4),
      keyGroups: log === null ? new Int32Array(0) : log.keyGroups.data.slice(0, log.count),
      groupSets: log?.groupSets ?? [],
    };
  }

  /**
   * Folds in a share of the files read elsewhere. Shares must come in file order: a key
   * the share saw first that an earlier share already had makes that record a duplicate.
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
    const key = this.key;
    for (let i = 0; i < share.keyGroups.length; i++) {
      key.set(share.keys.subarray(i * 4, i * 4 + 4));
      if (this.okKeys.addIfAbsent(key, 0) === -1) continue;
      this.total.duplicates++;
      for (const tally of this.talliesFor(share.groupSets[share.keyGroups[i]])) tally.duplicates++;
    }
    for (const line of share.damagedListed) if (this.damagedListed.length < MAX_LISTED_DAMAGE) this.damagedListed.push(line);
    this.damagedCount += share.damagedCount;
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
      unique_ok_keys: this.okKeys.size,
      duplicate_ok_records: this.total.ok - this.okKeys.size,
      files: this.files,
      bytes: this.bytes,
      totals: this.total.toJSON(),
      models: Object.fromEntries(sorted('model').map(([k, t]) => [k, t.records])),
      synalinks_versions: Object.fromEntries(sorted('version').map(([k, t]) => [k, t.records])),
      programs: Object.fromEntries(sorted('program').map(([k, t]) => [k, t.toJSON()])),
      modules: Object.fromEntries(sorted('module').map(([k, t]) => [k, t.toJSON()])),
      damaged: this.damagedListed,
      damaged_not_listed: this.damagedCount - this.damagedListed.length,
      prices: this.prices === null ? null : { table: this.prices.origin, written: this.prices.written },
    };
  }
}
