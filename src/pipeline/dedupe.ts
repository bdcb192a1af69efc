/**
 * Dedupe: one winner per key. An ok record beats a failed one (a call retried after a
 * failure keeps its success); otherwise the first (or last) by timestamp wins, ties going
 * to the earlier file path and line, which is the order records arrive in.
 *
 * Nothing here is held for the whole tree. Every record that reaches dedupe is a fixed-width
 * row (`KeyRow`), written during the scan to one of several files by a hash of its key
 * (curate.ts); a partition's rows are then resolved alone, in arrival order, with an index of
 * that partition's keys only: memory follows the unique keys divided by the partitions.
 */
import { Column } from './columns.js';
import { KeyIndex } from './key-index.js';

export type KeepRule = 'first' | 'last';

/** Where each fact sits in a record's row, in 32-bit words (the two floats on 8-byte boundaries). */
export const KeyRow = {
  /** 4 words: the dedupe key. */
  key: 0,
  /** Arrival number among the records that reach dedupe: file order. */
  seq: 4,
  fileIndex: 5,
  line: 6,
  /** `OK` and `TRAJECTORY` bits. */
  flags: 7,
  /** Float64, 2 words: byte offset of the line. */
  offset: 8,
  /** Float64, 2 words: epoch seconds, 0 when unknown. */
  timestamp: 10,
  /** The module id when merges across modules are counted, else 0. */
  moduleId: 12,
  /** 4 words: the call_id as a uuid, zeros when it is no uuid (then it is in a side table by seq). */
  callId: 14,
  /** Words of a row without a near-duplicate signature; a signature, when on, follows. */
  words: 18,
} as const;

/** `KeyRow.flags`: an ok record. */
export const OK = 1;
/** `KeyRow.flags`: an ok record with trajectory digests (collapse). */
export const TRAJECTORY = 2;

/** A duplicate's loss: the record that lost, and the final winner of its key. */
export const LossRow = {
  /** Arrival that caused the loss (the order duplicates are reported in). */
  seq: 0,
  fileIndex: 1,
  line: 2,
  moduleId: 3,
  loserSeq: 4,
  winnerSeq: 5,
  winnerModule: 6,
  loserCallId: 8,
  winnerCallId: 12,
  words: 16,
} as const;

const float = new Float64Array(1);
const floatWords = new Uint32Array(float.buffer);

/** The float64 stored in words `at` and `at + 1` of `row`. */
export function rowFloat(row: ArrayLike<number>, at: number): number {
  floatWords[0] = row[at];
  floatWords[1] = row[at + 1];
  return float[0];
}

/** Stores `value` as a float64 in words `at` and `at + 1` of `row`. */
export function setRowFloat(row: Uint32Array, at: number, value: number): void {
  float[0] = value;
  row[at] = floatWords[0];
  row[at + 1] = floatWords[1];
}

/**
 * The partition of a 4-word key among `partitions`: a mix unlike `KeyIndex`'s own (keys of one
 * partition would otherwise share their low slot bits, and crowd its index), spreading keys
 * that are not digests too (a file's position keys).
 */
export function partitionOf(key: ArrayLike<number>, at: number, partitions: number): number {
  let h = Math.imul(key[at] ^ 0x27d4eb2f, 0x165667b1) ^ Math.imul(key[at + 1], 0xd3a2646c) ^ Math.imul(key[at + 2], 0xfd7046c5) ^ Math.imul(key[at + 3], 0xb55a4f09);
  h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d);
  h = Math.imul(h ^ (h >>> 12), 0x297a2d39);
  return ((h ^ (h >>> 15)) >>> 0) % partitions;
}

/** One partition resolved: its winners' rows, its losses (in arrival order) and its distinct keys. */
export interface ResolvedPartition {
  /** `groups` rows of the resolver's width, one per key (every row, when every row wins). */
  winners: Uint32Array;
  groups: number;
  /** `lossCount` rows of `LossRow.words`, each naming its key's final winner. */
  losses: Uint32Array;
  lossCount: number;
  /** The partition's distinct keys. */
  keys: KeyIndex;
  /** Bytes the resolution held. */
  byteSize: number;
}

/**
 * Resolves the rows of one partition, in arrival order, by the rule above. Each arrival yields
 * at most one loss (the offered record, or the winner it displaced). With `everyRowWins`
 * (filter: no dedupe) every row is a winner of its own, and only the distinct keys are gathered.
 */
export function resolvePartition(rows: Iterable<Uint32Array>, expectedRows: number, width: number, keep: KeepRule, everyRowWins: boolean): ResolvedPartition {
  // Sized for every row being a new key: the index is not rehashed while it fills.
  const keys = new KeyIndex(Math.ceil(expectedRows * 1.5));
  const winners = new Column(Uint32Array, width, Math.max(16, expectedRows));
  const losses = new Column(Uint32Array, LossRow.words, 64);
  /** Per loss, the local group whose final winner it names. */
  const lossGroups = new Column(Int32Array, 1, 64);
  const key = new Uint32Array(4);
  let groups = 0;
  let lossCount = 0;
  for (const row of rows) {
    for (let i = 0; i < 4; i++) key[i] = row[KeyRow.key + i];
    if (everyRowWins) {
      keys.addIfAbsent(key, 0);
      winners.ensure(groups + 1);
      winners.data.set(row, groups++ * width);
      continue;
    }
    const group = keys.addIfAbsent(key, groups);
    if (group === -1) {
      winners.ensure(groups + 1);
      winners.data.set(row, groups++ * width);
      continue;
    }
    const base = group * width;
    const winner = winners.data;
    const ok = row[KeyRow.flags] & OK;
    const winnerOk = winner[base + KeyRow.flags] & OK;
    let beats: boolean;
    if (ok !== winnerOk) beats = ok > winnerOk;
    else {
      const timestamp = rowFloat(row, KeyRow.timestamp);
      const winnerTimestamp = rowFloat(winner, base + KeyRow.timestamp);
      beats = keep === 'first' ? timestamp < winnerTimestamp : timestamp >= winnerTimestamp;
    }
    const loser = beats ? winner.subarray(base, base + width) : row;
    losses.ensure(lossCount + 1);
    lossGroups.ensure(lossCount + 1);
    const at = lossCount * LossRow.words;
    const loss = losses.data;
    loss[at + LossRow.seq] = row[KeyRow.seq];
    loss[at + LossRow.fileIndex] = loser[KeyRow.fileIndex];
    loss[at + LossRow.line] = loser[KeyRow.line];
    loss[at + LossRow.moduleId] = loser[KeyRow.moduleId];
    loss[at + LossRow.loserSeq] = loser[KeyRow.seq];
    for (let i = 0; i < 4; i++) loss[at + LossRow.loserCallId + i] = loser[KeyRow.callId + i];
    lossGroups.data[lossCount++] = group;
    if (beats) winner.set(row, base);
  }
  // The final winners are known: each loss names its key's.
  for (let i = 0; i < lossCount; i++) {
    const at = i * LossRow.words;
    const base = lossGroups.data[i] * width;
    const loss = losses.data;
    const winner = winners.data;
    loss[at + LossRow.winnerSeq] = winner[base + KeyRow.seq];
    loss[at + LossRow.winnerModule] = winner[base + KeyRow.moduleId];
    for (let w = 0; w < 4; w++) loss[at + LossRow.winnerCallId + w] = winner[base + KeyRow.callId + w];
  }
  return {
    winners: winners.data,
    groups,
    losses: losses.data,
    lossCount,
    keys,
    byteSize: keys.byteSize + winners.byteSize + losses.byteSize + lossGroups.byteSize,
  };
}
