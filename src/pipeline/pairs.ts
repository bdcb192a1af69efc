/**
 * The pair finder: preference pairs from signals the traces already hold, for the preference
 * targets (openai-preference, hf-preference, nemo-preference). It stands where dedupe stands in
 * curate.ts's plan, over the records every per-record stage let through, grouped by prompt:
 * the dedupe key (`--key`), which never covers the answer. With the default key a prompt is one
 * program and module's recorded inputs and config hashes; `inputs,config` pairs answers across
 * modules, `inputs` across models too, and `conversation` (which covers the answer) groups by
 * the conversation without its completion.
 *
 * Within a prompt:
 * - `quality`: a good answer (no quality stage names it) beside one a quality stage names
 *   (truncated, broken, empty, repetition, refusal, identity: a stage that drops or flags;
 *   `contaminated` is about the prompt, and still drops): chosen the good one (the first,
 *   or the last with `--keep last`), rejected the bad one, the stage as the pair's signal. One
 *   pair per distinct bad answer.
 * - `score`: answers scored by `--scores`: chosen the highest, rejected the lowest, one pair per
 *   prompt, when they are more than 0 and at least `--min-margin` apart. The same two records
 *   already paired by a quality stage are not paired twice.
 * - No signal, no pair: two different good answers without scores are no preference. A failed
 *   call (exception, no output) has no completion and is never a rejected answer; identical
 *   answers never pair. Every record in no pair is reported (`no_pair`) with why.
 *
 * Rows wait on disk by key partition and are resolved a partition at a time, as dedupe's are;
 * the pairs found are held (two records each), so memory follows the pairs, not the tree.
 */
import { STATUSES, type Status } from '../record.js';
import { partitionOf, rowFloat, setRowFloat } from './dedupe.js';
import { uuidText, uuidWords } from '../uuid-words.js';
import { PartitionedSpill, type RunTempDir } from './spill.js';
import type { KeepRule } from './dedupe.js';
import type { Scores } from './scores.js';

/** The quality stages whose verdict is about the answer: what names a rejected answer. */
export const ANSWER_FAULTS = ['truncated', 'broken', 'empty', 'repetition', 'refusal', 'identity'] as const;
export type PairSignal = (typeof ANSWER_FAULTS)[number] | 'score';
export const PAIR_SIGNALS: readonly PairSignal[] = [...ANSWER_FAULTS, 'score'];

/** What the pair finder needs of a record beyond its place: the answer's digest and the stage that names it. */
export interface PairFacts {
  /** 4 words of the completion's canonical digest, or null when the record has no completion. */
  answer: number[] | null;
  /** The first answer stage that named the answer (dropped or flagged), or null. */
  fault: { reason: string; detail: string } | null;
}

const Row = { key: 0, seq: 4, fileIndex: 5, line: 6, flags: 7, offset: 8, timestamp: 10, score: 12, callId: 14, answer: 18, fault: 22, words: 24 } as const;
/** Row.flags bits; the status index sits above them. */
const HAS_ANSWER = 1;
const HAS_SCORE = 2;
const STATUS_SHIFT = 8;

/** One side of a pair. */
export interface PairSide {
  callId: string;
  fileIndex: number;
  line: number;
  offset: number;
  /** The score's text, when scored. */
  score: string | null;
}

export interface Pair {
  chosen: PairSide;
  rejected: PairSide;
  signal: PairSignal;
  /** The rejected answer's stage detail, or the score margin as text. */
  detail: string;
  /** The score margin, for `score` pairs. */
  margin: number | null;
}

export interface Unpaired {
  callId: string;
  fileIndex: number;
  line: number;
  detail: string;
}

export interface PairSettings {
  scores: Scores | null;
  minMargin: number;
  keep: KeepRule;
}

interface Member {
  seq: number;
  callId: string;
  fileIndex: number;
  line: number;
  offset: number;
  timestamp: number;
  status: Status;
  answer: string | null;
  fault: number;
  score: { value: number; text: string } | null;
}

export class PairFinder {
  private readonly rows: PartitionedSpill;
  private readonly row = new Uint32Array(Row.words);
  private arrivals = 0;
  /** call_ids that are no uuid, by arrival. */
  private readonly otherIds = new Map<number, string>();
  /** Details of faults by arrival (the reason is in the row). */
  private readonly faultDetails = new Map<number, string>();
  /** Records met with a score. */
  scored = 0;

  constructor(
    dir: RunTempDir,
    private readonly partitions: number,
    private readonly settings: PairSettings,
  ) {
    this.rows = new PartitionedSpill(dir, 'pair-rows', Row.words, partitions);
  }

  add(candidate: { callId: string; fileIndex: number; line: number; offset: number; timestamp: number; status: Status }, key: Uint32Array, facts: PairFacts | null): void {
    const seq = this.arrivals++;
    const row = this.row;
    row.fill(0);
    row.set(key, Row.key);
    row[Row.seq] = seq;
    row[Row.fileIndex] = candidate.fileIndex;
    row[Row.line] = candidate.line;
    setRowFloat(row, Row.offset, candidate.offset);
    setRowFloat(row, Row.timestamp, candidate.timestamp);
    let flags = STATUSES.indexOf(candidate.status) << STATUS_SHIFT;
    const callId = candidate.callId;
    if (!uuidWords(callId, row, Row.callId)) this.otherIds.set(seq, callId);
    const score = this.settings.scores?.byCallId.get(callId);
    if (score !== undefined) {
      flags |= HAS_SCORE;
      setRowFloat(row, Row.score, score.value);
      this.scored++;
    }
    if (candidate.status === 'ok' && facts?.answer != null) {
      flags |= HAS_ANSWER;
      for (let i = 0; i < 4; i++) row[Row.answer + i] = facts.answer[i];
      if (facts.fault !== null) {
        row[Row.fault] = ANSWER_FAULTS.indexOf(facts.fault.reason as (typeof ANSWER_FAULTS)[number]) + 1;
        this.faultDetails.set(seq, facts.fault.detail);
      }
    }
    row[Row.flags] = flags;
    this.rows.append(partitionOf(key, 0, this.partitions), row);
  }

  private member(row: Uint32Array): Member {
    const seq = row[Row.seq];
    const flags = row[Row.flags];
    const callId = this.otherIds.get(seq) ?? uuidText(row, Row.callId);
    const scoreText = (flags & HAS_SCORE) !== 0 ? (this.settings.scores!.byCallId.get(callId)?.text ?? null) : null;
    return {
      seq,
      callId,
      fileIndex: row[Row.fileIndex],
      line: row[Row.line],
      offset: rowFloat(row, Row.offset),
      timestamp: rowFloat(row, Row.timestamp),
      status: STATUSES[flags >>> STATUS_SHIFT],
      answer: (flags & HAS_ANSWER) !== 0 ? Array.from(row.subarray(Row.answer, Row.answer + 4), (w) => w.toString(16).padStart(8, '0')).join('') : null,
      fault: row[Row.fault],
      score: scoreText === null ? null : { value: rowFloat(row, Row.score), text: scoreText },
    };
  }

  /**
   * Resolves every prompt's records into pairs and unpaired records, a key partition at a time;
   * `onPairedKey` gets the key of each prompt that gave a pair (16 bytes, words big-endian, as
   * kept keys are written), for a later `--against`.
   */
  resolve(onPair: (pair: Pair) => void, onUnpaired: (record: Unpaired) => void, onPairedKey: (key: Uint8Array) => void = () => {}): void {
    for (let p = 0; p < this.partitions; p++) {
      if (this.rows.rows(p) === 0) {
        this.rows.close(p);
        continue;
      }
      const groups = new Map<string, { key: Uint8Array; members: Member[] }>();
      for (const row of this.rows.read(p)) {
        const id = `${row[0]},${row[1]},${row[2]},${row[3]}`;
        let group = groups.get(id);
        if (group === undefined) {
          const key = Buffer.alloc(16);
          for (let i = 0; i < 4; i++) key.writeUInt32BE(row[Row.key + i], i * 4);
          groups.set(id, (group = { key, members: [] }));
        }
        group.members.push(this.member(row));
      }
      this.rows.close(p);
      for (const { key, members } of groups.values()) if (this.resolveGroup(members, onPair, onUnpaired)) onPairedKey(key);
    }
  }

  private side(m: Member): PairSide {
    return { callId: m.callId, fileIndex: m.fileIndex, line: m.line, offset: m.offset, score: m.score?.text ?? null };
  }

  /** The pairs of one prompt's records (in arrival order: file order); whether it gave any. */
  private resolveGroup(group: Member[], onPair: (pair: Pair) => void, onUnpaired: (record: Unpaired) => void): boolean {
    group.sort((a, b) => a.seq - b.seq);
    const why = new Map<Member, string>();
    const paired = new Set<Member>();
    const answered = group.filter((m) => m.answer !== null);
    for (const m of group) if (m.answer === null) why.set(m, m.status === 'ok' ? 'no completion recorded: nothing to compare' : `a failed call (${m.status}) has no completion: never a rejected answer`);
    const good = answered.filter((m) => m.fault === 0);
    const bad = answered.filter((m) => m.fault !== 0);
    const pairsOf = new Set<string>();
    // Quality: the good answer the --keep rule picks, against each distinct bad answer.
    const chosen = good.length === 0 ? null : this.settings.keep === 'last' ? latest(good) : earliest(good);
    const rejectedAnswers = new Set<string>();
    for (const m of bad) {
      const reason = ANSWER_FAULTS[m.fault - 1];
      if (chosen === null) {
        why.set(m, `${reason}: no good answer to the same prompt to pair it with`);
        continue;
      }
      if (m.answer === chosen.answer) {
        why.set(m, `${reason}: the same answer as the good one, ${chosen.callId}`);
        continue;
      }
      if (rejectedAnswers.has(m.answer!)) {
        why.set(m, `${reason}: the same answer as a rejected answer already paired`);
        continue;
      }
      rejectedAnswers.add(m.answer!);
      paired.add(m).add(chosen);
      pairsOf.add(`${chosen.seq}:${m.seq}`);
      onPair({ chosen: this.side(chosen), rejected: this.side(m), signal: reason, detail: this.faultDetails.get(m.seq) ?? reason, margin: null });
    }
    // Scores: the highest against the lowest, one pair per prompt.
    const scored = answered.filter((m) => m.score !== null);
    let scoreNote: string | null = null;
    let scorePaired = false;
    if (scored.length >= 2) {
      let hi = scored[0];
      let lo = scored[0];
      for (const m of scored) {
        if (m.score!.value > hi.score!.value) hi = m;
        // Ties go to the earlier record, for the highest and the lowest alike (file order).
        if (m.score!.value < lo.score!.value) lo = m;
      }
      const margin = hi.score!.value - lo.score!.value;
      if (hi === lo || margin <= 0) scoreNote = `scored alike (${hi.score!.text}): no preference`;
      else if (margin < this.settings.minMargin) scoreNote = `scores ${hi.score!.text} and ${lo.score!.text} are ${formatMargin(margin)} apart, under --min-margin ${this.settings.minMargin}`;
      else if (hi.answer === lo.answer) scoreNote = `the highest and lowest scored answers are identical`;
      else if (pairsOf.has(`${hi.seq}:${lo.seq}`)) scoreNote = null;
      else {
        paired.add(hi).add(lo);
        scorePaired = true;
        onPair({ chosen: this.side(hi), rejected: this.side(lo), signal: 'score', detail: `scores ${hi.score!.text} over ${lo.score!.text}`, margin });
      }
    } else if (scored.length === 1 && answered.length > 1) scoreNote = 'the only scored answer to its prompt';
    for (const m of group) {
      if (paired.has(m)) continue;
      let detail = why.get(m);
      if (detail === undefined) {
        if (answered.length === 1) detail = 'the only answer to its prompt';
        else if (m.score !== null && scoreNote !== null) detail = scoreNote;
        else if (m.score !== null && scorePaired) detail = `scored ${m.score.text}, between the highest and the lowest of its prompt (one score pair per prompt)`;
        else if (chosen !== null && m !== chosen && m.answer === chosen.answer) detail = `the same answer as ${chosen.callId}`;
        else detail = `no signal: ${answered.length} answers to its prompt, none named by a quality stage${scored.length > 0 ? ', not enough of them scored' : ' and none scored'}`;
      }
      onUnpaired({ callId: m.callId, fileIndex: m.fileIndex, line: m.line, detail });
    }
    return paired.size > 0;
  }

  dispose(): void {
    this.rows.dispose();
  }
}

/** Pairs found per signal, every signal named (0 included). */
export function pairCounts(pairs: readonly Pair[]): Record<string, number> {
  const counts: Record<string, number> = Object.fromEntries(PAIR_SIGNALS.map((s) => [s, 0]));
  for (const pair of pairs) counts[pair.signal]++;
  return counts;
}

function earliest(members: Member[]): Member {
  return members.reduce((a, b) => (b.timestamp !== 0 && a.timestamp !== 0 && b.timestamp < a.timestamp ? b : a));
}

function latest(members: Member[]): Member {
  return members.reduce((a, b) => (b.timestamp === 0 || a.timestamp === 0 || b.timestamp >= a.timestamp ? b : a));
}

function formatMargin(margin: number): string {
  return String(Number(margin.toPrecision(6)));
}
