/** The `stats` sink: folds records into totals overall and per program, module, model and version. */
import type { DamagedLine, TraceRecord } from '../record.js';
import { KeyIndex } from '../pipeline/key-index.js';
import { keyOf } from '../pipeline/keys.js';
import { factsOf, Tally } from './tally.js';

export const GROUP_DIMENSIONS = ['program', 'module', 'model', 'version'] as const;
export type GroupDimension = (typeof GROUP_DIMENSIONS)[number];

const MAX_LISTED_DAMAGE = 20;

function groupName(record: TraceRecord, dimension: GroupDimension): string {
  switch (dimension) {
    case 'program':
      return record.program;
    case 'module':
      return `${record.program}/${record.module}`;
    case 'model':
      return record.model ?? '(unknown)';
    case 'version':
      return record.version ?? '(unknown)';
  }
}

export class StatsCollector {
  readonly total = new Tally();
  readonly groups: Record<GroupDimension, Map<string, Tally>> = {
    program: new Map(),
    module: new Map(),
    model: new Map(),
    version: new Map(),
  };
  readonly okKeys = new KeyIndex();
  damagedCount = 0;
  readonly damagedListed: DamagedLine[] = [];
  files = 0;
  bytes = 0;
  private readonly key = new Uint32Array(4);

  addRecord(record: TraceRecord): void {
    const facts = factsOf(record);
    let isDuplicate = false;
    if (facts.status === 'ok') isDuplicate = this.okKeys.addIfAbsent(keyOf(record, 'inputs,config', this.key), 0) !== -1;
    this.total.add(facts, isDuplicate);
    for (const dimension of GROUP_DIMENSIONS) {
      const name = groupName(record, dimension);
      let tally = this.groups[dimension].get(name);
      if (tally === undefined) this.groups[dimension].set(name, (tally = new Tally()));
      tally.add(facts, isDuplicate);
    }
  }

  addDamaged(line: DamagedLine): void {
    this.damagedCount++;
    if (this.damagedListed.length < MAX_LISTED_DAMAGE) this.damagedListed.push(line);
  }

  toJSON(): Record<string, unknown> {
    const groups = (dimension: GroupDimension) =>
      Object.fromEntries([...this.groups[dimension]].sort(([a], [b]) => a.localeCompare(b)).map(([k, t]) => [k, t.toJSON()]));
    const countsOf = (dimension: GroupDimension) =>
      Object.fromEntries([...this.groups[dimension]].sort(([a], [b]) => a.localeCompare(b)).map(([k, t]) => [k, t.records]));
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
      models: countsOf('model'),
      synalinks_versions: countsOf('version'),
      programs: groups('program'),
      modules: groups('module'),
      damaged: this.damagedListed,
      damaged_not_listed: this.damagedCount - this.damagedListed.length,
    };
  }
}
