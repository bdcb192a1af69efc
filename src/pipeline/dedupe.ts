/**
 * Dedupe: one winner per key. An ok record beats a failed one (a call retried after a
 * failure keeps its success); otherwise the first (or last) by timestamp wins, ties going
 * to the earlier file path and line, which is the order records arrive in. Only winners
 * are remembered, in typed columns, so memory follows the number of distinct keys.
 */
import type { Status } from '../record.js';
import { CallIdColumn, Column } from './columns.js';
import { KeyIndex } from './key-index.js';

export type KeepRule = 'first' | 'last';

/** What dedupe needs of a record. A missing timestamp counts as 0. */
export interface Offered {
  callId: string;
  /** The call_id's uuid bits when at hand: stored without reading `callId`. */
  readonly callIdWords?: Uint32Array | null;
  fileIndex: number;
  line: number;
  /** Byte offset of the line in its file. */
  offset: number;
  timestamp: number;
  status: Status;
  /** The record's module id when merges across modules are counted, else 0. */
  moduleId: number;
}

export interface Loser {
  callId: string;
  fileIndex: number;
  line: number;
  group: number;
  moduleId: number;
}

export class Deduplicator {
  readonly index = new KeyIndex();
  readonly callIds = new CallIdColumn();
  readonly fileIndexes = new Column(Int32Array);
  readonly lines = new Column(Int32Array);
  readonly offsets = new Column(Float64Array);
  readonly timestamps = new Column(Float64Array);
  /** 1 when the group's winner is an ok record. */
  readonly winnerOk = new Column(Uint8Array);
  /** The winner's module id, when merges across modules are counted (see `Offered.moduleId`). */
  readonly winnerModules: Column<Int32Array> | null;
  groups = 0;

  constructor(
    private readonly keep: KeepRule,
    countsAcrossModules = false,
  ) {
    this.winnerModules = countsAcrossModules ? new Column(Int32Array) : null;
  }

  /** Whether a record that arrives later beats the current winner of `group`. */
  private beats(offered: Offered, group: number): boolean {
    const ok = offered.status === 'ok' ? 1 : 0;
    const winnerOk = this.winnerOk.data[group];
    if (ok !== winnerOk) return ok > winnerOk;
    const winnerTimestamp = this.timestamps.data[group];
    return this.keep === 'first' ? offered.timestamp < winnerTimestamp : offered.timestamp >= winnerTimestamp;
  }

  /**
   * Offers a record; returns its group, whether it is now the group's winner, and the
   * record that lost (the offered one or the former winner), if any.
   */
  offer(offered: Offered, key: Uint32Array): { group: number; won: boolean; loser: Loser | null } {
    let group = this.index.addIfAbsent(key, this.groups);
    if (group === -1) {
      group = this.groups++;
      this.store(group, offered);
      return { group, won: true, loser: null };
    }
    if (!this.beats(offered, group)) {
      return { group, won: false, loser: { callId: offered.callId, fileIndex: offered.fileIndex, line: offered.line, group, moduleId: offered.moduleId } };
    }
    const loser = {
      callId: this.callIds.get(group),
      fileIndex: this.fileIndexes.data[group],
      line: this.lines.data[group],
      group,
      moduleId: this.winnerModules?.data[group] ?? 0,
    };
    this.store(group, offered);
    return { group, won: true, loser };
  }

  private store(group: number, offered: Offered): void {
    for (const column of [this.fileIndexes, this.lines, this.offsets, this.timestamps, this.winnerOk]) column.ensure(group + 1);
    this.winnerOk.data[group] = offered.status === 'ok' ? 1 : 0;
    const words = offered.callIdWords;
    if (words != null) this.callIds.setWords(group, words);
    else this.callIds.set(group, offered.callId);
    this.fileIndexes.data[group] = offered.fileIndex;
    this.lines.data[group] = offered.line;
    this.offsets.data[group] = offered.offset;
    this.timestamps.data[group] = offered.timestamp;
    if (this.winnerModules !== null) {
      this.winnerModules.ensure(group + 1);
      this.winnerModules.data[group] = offered.moduleId;
    }
  }

  get byteSize(): number {
    return this.index.byteSize + this.callIds.byteSize + this.fileIndexes.byteSize + this.lines.byteSize + this.offsets.byteSize + this.timestamps.byteSize + this.winnerOk.byteSize + (this.winnerModules?.byteSize ?? 0);
  }
}
