/**
 * Dedupe: one winner per key. An ok record beats a failed one (a call retried after a
 * failure keeps its success), and an ok record no quality stage flagged beats a flagged one
 * (a program that asks again after a refusal keeps the good answer: `standingOf`); otherwise
 * the first (or last) by timestamp wins, ties going to the earlier file path and line, which
 * is the order records arrive in.
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
  /** `OK`, `TRAJECTORY` and `FLAGGED` bits. */
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
/** `KeyRow.flags`: an ok record a flagging quality stage named (kept, listed in the manifest). */
export const FLAGGED = 4;

/**
 * Which record of a key is preferred before time decides: 2 an ok record no quality stage
 * flagged, 1 a flagged ok record, 0 any other (failed) record. keep-list's SQL orders by the
 * same standing (`keep-list-sql.ts`), near-duplicates too.
 */
export function standingOf(ok: boolean, flagged: boolean): number {
  return ok ? (flagged ? 1 : 2) : 0;
}

/** `standingOf` a `KeyRow.flags` word. */
export function rowStanding(flags: number): number {
  return standingOf((flags & OK) !== 0, (flags & FLAGGED) !== 0);
}

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
  /** The loser's `KeyRow.flags`. */
  loserFlags: 7,
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

/** Partitions of the key tables for a tree of `bytes`: about 64 MB of records each, from 8 to 256. */
export function planPartitions(bytes: number): number {
  return Math.min(256, Math.max(8, 2 ** Math.ceil(Math.log2(Math.max(1, bytes / (64 * 1024 * 1024))))));
}

/**
 * Rows made room for up front in a partition of `rows` rows: a small partition all, a big one
 * 2048 and growth (by half again), since a partition of many duplicates has few keys.
 */
export function roomFor(rows: number): number {
  return Math.max(16, Math.min(rows, 2048));
}

/** One partition resolved: how many winners and losses (both passed on as found) and its distinct keys. */
export interface ResolvedPartition {
  groups: number;
  lossCount: number;
  /** Losses a flagging stage named whose key kept an ok record none named (a refusal asked again). */
  flaggedGaveWay: number;
  /** The partition's distinct keys. */
  keys: KeyIndex;
  /** Bytes the resolution held. */
  byteSize: number;
}

/** Rows set aside and read back in order (a `SpillFile`). */
export interface RowSpill {
  append(row: ArrayLike<number>): void;
  read(): Iterable<Uint32Array>;
}

/**
 * Resolves the rows of one partition, in arrival order, by the rule above. Each arrival yields
 * at most one loss (the offered record, or the winner it displaced); losses wait in `pending`
 * (on disk: a key may have any number of duplicates) until the partition's final winners are
 * known, then go to `onLoss` in arrival order, each naming its key's final winner. With
 * `everyRowWins` (filter: no dedupe) every row is a winner of its own, and only the distinct
 * keys are gathered. Memory: the partition's distinct keys and their winners' rows.
 */
export function resolvePartition(
  rows: Iterable<Uint32Array>,
  expectedRows: number,
  width: number,
  keep: KeepRule,
  everyRowWins: boolean,
  /** Each final winner's row (a reused view): as it comes when every row wins, else once the partition is resolved. */
  onWinner: (row: Uint32Array) => void,
  pending: () => RowSpill,
  /** Each loss, a `LossRow` (a reused view). */
  onLoss: (loss: Uint32Array) => void,
): ResolvedPartition {
  const keys = new KeyIndex(Math.ceil(roomFor(expectedRows) * 1.5));
  const winners = new Column(Uint32Array, width, everyRowWins ? 1 : roomFor(expectedRows));
  const loss = new Uint32Array(LossRow.words);
  let losses: RowSpill | null = null;
  const key = new Uint32Array(4);
  let groups = 0;
  let lossCount = 0;
  for (const row of rows) {
    for (let i = 0; i < 4; i++) key[i] = row[KeyRow.key + i];
    if (everyRowWins) {
      // Nothing to compare: the row goes on as it is, and only its key stays (for keys.bin).
      keys.addIfAbsent(key, 0);
      groups++;
      onWinner(row);
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
    const standing = rowStanding(row[KeyRow.flags]);
    const winnerStanding = rowStanding(winner[base + KeyRow.flags]);
    let beats: boolean;
    if (standing !== winnerStanding) beats = standing > winnerStanding;
    else {
      const timestamp = rowFloat(row, KeyRow.timestamp);
      const winnerTimestamp = rowFloat(winner, base + KeyRow.timestamp);
      beats = keep === 'first' ? timestamp < winnerTimestamp : timestamp >= winnerTimestamp;
    }
    const loser = beats ? winner.subarray(base, base + width) : row;
    loss[LossRow.seq] = row[KeyRow.seq];
    loss[LossRow.fileIndex] = loser[KeyRow.fileIndex];
    loss[LossRow.line] = loser[KeyRow.line];
    loss[LossRow.moduleId] = loser[KeyRow.moduleId];
    loss[LossRow.loserSeq] = loser[KeyRow.seq];
    loss[LossRow.loserFlags] = loser[KeyRow.flags];
    for (let i = 0; i < 4; i++) loss[LossRow.loserCallId + i] = loser[KeyRow.callId + i];
    // The group until its final winner is known.
    loss[LossRow.winnerSeq] = group;
    (losses ??= pending()).append(loss);
    lossCount++;
    if (beats) winner.set(row, base);
  }
  if (!everyRowWins) for (let group = 0; group < groups; group++) onWinner(winners.data.subarray(group * width, (group + 1) * width));
  // The final winners are known: each loss names its key's.
  let flaggedGaveWay = 0;
  for (const row of losses?.read() ?? []) {
    const base = row[LossRow.winnerSeq] * width;
    const winner = winners.data;
    if ((row[LossRow.loserFlags] & FLAGGED) !== 0 && rowStanding(winner[base + KeyRow.flags]) === standingOf(true, false)) flaggedGaveWay++;
    row[LossRow.winnerSeq] = winner[base + KeyRow.seq];
    row[LossRow.winnerModule] = winner[base + KeyRow.moduleId];
    for (let w = 0; w < 4; w++) row[LossRow.winnerCallId + w] = winner[base + KeyRow.callId + w];
    onLoss(row);
  }
  return { groups, lossCount, flaggedGaveWay, keys, byteSize: keys.byteSize + winners.byteSize };
}
