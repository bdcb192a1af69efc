/**
 * A share's candidates in columns. They cross from a worker to the thread that compares
 * records as a few typed arrays instead of an object per record: deserializing those objects
 * made that thread the bottleneck of two. There they are read through one reused view.
 */
import type { DamagedLine, Status } from '../record.js';
import { STATUSES } from '../record.js';
import type { Candidate } from './candidate.js';
import type { TrajectoryDigests } from './collapse.js';
import { uuidText, uuidWords } from '../uuid-words.js';
import type { PairFacts } from './pairs.js';

export interface CandidateBatch {
  count: number;
  fileIndex: Int32Array;
  line: Int32Array;
  /** Byte offset of the line in its file. */
  offset: Float64Array;
  /** Index into STATUSES. */
  status: Uint8Array;
  /** 1 where the truncated stage could not tell (`Candidate.truncationUnchecked`). */
  truncationUnchecked: Uint8Array;
  timestamp: Float64Array;
  /** Per row, a 32-bit id of the record's program and module (`moduleId`), when the key ignores them; else 0. */
  moduleIds: Int32Array;
  /** The "program/module" name of each module id the batch holds. */
  moduleNames: Map<number, string>;
  /** 4 words a row: the dedupe key (zeros when selection drops the record). */
  keys: Uint32Array;
  /** 4 words a row: the call_id's uuid bits (zeros when `otherCallIds` has the id). */
  callIds: Uint32Array;
  /** What few rows have, by row. */
  otherCallIds: Map<number, string>;
  verdicts: Map<number, NonNullable<Candidate['verdict']>>;
  flags: Map<number, NonNullable<Candidate['flags']>>;
  /** Per row, the input messages of its trajectory digests, or -1 when it has none. */
  trajectoryInputs: Int32Array;
  /** 4 words a row: the digest of the whole conversation. */
  conversations: Uint32Array;
  /** Row r's input prefix digests are `prefixWords` from `prefixStarts[r]` to `prefixStarts[r + 1]`, 4 words each. */
  prefixStarts: Int32Array;
  prefixWords: Uint32Array;
  toolCalls: Map<number, string[]>;
  signatures: Map<number, Uint32Array>;
  /** With preference pairs: each row's answer digest and the stage naming it. */
  pairFacts: Map<number, PairFacts>;
  /** Damaged lines in line order, each with the row it comes before. */
  damaged: { before: number; line: DamagedLine }[];
}

export class CandidateBatchWriter {
  private capacity: number;
  private batch: CandidateBatch;
  private prefixWordsUsed = 0;

  constructor(expectedRows = 1024) {
    this.capacity = Math.max(16, expectedRows);
    this.batch = {
      count: 0,
      fileIndex: new Int32Array(this.capacity),
      line: new Int32Array(this.capacity),
      offset: new Float64Array(this.capacity),
      status: new Uint8Array(this.capacity),
      truncationUnchecked: new Uint8Array(this.capacity),
      timestamp: new Float64Array(this.capacity),
      moduleIds: new Int32Array(this.capacity),
      moduleNames: new Map(),
      keys: new Uint32Array(this.capacity * 4),
      callIds: new Uint32Array(this.capacity * 4),
      otherCallIds: new Map(),
      verdicts: new Map(),
      flags: new Map(),
      trajectoryInputs: new Int32Array(this.capacity),
      conversations: new Uint32Array(this.capacity * 4),
      prefixStarts: new Int32Array(this.capacity + 1),
      prefixWords: new Uint32Array(this.capacity * 4),
      toolCalls: new Map(),
      signatures: new Map(),
      pairFacts: new Map(),
      damaged: [],
    };
  }

  private grow(): void {
    this.capacity *= 2;
    const b = this.batch;
    const grown = <T extends Int32Array | Uint32Array | Uint8Array | Float64Array>(old: T, width = 1): T => {
      const bigger = new (old.constructor as new (length: number) => T)(this.capacity * width);
      bigger.set(old);
      return bigger;
    };
    b.fileIndex = grown(b.fileIndex);
    b.line = grown(b.line);
    b.offset = grown(b.offset);
    b.status = grown(b.status);
    b.truncationUnchecked = grown(b.truncationUnchecked);
    b.timestamp = grown(b.timestamp);
    b.moduleIds = grown(b.moduleIds);
    b.keys = grown(b.keys, 4);
    b.callIds = grown(b.callIds, 4);
    b.trajectoryInputs = grown(b.trajectoryInputs);
    b.conversations = grown(b.conversations, 4);
    const starts = new Int32Array(this.capacity + 1);
    starts.set(b.prefixStarts);
    b.prefixStarts = starts;
  }

  private addTrajectory(row: number, trajectory: TrajectoryDigests | null): void {
    const b = this.batch;
    b.trajectoryInputs[row] = trajectory === null ? -1 : trajectory.inputs;
    if (trajectory !== null) {
      b.conversations.set(trajectory.conversation, row * 4);
      const needed = this.prefixWordsUsed + trajectory.prefixes.length;
      if (needed > b.prefixWords.length) {
        const words = new Uint32Array(Math.max(needed, b.prefixWords.length * 2));
        words.set(b.prefixWords.subarray(0, this.prefixWordsUsed));
        b.prefixWords = words;
      }
      b.prefixWords.set(trajectory.prefixes, this.prefixWordsUsed);
      this.prefixWordsUsed = needed;
    }
    b.prefixStarts[row + 1] = this.prefixWordsUsed;
  }

  add(candidate: Candidate): void {
    const b = this.batch;
    if (b.count === this.capacity) this.grow();
    const row = b.count++;
    b.fileIndex[row] = candidate.fileIndex;
    b.line[row] = candidate.line;
    b.offset[row] = candidate.offset;
    b.status[row] = STATUSES.indexOf(candidate.status);
    b.truncationUnchecked[row] = candidate.truncationUnchecked === true ? 1 : 0;
    b.timestamp[row] = candidate.timestamp;
    b.moduleIds[row] = candidate.moduleId;
    if (candidate.moduleId !== 0 && !b.moduleNames.has(candidate.moduleId)) b.moduleNames.set(candidate.moduleId, candidate.moduleName);
    if (candidate.key !== null) b.keys.set(candidate.key, row * 4);
    if (!uuidWords(candidate.callId, b.callIds, row * 4)) b.otherCallIds.set(row, candidate.callId);
    if (candidate.verdict !== null) b.verdicts.set(row, candidate.verdict);
    if (candidate.flags !== null) b.flags.set(row, candidate.flags);
    this.addTrajectory(row, candidate.trajectory);
    if (candidate.toolCalls !== null) b.toolCalls.set(row, candidate.toolCalls);
    if (candidate.signature !== null) b.signatures.set(row, candidate.signature);
    if (candidate.pairFacts != null) b.pairFacts.set(row, candidate.pairFacts);
  }

  addDamaged(line: DamagedLine): void {
    this.batch.damaged.push({ before: this.batch.count, line });
  }

  /** The batch, its columns cut to the rows written. */
  finish(): CandidateBatch {
    const b = this.batch;
    const n = b.count;
    return {
      ...b,
      fileIndex: b.fileIndex.slice(0, n),
      line: b.line.slice(0, n),
      offset: b.offset.slice(0, n),
      status: b.status.slice(0, n),
      truncationUnchecked: b.truncationUnchecked.slice(0, n),
      timestamp: b.timestamp.slice(0, n),
      moduleIds: b.moduleIds.slice(0, n),
      keys: b.keys.slice(0, n * 4),
      callIds: b.callIds.slice(0, n * 4),
      trajectoryInputs: b.trajectoryInputs.slice(0, n),
      conversations: b.conversations.slice(0, n * 4),
      prefixStarts: b.prefixStarts.slice(0, n + 1),
      prefixWords: b.prefixWords.slice(0, this.prefixWordsUsed),
    };
  }
}

/**
 * One row of a batch seen as a Candidate. The same object serves every row, so a consumer
 * must copy what it keeps (the stages copy into their own columns). The call_id is only
 * turned into text when asked; `callIdWords` gives its uuid bits directly.
 */
class CandidateView implements Candidate {
  row = 0;
  private readonly keyWords = new Uint32Array(4);
  /** The row's trajectory digests, as views of the batch's columns. */
  private readonly digests: TrajectoryDigests = { conversation: new Uint32Array(0), inputs: 0, prefixes: new Uint32Array(0) };

  constructor(private readonly batch: CandidateBatch) {}

  get callId(): string {
    return this.batch.otherCallIds.get(this.row) ?? uuidText(this.batch.callIds, this.row * 4);
  }
  /** The call_id as 4 words, or null when it is no uuid. */
  get callIdWords(): Uint32Array | null {
    return this.batch.otherCallIds.size > 0 && this.batch.otherCallIds.has(this.row) ? null : this.batch.callIds.subarray(this.row * 4, this.row * 4 + 4);
  }
  /** Null exactly when selection drops the record, as `candidateOf` makes it. */
  get key(): Uint32Array | null {
    return this.batch.verdicts.size > 0 && this.batch.verdicts.has(this.row) ? null : this.keyWords;
  }
  get line(): number {
    return this.batch.line[this.row];
  }
  get offset(): number {
    return this.batch.offset[this.row];
  }
  get fileIndex(): number {
    return this.batch.fileIndex[this.row];
  }
  get status(): Status {
    return STATUSES[this.batch.status[this.row]];
  }
  get timestamp(): number {
    return this.batch.timestamp[this.row];
  }
  get moduleId(): number {
    return this.batch.moduleIds[this.row];
  }
  get moduleName(): string {
    return this.batch.moduleNames.get(this.moduleId) ?? '';
  }
  get verdict(): Candidate['verdict'] {
    return this.batch.verdicts.get(this.row) ?? null;
  }
  get truncationUnchecked(): boolean {
    return this.batch.truncationUnchecked[this.row] === 1;
  }
  get flags(): Candidate['flags'] {
    return this.batch.flags.size > 0 ? (this.batch.flags.get(this.row) ?? null) : null;
  }
  get trajectory(): TrajectoryDigests | null {
    const b = this.batch;
    const inputs = b.trajectoryInputs[this.row];
    if (inputs === -1) return null;
    this.digests.inputs = inputs;
    this.digests.conversation = b.conversations.subarray(this.row * 4, this.row * 4 + 4);
    this.digests.prefixes = b.prefixWords.subarray(b.prefixStarts[this.row], b.prefixStarts[this.row + 1]);
    return this.digests;
  }
  get toolCalls(): string[] | null {
    return this.batch.toolCalls.get(this.row) ?? null;
  }
  get signature(): Uint32Array | null {
    return this.batch.signatures.get(this.row) ?? null;
  }
  get pairFacts(): PairFacts | null {
    return this.batch.pairFacts.size > 0 ? (this.batch.pairFacts.get(this.row) ?? null) : null;
  }

  moveTo(row: number): void {
    this.row = row;
    const keys = this.batch.keys;
    const at = row * 4;
    this.keyWords[0] = keys[at];
    this.keyWords[1] = keys[at + 1];
    this.keyWords[2] = keys[at + 2];
    this.keyWords[3] = keys[at + 3];
  }
}

/** The batch's damaged lines and candidates in line order; each candidate is the same view, moved on. */
export function* readCandidateBatch(batch: CandidateBatch): Generator<{ damaged: DamagedLine } | Candidate> {
  const view = new CandidateView(batch);
  let d = 0;
  for (let row = 0; row < batch.count; row++) {
    while (d < batch.damaged.length && batch.damaged[d].before === row) yield { damaged: batch.damaged[d++].line };
    view.moveTo(row);
    yield view;
  }
  while (d < batch.damaged.length) yield { damaged: batch.damaged[d++].line };
}
