/**
 * The curation plan, shared by `dedupe`, `filter`, `export` and the browser: one pass over
 * every record through the stages, in this order:
 *
 *   status/filter (selection) → quality (truncated, broken, empty, repetition, contaminated;
 *     refusal and identity flag: quality/) → the target's verdict (export: not representable,
 *     secret with --drop-on, too long, template error; `targetVerdict`)
 *     → excluded (--exclude) → not_in_keep_list (--keep-list) → seen (--against)
 *     → dedupe → prefix (collapse) → near-duplicates (--near-duplicates, near-duplicates.ts)
 *
 * Why this order: every stage that compares records keeps one of them and names it as `kept`,
 * so each such stage sees only the survivors of the stages before it and names only a
 * survivor of its own. A chain of `kept` then always ends at a record in the output, and
 * never loops (docs/curation.md, "The order of the stages"):
 * - Everything a record decides alone comes first, the target's verdict too: a record the
 *   target refuses must not be the one others gave way to. The verdict is the example the
 *   target would make of the record, made where the record is read (export/project-share.ts
 *   `targetVerdict`), so an export plans once.
 * - Dedupe, then collapse over dedupe's winners only: a step gives way to the winner with the
 *   most inputs holding its conversation, which holds no longer one itself (it would hold the
 *   step too, with more inputs): one survivor, no chain to resolve.
 * - Near-duplicates last, over collapse's survivors only: a step is never compared with the
 *   later step of its own run that holds it (nearly the same text by construction), and a
 *   cluster's kept record is itself kept.
 *
 * Drops decided by a record alone are reported as they happen; a duplicate is reported
 * once its group's final winner is known (in the order it lost), and prefixes and near
 * duplicates once every winner is (in file order). What the comparing stages know of each
 * record is a row on disk, partitioned by key hash, resolved one partition at a time
 * (`PlanTables`; docs/performance.md, "The plan on disk"): memory does not follow the tree.
 */
import { randomUUID } from 'node:crypto';
import { idFormOf, type IdList } from './id-list.js';
import { UserError } from '../errors.js';
import { plural } from '../format.js';
import type { DamagedLine } from '../record.js';
import { runOverFiles } from '../parallel/run-shares.js';
import { fileSizes } from '../parallel/units.js';
import type { Candidate, CandidateOptions, TargetVerdictStage } from './candidate.js';
import { readCandidateBatch } from './candidate-batch.js';
import type { Discovery, TraceFile } from '../sources/discover.js';
import { collapseJoin, CONVERSATION, DigestRow, GaveWayRow, HolderRow } from './collapse.js';
import { FLAGGED, KeyRow, LossRow, OK, partitionOf, planPartitions, resolvePartition, rowFloat, rowStanding, setRowFloat, TRAJECTORY, type KeepRule } from './dedupe.js';
import { CallIdColumn, Column } from './columns.js';
import { uuidText, uuidWords } from '../uuid-words.js';
import type { KeyIndex } from './key-index.js';
import { SIGNATURE_WORDS } from './minhash.js';
import { nearDuplicateClusters, SignatureStore, type NearDuplicates } from './near-duplicates.js';
import { mergesAcrossModules, type KeyKind } from './keys.js';
import type { Selection } from './selection.js';
import { PartitionedSpill, RunTempDir, SpillFile } from './spill.js';
import { KeptLinesFile } from './kept-lines.js';
import { HeldKeys } from './kept-keys.js';
import { pauseForTest } from '../output/test-pause.js';
import { metOnKeepList, readKeepList } from './keep-list.js';
import { JOBS } from '../parallel/jobs.js';
import { addCount } from '../own.js';
import { QUALITY_FILTERS, type QualityMode, type QualitySettings } from './quality/index.js';
import { PairFinder, type Pair, type PairSettings, type Unpaired } from './pairs.js';

export const DROP_REASONS = ['status', 'filter', 'text_too_long', 'excluded', 'not_in_keep_list', 'seen', 'duplicate', 'prefix', 'damaged'] as const;

export interface Drop {
  call_id?: string;
  file: string;
  line: number;
  reason: string;
  /** The call_id a duplicate, near-duplicate or prefix gave way to. */
  kept?: string;
  /** A near-duplicate's estimated Jaccard similarity to the record it gave way to. */
  similarity?: number;
  detail?: string;
  /** True for a record a flagging quality stage (refusal, identity) found something in: listed, and kept. */
  flagged?: true;
}

/** What the quality stages did in a run: how each ran, what they flagged, and contamination per evaluation file. */
export interface QualityReport {
  modes: Record<string, QualityMode>;
  max_completion_tokens: number | null;
  /** Records a flagging stage found something in, by reason (listed and kept, unless their key kept another). */
  flagged: Record<string, number>;
  /** Ok records the truncated stage could not check: they record no stop reason, and no token limit (recorded or --max-completion-tokens) was there to compare with. */
  truncated_not_checked: number;
  /** Flagged records dropped as a `duplicate` because their key held an ok record no quality stage named, which is kept. */
  flagged_gave_way: number;
  /** Per evaluation file (`--decontaminate`): items read, items too short to hold an n-gram, records dropped, items they matched, and the first overlaps. */
  evaluation_files: { file: string; items: number; items_under_8_words: number; contaminated_records: number; items_matched: number; overlaps: { call_id: string; line: number; ngram: string }[] }[];
}

/** Overlaps listed per evaluation file in the report. */
const OVERLAPS_LISTED = 5;

export interface CurationOptions {
  selection: Selection;
  /** False for `filter`: every selected record is kept, duplicates included. */
  dedupe: boolean;
  key: KeyKind;
  keep: KeepRule;
  trajectories: 'all' | 'last';
  /** call_ids to drop (`--exclude`); the run notes which it met. */
  exclude: IdList | null;
  /** Keys of an earlier output: records with these keys were handled before. */
  seen: KeyIndex | null;
  /** Estimated Jaccard similarity at or above which records are near-duplicates, or null (off). */
  nearDuplicates?: number | null;
  /** `--keep-list FILE`: only the call_ids it lists are kept; read when the plan starts. */
  keepListFile?: string | null;
  /** The quality stages, or null (none). */
  quality?: QualitySettings | null;
  /** The export's target's verdict, a stage each record decides alone (candidate.ts), or null. */
  targetVerdict?: TargetVerdictStage | null;
  /**
   * Preference pairs (pairs.ts) instead of dedupe, collapse and near-duplicates: records of one
   * prompt are paired by the signals they hold, and the records of the pairs are what is kept.
   */
  pairs?: PairSettings | null;
}

export interface CurationPlan {
  files: readonly TraceFile[];
  recordsRead: number;
  damagedLines: number;
  kept: number;
  dropped: Record<string, number>;
  /** Per file index, the sorted line numbers of the kept records (read from `keptFile` when asked for). */
  keptLines: ReadonlyMap<number, Int32Array>;
  /** Per file index, the byte offsets of the same lines (in the same order). */
  keptOffsets: ReadonlyMap<number, Float64Array>;
  /** Where the kept lines wait: disposed by the plan's user once done with them. */
  keptFile: { dispose(): void };
  /**
   * Keys of the records handled (kept, or given way to a longer trajectory) and the `seen` ones,
   * for a later `--against`: in a temporary file (never all in memory), read once by `writeKeptKeys`.
   */
  keptKeys: HeldKeys;
  /** Bytes the plan's indexes held at most at once (the largest partition's, and the bitsets by arrival), for the benchmark. */
  indexBytes: number;
  uniqueKeys: number;
  /** With a key that ignores program and module: how many duplicates gave way to a record of another module; else null. */
  mergedAcrossModules: number | null;
  /** The --keep-list, checked off: which listed ids matched no record. */
  keepList: IdList | null;
  /** Null when no quality stage ran. */
  quality: QualityReport | null;
  /** With `pairs`: the pairs found, in the order of their chosen records; else null. */
  pairs?: Pair[] | null;
  /** With `pairs`: records met that --scores scores. */
  scoredRecords?: number;
  /** Records the target's verdict dropped, by reason (the export counts them with the target's own drops). */
  refusedByTarget: Record<string, number>;
  /** Per reason of the target's, the option that avoids it, where its drops named one. */
  refusalFixes: Record<string, string>;
  /** Whether the target refused a later step of an agent run one of whose earlier steps was read: that run is exported up to an earlier step. */
  refusedLaterStep: boolean;
}

export type DropSink = (drop: Drop) => void;

/** The records handed to an export's target: those the plan kept, and those its verdict refused. */
export function handedToTarget(plan: Pick<CurationPlan, 'kept' | 'refusedByTarget'>): number {
  return plan.kept + Object.values(plan.refusedByTarget).reduce((sum, n) => sum + n, 0);
}

/**
 * Whether the target refused a later step of an agent run one of whose earlier steps reached
 * the comparing stages: a run then ends, in the output, at an earlier step than it was
 * recorded to (a target such as NeMo Customizer says so). A record refused alone, whose
 * prompt holds turns no record read answers, has no run to fall back on. Steps come in any
 * order across files, so both sides are held until one meets the other: digests as text, at
 * most HELD of each (the answer can only be missed past that, never wrongly given).
 */
class RefusedStepRuns {
  found = false;
  private readonly earlierOfRefused = new Set<string>();
  private readonly conversationsRead = new Set<string>();
  private static readonly HELD = 1 << 16;

  private static text(words: ArrayLike<number>, at: number): string {
    let text = '';
    for (let i = at; i < at + 4; i++) text += (words[i] >>> 0).toString(36) + ',';
    return text;
  }

  /** A refused later step: the digests of its earlier steps. */
  refused(earlierSteps: ArrayLike<number>): void {
    for (let at = 0; at < earlierSteps.length && !this.found; at += 4) {
      const digest = RefusedStepRuns.text(earlierSteps, at);
      if (this.conversationsRead.has(digest)) this.meet();
      else if (this.earlierOfRefused.size < RefusedStepRuns.HELD) this.earlierOfRefused.add(digest);
    }
  }

  /** A step that reached the comparing stages: its conversation's digest. */
  read(conversation: ArrayLike<number>): void {
    if (this.found) return;
    const digest = RefusedStepRuns.text(conversation, 0);
    if (this.earlierOfRefused.has(digest)) this.meet();
    else if (this.conversationsRead.size < RefusedStepRuns.HELD) this.conversationsRead.add(digest);
  }

  private meet(): void {
    this.found = true;
    this.earlierOfRefused.clear();
    this.conversationsRead.clear();
  }
}

/** What a plan keeps: per file index, the sorted line numbers, and their byte offsets in the same order. */
export type KeptLines = Pick<CurationPlan, 'keptLines' | 'keptOffsets'>;


/** A winner that gives way, set aside in file order to be reported after the duplicates. */
const GivenWayDrop = { seq: 0, fileIndex: 1, line: 2, group: 3, callId: 4, holderSeq: 8, holderCallId: 10, words: 14 } as const;

/** `GivenWayDrop.group` of a winner given way to a longer run of its trajectory: it has no near-duplicate group. */
const PREFIX_GROUP = 0xffffffff;

/** Rows of a partition's losses buffered while its winners are resolved: 32 KB. */
const PENDING_LOSS_ROWS = 512;

/** A winner met in file order by `PlanTables.winners`: its row, and the holder it gives way to (a gave-way row), if any. */
interface WinnerAt {
  row: Uint32Array;
  at: number;
  gaveWay: Uint32Array | null;
  gaveWayAt: number;
}

/**
 * The plan's per-record state, on disk in one run folder: rows of the records that reach
 * dedupe by key partition, trajectory digests by digest partition, and, once keys are resolved,
 * the winners and the losses by range of arrival.
 */
class PlanTables {
  readonly dir = new RunTempDir();
  readonly keyRows: PartitionedSpill;
  readonly digestRows: PartitionedSpill | null;
  /** Final winners, by range of their arrival (`rangeOf`). */
  winners: PartitionedSpill | null = null;
  /** Duplicates' losses, by key partition, each partition in arrival order. */
  losses: PartitionedSpill | null = null;
  /** Winners that give way to a longer run of their trajectory, by range of arrival. */
  gaveWay: PartitionedSpill | null = null;
  private rangeRows = 1;
  /** The winners that give way, in file order (`GivenWayDrop`). */
  readonly givenWay: SpillFile;

  constructor(
    readonly partitions: number,
    readonly rowWords: number,
    collapse: boolean,
  ) {
    this.keyRows = new PartitionedSpill(this.dir, 'keys', rowWords, partitions);
    this.digestRows = collapse ? new PartitionedSpill(this.dir, 'digests', DigestRow.words, partitions) : null;
    this.givenWay = new SpillFile(GivenWayDrop.words, { dir: this.dir, name: 'given-way.bin' }, PENDING_LOSS_ROWS);
  }

  /** Opens the resolved tables, for `arrivals` records in all. */
  startResolving(arrivals: number): void {
    this.rangeRows = Math.max(1, Math.ceil(arrivals / this.partitions));
    this.winners = new PartitionedSpill(this.dir, 'winners', this.rowWords, this.partitions);
    this.losses = new PartitionedSpill(this.dir, 'losses', LossRow.words, this.partitions);
    if (this.digestRows !== null) this.gaveWay = new PartitionedSpill(this.dir, 'gave-way', GaveWayRow.words, this.partitions);
  }

  /** The range of arrivals `seq` is in: ranges read in order give the winners in file order. */
  rangeOf(seq: number): number {
    return Math.floor(seq / this.rangeRows);
  }

  /** Rows of a range, sorted by their arrival (word `seqWord`): a range's rows come from every key partition. */
  private sortedRange(table: PartitionedSpill, range: number, seqWord: number): { rows: Uint32Array; order: Int32Array } {
    const width = table.width;
    const rows = new Uint32Array(table.rows(range) * width);
    let count = 0;
    for (const row of table.read(range)) rows.set(row, count++ * width);
    const order = new Int32Array(count);
    // Arrival and row number in one exact float (seq < 2^32, rows < 2^21), sorted natively: a comparator was 3x slower.
    const spread = 2 ** Math.ceil(Math.log2(Math.max(2, count)));
    if (spread <= 2 ** 21) {
      const sorted = new Float64Array(count);
      for (let i = 0; i < count; i++) sorted[i] = rows[i * width + seqWord] * spread + i;
      sorted.sort();
      for (let i = 0; i < count; i++) order[i] = sorted[i] % spread;
    } else {
      for (let i = 0; i < count; i++) order[i] = i;
      order.sort((a, b) => rows[a * width + seqWord] - rows[b * width + seqWord]);
    }
    return { rows, order };
  }

  /** Every final winner in file order (arrival), with the holder it gives way to; one range in memory at a time. */
  *winnersInOrder(): Generator<WinnerAt> {
    const winners = this.winners!;
    const at: WinnerAt = { row: new Uint32Array(0), at: 0, gaveWay: null, gaveWayAt: 0 };
    for (let range = 0; range < winners.partitions; range++) {
      const { rows, order } = this.sortedRange(winners, range, KeyRow.seq);
      const gave = this.gaveWay === null ? null : this.sortedRange(this.gaveWay, range, GaveWayRow.seq);
      let next = 0;
      at.row = rows;
      for (const index of order) {
        const base = index * winners.width;
        const seq = rows[base + KeyRow.seq];
        at.at = base;
        at.gaveWay = null;
        if (gave !== null) {
          while (next < gave.order.length && gave.rows[gave.order[next] * GaveWayRow.words] < seq) next++;
          if (next < gave.order.length && gave.rows[gave.order[next] * GaveWayRow.words] === seq) {
            at.gaveWay = gave.rows;
            at.gaveWayAt = gave.order[next] * GaveWayRow.words;
          }
        }
        yield at;
      }
    }
  }

  /** The losses of every partition merged in the order they happened (by arrival): a heap of one row per partition. */
  *lossesInOrder(): Generator<Uint32Array> {
    const losses = this.losses!;
    const readers: Iterator<Uint32Array>[] = [];
    const current: Uint32Array[] = [];
    const heap: number[] = [];
    const less = (a: number, b: number): boolean => current[a][LossRow.seq] < current[b][LossRow.seq];
    const down = (i: number): void => {
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heap.length && less(heap[l], heap[m])) m = l;
        if (r < heap.length && less(heap[r], heap[m])) m = r;
        if (m === i) return;
        [heap[i], heap[m]] = [heap[m], heap[i]];
        i = m;
      }
    };
    for (let p = 0; p < losses.partitions; p++) {
      readers.push(losses.read(p)[Symbol.iterator]());
      const first = readers[p].next();
      current.push(first.done === true ? new Uint32Array(0) : first.value);
      if (first.done !== true) heap.push(p);
    }
    for (let i = (heap.length >> 1) - 1; i >= 0; i--) down(i);
    while (heap.length > 0) {
      const p = heap[0];
      yield current[p];
      const next = readers[p].next();
      if (next.done === true) {
        heap[0] = heap[heap.length - 1];
        heap.pop();
      } else current[p] = next.value;
      if (heap.length > 0) down(0);
    }
  }

  dispose(): void {
    for (const table of [this.keyRows, this.digestRows, this.winners, this.losses, this.gaveWay, this.givenWay]) table?.dispose();
    this.dir.remove();
  }
}

export class Curation {
  private readonly keep: KeepRule;
  private readonly collapse: boolean;
  /** Whether the winner's module is compared with each duplicate's (a key that ignores program and module). */
  private readonly countsAcrossModules: boolean;
  private readonly tables: PlanTables;
  /** Arrivals at dedupe so far: each record's `KeyRow.seq`. */
  private arrivals = 0;
  private readonly row: Uint32Array;
  private readonly digestRow = new Uint32Array(DigestRow.words);
  /** Final winners per file index, counted as keys are resolved. */
  private readonly winnersByFile: Int32Array;
  /** call_ids that are no uuid, by arrival (rare: a row holds a uuid's 16 bytes). */
  private readonly otherIds = new Map<number, string>();
  private readonly counts: Record<string, number> = Object.fromEntries(DROP_REASONS.map((r) => [r, 0]));
  private readonly refusedByTarget: Record<string, number> = {};
  private readonly refusalFixes: Record<string, string> = {};
  private readonly refusedRuns = new RefusedStepRuns();
  /** Whether --near-duplicates is on: each row then carries the record's signature. */
  private readonly near: boolean;
  private recordsRead = 0;
  /** "program/module" of each module id met, to name the module a duplicate gave way to. */
  private readonly moduleNames = new Map<number, string>();
  private readonly quality: QualityReport | null;
  /** The first record's call_id: what the records' ids look like, for a list none of whose ids met one. */
  private sampleCallId: string | null = null;
  /** Records read whose call_id --scores scores, whatever a stage did with them. */
  private scoredRead = 0;
  /** Per evaluation file, the items its contaminated records matched. */
  private readonly itemsMatched: Set<number>[] = [];

  readonly candidateOptions: CandidateOptions;
  /** With preference pairs, the stage that stands where dedupe does. */
  private readonly pairFinder: PairFinder | null;

  constructor(
    private readonly files: readonly TraceFile[],
    private readonly options: CurationOptions,
    private readonly onDrop: DropSink,
    /** Sees the tool-calling assistant turns of every selected ok record (export infers tools from them). */
    private readonly onToolCalls: ((facts: string[]) => void) | null = null,
    private readonly keepList: IdList | null = null,
    partitions = planPartitions(fileSizes(files).reduce((sum, size) => sum + size, 0)),
  ) {
    this.keep = options.keep;
    this.collapse = options.trajectories === 'last';
    this.countsAcrossModules = options.dedupe && mergesAcrossModules(options.key);
    this.near = options.dedupe && options.nearDuplicates != null;
    if (this.near) this.counts.near_duplicate = 0;
    this.row = new Uint32Array(KeyRow.words + (this.near ? SIGNATURE_WORDS : 0));
    this.tables = new PlanTables(partitions, this.row.length, this.collapse);
    this.winnersByFile = new Int32Array(files.length);
    this.pairFinder = options.pairs != null ? new PairFinder(this.tables.dir, partitions, options.pairs) : null;
    if (this.pairFinder !== null) this.counts.no_pair = 0;
    const quality = options.quality ?? null;
    this.quality = quality === null ? null : this.qualityReport(quality);
    this.candidateOptions = {
      selection: options.selection,
      key: options.key,
      collapse: this.collapse,
      toolCalls: onToolCalls !== null,
      nearDuplicates: this.near,
      // --exclude, --keep-list and --against drop records after this: each record's turns must come.
      toolCallsOnce: options.exclude === null && keepList === null && options.seen === null ? randomUUID() : null,
      targetVerdict: options.targetVerdict ?? null,
      quality,
      pairs: this.pairFinder !== null,
    };
  }

  private qualityReport(quality: QualitySettings): QualityReport {
    for (const name of QUALITY_FILTERS) if (quality.modes[name] === 'drop') this.counts[name] = 0;
    const evals = quality.evals;
    if (evals !== null) this.counts.contaminated = 0;
    for (let i = 0; i < (evals?.files.length ?? 0); i++) this.itemsMatched.push(new Set());
    return {
      modes: { ...quality.modes, contaminated: evals === null ? 'off' : 'drop' },
      max_completion_tokens: quality.maxCompletionTokens,
      flagged: Object.fromEntries(QUALITY_FILTERS.filter((name) => quality.modes[name] === 'flag').map((name) => [name, 0])),
      flagged_gave_way: 0,
      truncated_not_checked: 0,
      evaluation_files: (evals?.files ?? []).map((file, i) => ({
        file,
        items: evals!.items[i],
        items_under_8_words: evals!.shortItems[i],
        contaminated_records: 0,
        items_matched: 0,
        overlaps: [],
      })),
    };
  }

  /** Counts a contaminated record against its evaluation file. */
  private noteContamination(candidate: Candidate): void {
    const match = candidate.verdict?.match;
    if (match === undefined || this.quality === null) return;
    const file = this.quality.evaluation_files[match.file];
    file.contaminated_records++;
    this.itemsMatched[match.file].add(match.line);
    file.items_matched = this.itemsMatched[match.file].size;
    if (file.overlaps.length < OVERLAPS_LISTED) file.overlaps.push({ call_id: candidate.callId, line: match.line, ngram: match.ngram });
  }

  /** Lists what the flagging stages found in a record that goes on to dedupe. */
  private reportFlags(candidate: Candidate): void {
    for (const flag of candidate.flags!) {
      addCount(this.quality!.flagged, flag.reason);
      this.onDrop({ call_id: candidate.callId, file: this.files[candidate.fileIndex].display, line: candidate.line, reason: flag.reason, flagged: true, detail: flag.detail });
    }
  }

  private drop(drop: Drop): void {
    addCount(this.counts, drop.reason);
    this.onDrop(drop);
  }

  /** A drop decided by the record alone; its place is only built then, since most records are kept. */
  private dropCandidate(candidate: Candidate, reason: string, detail?: string): void {
    this.drop(this.candidateDrop(candidate, reason, detail));
  }

  private candidateDrop(candidate: Candidate, reason: string, detail: string | undefined): Drop {
    const drop: Drop = { call_id: candidate.callId, file: this.files[candidate.fileIndex].display, line: candidate.line, reason };
    if (detail !== undefined) drop.detail = detail;
    return drop;
  }

  /** The target's verdict: counted apart, with the target's own drops, whose reasons these are. */
  private refuseCandidate(candidate: Candidate, verdict: NonNullable<Candidate['verdict']>): void {
    addCount(this.refusedByTarget, verdict.reason);
    if (verdict.fix !== undefined) this.refusalFixes[verdict.reason] ??= verdict.fix;
    if (verdict.earlierSteps !== undefined) this.refusedRuns.refused(verdict.earlierSteps);
    this.onDrop(this.candidateDrop(candidate, verdict.reason, verdict.detail === '' ? undefined : verdict.detail));
  }

  addDamaged(line: DamagedLine): void {
    this.drop({ file: line.file, line: line.line, reason: 'damaged', detail: line.reason });
  }

  /** The stages that compare records: exclusion, --against, dedupe and collapse. Candidates come in file order. */
  addCandidate(candidate: Candidate): void {
    this.recordsRead++;
    if (this.recordsRead === 1) this.sampleCallId = candidate.callId;
    if (this.options.pairs?.scores?.byCallId.has(candidate.callId) === true) this.scoredRead++;
    if (candidate.truncationUnchecked === true && this.quality !== null) this.quality.truncated_not_checked++;

    // Met before the verdict: a listed id (--exclude, --keep-list) that the selection drops anyway was still found.
    const excluded = this.options.exclude?.meet(candidate.callId) === true;
    const listed = this.keepList === null ? true : metOnKeepList(this.keepList, candidate.callId) !== null;
    const verdict = candidate.verdict;
    if (verdict !== null) {
      if (verdict.byTarget === true) return this.refuseCandidate(candidate, verdict);
      if (verdict.reason === 'contaminated') this.noteContamination(candidate);
      return this.dropCandidate(candidate, verdict.reason, verdict.detail);
    }
    if (excluded) return this.dropCandidate(candidate, 'excluded');
    if (!listed) return this.dropCandidate(candidate, 'not_in_keep_list');
    const key = candidate.key!;
    if (this.options.seen !== null && this.options.seen.get(key) !== -1) return this.dropCandidate(candidate, 'seen');
    if (this.pairFinder !== null) {
      if (candidate.toolCalls !== null) this.onToolCalls?.(candidate.toolCalls);
      this.pairFinder.add(candidate, key, candidate.pairFacts ?? null);
      return;
    }
    if (candidate.flags !== null) this.reportFlags(candidate);
    if (candidate.toolCalls !== null) this.onToolCalls?.(candidate.toolCalls);
    if (candidate.moduleId !== 0 && !this.moduleNames.has(candidate.moduleId)) this.moduleNames.set(candidate.moduleId, candidate.moduleName);
    const seq = this.arrivals++;
    const row = this.row;
    row.set(key, KeyRow.key);
    row[KeyRow.seq] = seq;
    row[KeyRow.fileIndex] = candidate.fileIndex;
    row[KeyRow.line] = candidate.line;
    const trajectory = candidate.trajectory;
    row[KeyRow.flags] = (candidate.status === 'ok' ? OK : 0) | (trajectory !== null ? TRAJECTORY : 0) | (candidate.flags !== null && candidate.flags.length > 0 ? FLAGGED : 0);
    setRowFloat(row, KeyRow.offset, candidate.offset);
    setRowFloat(row, KeyRow.timestamp, candidate.timestamp);
    row[KeyRow.moduleId] = candidate.moduleId;
    const words = candidate.callIdWords;
    if (words != null) row.set(words, KeyRow.callId);
    else if (!uuidWords(candidate.callId, row, KeyRow.callId)) {
      row.fill(0, KeyRow.callId, KeyRow.callId + 4);
      this.otherIds.set(seq, candidate.callId);
    }
    if (this.near) {
      if (candidate.signature !== null) row.set(candidate.signature, KeyRow.words);
      else row.fill(0, KeyRow.words);
    }
    this.tables.keyRows.append(partitionOf(key, 0, this.tables.partitions), row);
    if (trajectory !== null && this.options.targetVerdict != null) this.refusedRuns.read(trajectory.conversation);
    const digests = this.tables.digestRows;
    if (digests !== null && trajectory !== null) {
      const digestRow = this.digestRow;
      digestRow[DigestRow.seq] = seq;
      digestRow[DigestRow.inputs] = CONVERSATION;
      for (let i = 0; i < 4; i++) digestRow[DigestRow.digest + i] = trajectory.conversation[i];
      digestRow.fill(0, DigestRow.callId);
      digests.append(partitionOf(digestRow, DigestRow.digest, digests.partitions), digestRow);
      digestRow[DigestRow.inputs] = trajectory.inputs;
      for (let i = 0; i < 4; i++) digestRow[DigestRow.callId + i] = row[KeyRow.callId + i];
      const prefixes = trajectory.prefixes;
      for (let at = 0; at < prefixes.length; at += 4) {
        for (let i = 0; i < 4; i++) digestRow[DigestRow.digest + i] = prefixes[at + i];
        digests.append(partitionOf(digestRow, DigestRow.digest, digests.partitions), digestRow);
      }
    }
  }

  /** The call_id in words `at` of `row` of the record that arrived `seq`-th. */
  private callIdOf(row: Uint32Array, at: number, seq: number): string {
    return (this.otherIds.size > 0 ? this.otherIds.get(seq) : undefined) ?? uuidText(row, at);
  }

  /**
   * Resolves duplicates and prefixes, reports their drops, and returns what is kept. What is
   * kept is known before the drops are reported, and handed to `whenKept` then: the kept lines
   * can be copied while the drops are written. The drops keep their order (duplicates first).
   */
  finish(whenKept: ((kept: KeptLines) => void) | null = null): CurationPlan {
    try {
      return this.pairFinder !== null ? this.resolvePairs(this.pairFinder, whenKept) : this.resolve(whenKept);
    } finally {
      this.pairFinder?.dispose();
      this.tables.dispose();
    }
  }

  /**
   * The signals none of whose ids met a record read (--exclude, --scores): each would change
   * nothing, silently, so the run stops and says what the records' ids look like. A --keep-list
   * that met none is said on stderr: the run then writes nothing, and exits 1 for that.
   */
  signalsMeetingNothing(): string[] {
    if (this.recordsRead === 0) return [];
    const lines: string[] = [];
    const form = idFormOf(this.sampleCallId);
    const none = (flag: string, listed: number, first: string | undefined, effect: string) =>
      `${flag}: none of its ${plural(listed, 'call_id')} is the call_id of any of the ${plural(this.recordsRead, 'record')} read (${effect}); ` +
      `the records' call_ids look like ${form}${first !== undefined ? `, the list's like ${JSON.stringify(first)}` : ''}: list the ids as the records carry them, or name the tree they came from`;
    const exclude = this.options.exclude;
    if (exclude != null && exclude.size > 0 && exclude.report().met === 0) lines.push(none('--exclude', exclude.size, exclude.notFound()[0]?.id, 'it would exclude nothing'));
    // A host of a sharded run may hold none of the list's records: its export writes nothing and says so (exit 1), this line saying why.
    const list = this.keepList;
    if (list !== null && list.size > 0 && list.report().met === 0) process.stderr.write(`traces: ${none('--keep-list', list.size, list.notFound()[0]?.id, 'every record is dropped as not_in_keep_list')}\n`);
    const scores = this.options.pairs?.scores;
    if (scores != null && this.scoredRead === 0) {
      lines.push(none(`--scores ${scores.file}`, scores.byCallId.size, scores.byCallId.keys().next().value, 'no score would pair an answer'));
    }
    return lines;
  }

  /** Removes the plan's files (a run that stops before `finish`). */
  dispose(): void {
    this.pairFinder?.dispose();
    this.tables.dispose();
  }

  /**
   * Winners, one key partition at a time (`resolvePartition`), each to its range of arrival;
   * the losses of each partition, naming their final winner; the kept keys, to a file.
   */
  private resolveKeys(keptKeys: HeldKeys, standing: Uint8Array): { groups: number; peakBytes: number } {
    const tables = this.tables;
    const { keyRows } = tables;
    const winners = tables.winners!;
    const losses = tables.losses!;
    let groups = 0;
    let peakBytes = 0;
    for (let partition = 0; partition < keyRows.partitions; partition++) {
      let pending: SpillFile | null = null;
      const resolved = resolvePartition(
        keyRows.read(partition),
        keyRows.rows(partition),
        keyRows.width,
        this.keep,
        !this.options.dedupe,
        (winner) => {
          const seq = winner[KeyRow.seq];
          this.winnersByFile[winner[KeyRow.fileIndex]]++;
          winners.append(tables.rangeOf(seq), winner);
          if ((winner[KeyRow.flags] & TRAJECTORY) !== 0) standing[seq >> 3] |= 1 << (seq & 7);
        },
        () => (pending = new SpillFile(LossRow.words, { dir: tables.dir, name: `pending-losses-${partition}.bin` }, PENDING_LOSS_ROWS)),
        (loss) => losses.append(partition, loss),
      );
      (pending as SpillFile | null)?.dispose();
      keyRows.close(partition);
      for (const block of resolved.keys.keyBlocks()) keptKeys.add(block);
      this.counts.duplicate += resolved.lossCount;
      if (this.quality !== null) this.quality.flagged_gave_way += resolved.flaggedGaveWay;
      groups += resolved.groups;
      peakBytes = Math.max(peakBytes, resolved.byteSize);
    }
    return { groups, peakBytes };
  }

  /**
   * The near-duplicate clusters of the collapse's survivors (winners that give way to no longer
   * run), numbered in file order: a step given way to its run is never compared with it, so no
   * near-duplicate names a record that is itself a prefix. Columns are only made when the stage is on.
   */
  private nearDuplicates(winners: number): { near: NearDuplicates; callIds: CallIdColumn; bytes: number } {
    const signatures = new SignatureStore();
    const timestamps = new Column(Float64Array, 1, winners);
    const standings = new Column(Uint8Array, 1, winners);
    const callIds = new CallIdColumn();
    let group = 0;
    for (const { row, at, gaveWay } of this.tables.winnersInOrder()) {
      if (gaveWay !== null) continue;
      const signature = row.subarray(at + KeyRow.words, at + KeyRow.words + SIGNATURE_WORDS);
      signatures.set(group, signature.some((word) => word !== 0) ? signature : null);
      timestamps.data[group] = rowFloat(row, at + KeyRow.timestamp);
      standings.data[group] = rowStanding(row[at + KeyRow.flags]);
      callIds.set(group, this.callIdOf(row, at + KeyRow.callId, row[at + KeyRow.seq]));
      group++;
    }
    const near = nearDuplicateClusters(signatures, { groups: group, timestamps, standings }, this.keep, this.options.nearDuplicates!);
    return { near, callIds, bytes: signatures.byteSize + timestamps.byteSize + standings.byteSize + callIds.byteSize + near.byteSize };
  }

  /** The winners that do not give way, as sorted line numbers and byte offsets per file, on disk. */
  private keptByFile(near: NearDuplicates | null): KeptLinesFile {
    // Each file has room for all its winners: rows land in place whatever order the files come in.
    const keptFile = new KeptLinesFile(this.winnersByFile);
    try {
      let group = 0;
      const givenWay = this.tables.givenWay;
      const drop = new Uint32Array(GivenWayDrop.words);
      for (const { row, at, gaveWay, gaveWayAt } of this.tables.winnersInOrder()) {
        // Only the collapse's survivors are numbered: the near-duplicate stage ran on them alone.
        const similar = gaveWay === null ? (near?.keptFor(group) ?? -1) : -1;
        if (gaveWay !== null || similar !== -1) {
          // Reported after the duplicates, in this order: set aside rather than walked for again.
          drop[GivenWayDrop.seq] = row[at + KeyRow.seq];
          drop[GivenWayDrop.fileIndex] = row[at + KeyRow.fileIndex];
          drop[GivenWayDrop.line] = row[at + KeyRow.line];
          drop[GivenWayDrop.group] = gaveWay === null ? group++ : PREFIX_GROUP;
          drop.set(row.subarray(at + KeyRow.callId, at + KeyRow.callId + 4), GivenWayDrop.callId);
          if (gaveWay !== null) {
            drop[GivenWayDrop.holderSeq] = gaveWay[gaveWayAt + GaveWayRow.holderSeq];
            drop.set(gaveWay.subarray(gaveWayAt + GaveWayRow.holderCallId, gaveWayAt + GaveWayRow.holderCallId + 4), GivenWayDrop.holderCallId);
          }
          givenWay.append(drop);
          continue;
        }
        group++;
        keptFile.add(row[at + KeyRow.fileIndex], row[at + KeyRow.line], rowFloat(row, at + KeyRow.offset));
      }
      return keptFile;
    } catch (error) {
      keptFile.dispose();
      throw error;
    }
  }

  private resolve(whenKept: ((kept: KeptLines) => void) | null): CurationPlan {
    const tables = this.tables;
    const arrivals = this.arrivals;
    tables.startResolving(arrivals);
    // Final winners with trajectory digests, by arrival: the collapse join stands on these alone.
    const standing = new Uint8Array((arrivals + 7) >> 3);
    // The keys a later --against skips: every dedupe key, a trajectory step given way to its
    // longer run included (handled too), and those of --against; without dedupe, the selected records' keys.
    const keptKeys = new HeldKeys();
    let keptFile: KeptLinesFile | null = null;
    let indexBytes = standing.byteLength;
    try {
      const { groups, peakBytes } = this.resolveKeys(keptKeys, standing);
      // Records with a key of --against were dropped before dedupe: these keys are none of the above.
      if (this.options.seen !== null) for (const block of this.options.seen.keyBlocks()) keptKeys.add(block);
      indexBytes += peakBytes;
      if (tables.digestRows !== null) {
        const gaveWay = tables.gaveWay!;
        const row = new Uint32Array(GaveWayRow.words);
        indexBytes += collapseJoin(
          tables.digestRows,
          (seq) => (standing[seq >> 3] & (1 << (seq & 7))) !== 0,
          (seq, holder, at) => {
            row[GaveWayRow.seq] = seq;
            row[GaveWayRow.holderSeq] = holder[at + HolderRow.seq];
            row.set(holder.subarray(at + HolderRow.callId, at + HolderRow.callId + 4), GaveWayRow.holderCallId);
            gaveWay.append(tables.rangeOf(seq), row);
          },
        );
      }
      const near = this.near ? this.nearDuplicates(groups) : null;
      if (near !== null) indexBytes += near.bytes;
      keptFile = this.keptByFile(near?.near ?? null);
      const { lines: keptLines, offsets: keptOffsets, kept } = keptFile;
      whenKept?.({ keptLines, keptOffsets });
      const mergedAcrossModules = this.reportDuplicates();
      this.reportGivenWay(near);
      return {
        ...this.planCounts(),
        kept,
        keptLines,
        keptOffsets,
        keptFile,
        keptKeys,
        indexBytes,
        uniqueKeys: groups,
        mergedAcrossModules: this.countsAcrossModules ? mergedAcrossModules : null,
      };
    } catch (error) {
      keptKeys.dispose();
      keptFile?.dispose();
      throw error;
    }
  }

  /** What every plan reports of its run, whichever stages compared the records. */
  private planCounts(): Pick<CurationPlan, 'files' | 'recordsRead' | 'damagedLines' | 'dropped' | 'keepList' | 'quality' | 'refusedByTarget' | 'refusalFixes' | 'refusedLaterStep'> {
    const { damaged, ...dropped } = this.counts;
    const { refusedByTarget, refusalFixes } = this;
    const refusedLaterStep = this.refusedRuns.found;
    return { files: this.files, recordsRead: this.recordsRead, damagedLines: damaged, dropped, keepList: this.keepList, quality: this.quality, refusedByTarget, refusalFixes, refusedLaterStep };
  }

  /**
   * The pairs of every prompt; the records of the pairs are what is kept (in file order), and
   * every record in no pair is reported (`no_pair`, prompt by prompt) with why.
   */
  private resolvePairs(finder: PairFinder, whenKept: ((kept: KeptLines) => void) | null): CurationPlan {
    const pairs: Pair[] = [];
    // The prompts paired, and those of --against: a later --against this output skips what was paired here.
    const keptKeys = new HeldKeys();
    if (this.options.seen !== null) for (const block of this.options.seen.keyBlocks()) keptKeys.add(block);
    // Reported as each prompt is resolved (by key partition): most records are in no pair, and none waits in memory.
    finder.resolve(
      (pair) => pairs.push(pair),
      (record: Unpaired) => this.drop({ call_id: record.callId, file: this.files[record.fileIndex].display, line: record.line, reason: 'no_pair', detail: record.detail }),
      (key) => keptKeys.add(key),
    );
    const members = new Map<number, Map<number, number>>();
    for (const pair of pairs) {
      for (const side of [pair.chosen, pair.rejected]) {
        let lines = members.get(side.fileIndex);
        if (lines === undefined) members.set(side.fileIndex, (lines = new Map()));
        lines.set(side.line, side.offset);
      }
    }
    const keptLines = new Map<number, Int32Array>();
    const keptOffsets = new Map<number, Float64Array>();
    let kept = 0;
    for (const [fileIndex, lines] of members) {
      const sorted = Int32Array.from(lines.keys()).sort();
      keptLines.set(fileIndex, sorted);
      keptOffsets.set(fileIndex, Float64Array.from(sorted, (line) => lines.get(line)!));
      kept += sorted.length;
    }
    whenKept?.({ keptLines, keptOffsets });
    pairs.sort((a, b) => a.chosen.fileIndex - b.chosen.fileIndex || a.chosen.line - b.chosen.line || a.rejected.fileIndex - b.rejected.fileIndex || a.rejected.line - b.rejected.line);
    return {
      ...this.planCounts(),
      kept,
      keptLines,
      keptOffsets,
      keptFile: { dispose() {} },
      keptKeys,
      indexBytes: 0,
      uniqueKeys: 0,
      mergedAcrossModules: null,
      pairs,
      scoredRecords: finder.scored,
    };
  }

  /** Each duplicate, in the order it lost, naming its key's final winner; returns how many were merged across modules. */
  private reportDuplicates(): number {
    let mergedAcrossModules = 0;
    for (const loss of this.tables.lossesInOrder()) {
      const drop: Drop = {
        call_id: this.callIdOf(loss, LossRow.loserCallId, loss[LossRow.loserSeq]),
        file: this.files[loss[LossRow.fileIndex]].display,
        line: loss[LossRow.line],
        reason: 'duplicate',
        kept: this.callIdOf(loss, LossRow.winnerCallId, loss[LossRow.winnerSeq]),
      };
      const moduleId = loss[LossRow.moduleId] | 0;
      const winnerModule = loss[LossRow.winnerModule] | 0;
      if (this.countsAcrossModules && winnerModule !== moduleId) {
        mergedAcrossModules++;
        drop.detail = `merged across modules: ${this.moduleNames.get(moduleId)} gave way to ${this.moduleNames.get(winnerModule)}`;
      }
      this.onDrop(drop);
    }
    return mergedAcrossModules;
  }

  /** The winners that gave way to a similar one (near duplicates) or to a longer run of their trajectory, in file order. */
  private reportGivenWay(near: { near: NearDuplicates; callIds: CallIdColumn } | null): void {
    for (const given of this.tables.givenWay.read()) {
      const group = given[GivenWayDrop.group];
      const similar = group === PREFIX_GROUP ? -1 : near!.near.keptFor(group);
      const drop: Drop = {
        call_id: this.callIdOf(given, GivenWayDrop.callId, given[GivenWayDrop.seq]),
        file: this.files[given[GivenWayDrop.fileIndex]].display,
        line: given[GivenWayDrop.line],
        reason: similar !== -1 ? 'near_duplicate' : 'prefix',
        kept: similar !== -1 ? near!.callIds.get(similar) : this.callIdOf(given, GivenWayDrop.holderCallId, given[GivenWayDrop.holderSeq]),
      };
      if (similar !== -1) drop.similarity = near!.near.similarity(group);
      this.drop(drop);
    }
  }
}

/**
 * Runs the whole plan over the discovered files: the per-record half where the records are
 * read (worker threads for big trees), the comparing stages here, in file order.
 */
export async function planCuration(
  discovery: Discovery,
  options: CurationOptions,
  onDrop: DropSink,
  hooks: {
    /** Sees the tool-calling assistant turns of every selected ok record. */
    onToolCalls?: (facts: string[]) => void;
    /** Called once every record is read, before the comparing stages finish (their last, single-threaded part). */
    whenRead?: () => void;
    /** Called with what is kept as soon as it is known, before the last drops are reported. */
    whenKept?: (kept: KeptLines) => void;
  } = {},
): Promise<CurationPlan> {
  const keepList = options.keepListFile ? await readKeepList(options.keepListFile) : null;
  const curation = new Curation(discovery.files, options, onDrop, hooks.onToolCalls ?? null, keepList);
  try {
    await pauseForTest('reading');
    const results = runOverFiles(
      JOBS.curate,
      discovery,
      (share) => ({ files: discovery.files, share, options: curation.candidateOptions }),
      (result) => ({ records: result.records, bytes: result.bytes }),
    );
    for await (const result of results) {
      for (const item of readCandidateBatch(result.batch)) {
        if ('damaged' in item) curation.addDamaged(item.damaged);
        else curation.addCandidate(item);
      }
    }
  } catch (error) {
    curation.dispose();
    throw error;
  }
  const meetingNothing = curation.signalsMeetingNothing();
  if (meetingNothing.length > 0) {
    curation.dispose();
    throw new UserError(meetingNothing.join('\n'), 1);
  }
  hooks.whenRead?.();
  await pauseForTest('planned');
  return curation.finish(hooks.whenKept ?? null);
}
