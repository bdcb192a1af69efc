/**
 * The curation plan, shared by `dedupe`, `filter`, `export` and the browser: one pass over
 * every record through the stages, in this order:
 *
 *   status/filter (selection) → quality (truncated, broken, empty, repetition, contaminated;
 *     refusal and identity flag: quality/) → excluded (--exclude) → not_in_keep_list (--keep-list)
 *     → seen (--against) → dedupe → near-duplicates (--near-duplicates, near-duplicates.ts) → prefix (collapse)
 *
 * Drops decided by a record alone are reported as they happen; a duplicate is reported
 * once its group's final winner is known, and prefixes once every winner is.
 */
import { randomUUID } from 'node:crypto';
import type { IdList } from '../id-list.js';
import type { DamagedLine } from '../record.js';
import { runOverFiles } from '../parallel/run-shares.js';
import type { Candidate, CandidateOptions } from './candidate.js';
import { readCandidateBatch } from './candidate-batch.js';
import type { Discovery, TraceFile } from '../sources/discover.js';
import { TrajectoryCollapse } from './collapse.js';
import { Deduplicator, type KeepRule, type Loser } from './dedupe.js';
import { uuidText, uuidWords } from './columns.js';
import { KeyIndex } from './key-index.js';
import { nearDuplicateClusters, SignatureStore } from './near-duplicates.js';
import { mergesAcrossModules, type KeyKind } from './keys.js';
import type { Selection } from './selection.js';
import { SpillFile } from './spill.js';
import { pauseForTest } from '../output/test-pause.js';
import { readKeepList } from './keep-list.js';
import { JOBS } from '../jobs.js';
import { addCount } from '../own.js';
import { QUALITY_FILTERS, type QualityMode, type QualitySettings } from './quality/index.js';

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
  /** Kept records a flagging stage found something in, by reason. */
  flagged: Record<string, number>;
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
}

export interface CurationPlan {
  files: readonly TraceFile[];
  recordsRead: number;
  damagedLines: number;
  kept: number;
  dropped: Record<string, number>;
  /** Per file index, the sorted line numbers of the kept records. */
  keptLines: Map<number, Int32Array>;
  /** Per file index, the byte offsets of the same lines (in the same order). */
  keptOffsets: Map<number, Float64Array>;
  /** Keys of the records handled (kept, or given way to a longer trajectory) and the `seen` ones, for a later `--against`. */
  keptKeys: KeyIndex;
  /** Bytes of the dedupe and collapse indexes, for the benchmark. */
  indexBytes: number;
  uniqueKeys: number;
  /** With a key that ignores program and module: how many duplicates gave way to a record of another module; else null. */
  mergedAcrossModules: number | null;
  /** The --keep-list, checked off: which listed ids matched no record. */
  keepList: IdList | null;
  /** Null when no quality stage ran. */
  quality: QualityReport | null;
}

export type DropSink = (drop: Drop) => void;

/** What a plan keeps: per file index, the sorted line numbers, and their byte offsets in the same order. */
export type KeptLines = Pick<CurationPlan, 'keptLines' | 'keptOffsets'>;

/** Pending duplicates: group, file index, line, module id, and the call_id as 4 words (or a side table). */
class PendingDuplicates {
  private readonly spill = new SpillFile(8);
  private readonly row = new Uint32Array(8);
  private readonly otherIds = new Map<number, string>();

  add(group: number, loser: Loser): void {
    this.row[0] = group;
    this.row[1] = loser.fileIndex;
    this.row[2] = loser.line;
    this.row[3] = loser.moduleId;
    if (!uuidWords(loser.callId, this.row, 4)) {
      this.row.fill(0, 4);
      this.otherIds.set(this.spill.rows, loser.callId);
    }
    this.spill.append(this.row);
  }

  *entries(): Generator<{ group: number; fileIndex: number; line: number; moduleId: number; callId: string }> {
    let index = 0;
    for (const row of this.spill.read()) {
      const callId = this.otherIds.get(index++) ?? uuidText(row, 4);
      yield { group: row[0], fileIndex: row[1], line: row[2], moduleId: row[3] | 0, callId };
    }
  }

  dispose(): void {
    this.spill.dispose();
  }
}

export class Curation {
  private readonly dedupe: Deduplicator;
  private readonly collapse: TrajectoryCollapse | null;
  private readonly pending = new PendingDuplicates();
  private readonly key = new Uint32Array(4);
  private readonly positionKey = new Uint32Array(4);
  /** Without dedupe, the keys of kept records are gathered here instead of in the dedupe index. */
  private readonly selectedKeys: KeyIndex | null;
  private readonly counts: Record<string, number> = Object.fromEntries(DROP_REASONS.map((r) => [r, 0]));
  /** Each group winner's near-duplicate signature (all zeros: none), when --near-duplicates is on. */
  private readonly signatures: SignatureStore | null;
  private nearIndexBytes = 0;
  private recordsRead = 0;
  /** "program/module" of each module id met, to name the module a duplicate gave way to. */
  private readonly moduleNames = new Map<number, string>();
  private readonly quality: QualityReport | null;
  /** Per evaluation file, the items its contaminated records matched. */
  private readonly itemsMatched: Set<number>[] = [];

  readonly candidateOptions: CandidateOptions;

  constructor(
    private readonly files: readonly TraceFile[],
    private readonly options: CurationOptions,
    private readonly onDrop: DropSink,
    /** Sees the tool-calling assistant turns of every selected ok record (export infers tools from them). */
    private readonly onToolCalls: ((facts: string[]) => void) | null = null,
    private readonly keepList: IdList | null = null,
  ) {
    this.dedupe = new Deduplicator(options.keep, options.dedupe && mergesAcrossModules(options.key));
    this.collapse = options.trajectories === 'last' ? new TrajectoryCollapse() : null;
    this.selectedKeys = options.dedupe ? null : new KeyIndex();
    const near = options.dedupe && options.nearDuplicates != null;
    this.signatures = near ? new SignatureStore() : null;
    if (near) this.counts.near_duplicate = 0;
    const quality = options.quality ?? null;
    this.quality = quality === null ? null : this.qualityReport(quality);
    this.candidateOptions = {
      selection: options.selection,
      key: options.key,
      collapse: this.collapse !== null,
      toolCalls: onToolCalls !== null,
      nearDuplicates: near,
      // --exclude, --keep-list and --against drop records after this: each record's turns must come.
      toolCallsOnce: options.exclude === null && keepList === null && options.seen === null ? randomUUID() : null,
      quality,
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
    const drop: Drop = { call_id: candidate.callId, file: this.files[candidate.fileIndex].display, line: candidate.line, reason };
    if (detail !== undefined) drop.detail = detail;
    this.drop(drop);
  }

  addDamaged(line: DamagedLine): void {
    this.drop({ file: line.file, line: line.line, reason: 'damaged', detail: line.reason });
  }

  /** The stages that compare records: exclusion, --against, dedupe and collapse. Candidates come in file order. */
  addCandidate(candidate: Candidate): void {
    this.recordsRead++;

    // Met before the verdict: a listed id (--exclude, --keep-list) that the selection drops anyway was still found.
    const excluded = this.options.exclude?.meet(candidate.callId) === true;
    const listed = this.keepList?.meet(candidate.callId) ?? true;
    if (candidate.verdict !== null) {
      if (candidate.verdict.reason === 'contaminated') this.noteContamination(candidate);
      return this.dropCandidate(candidate, candidate.verdict.reason, candidate.verdict.detail);
    }
    if (excluded) return this.dropCandidate(candidate, 'excluded');
    if (!listed) return this.dropCandidate(candidate, 'not_in_keep_list');
    const key = this.key;
    key.set(candidate.key!);
    if (this.options.seen !== null && this.options.seen.get(key) !== -1) return this.dropCandidate(candidate, 'seen');
    if (candidate.flags !== null) this.reportFlags(candidate);
    if (candidate.toolCalls !== null) this.onToolCalls?.(candidate.toolCalls);
    if (candidate.moduleId !== 0 && !this.moduleNames.has(candidate.moduleId)) this.moduleNames.set(candidate.moduleId, candidate.moduleName);
    let groupKey = key;
    if (this.selectedKeys !== null) {
      this.selectedKeys.set(key, 0);
      // Without dedupe every record is its own group: a key made of its position.
      this.positionKey.set([candidate.fileIndex, candidate.line, 0x7fffffff, 0xffffffff]);
      groupKey = this.positionKey;
    }
    const { group, won, loser } = this.dedupe.offer(candidate, groupKey);
    if (loser !== null) {
      this.counts.duplicate++;
      this.pending.add(group, loser);
    }
    if (won && this.signatures !== null) this.signatures.set(group, candidate.signature);
    if (won && this.collapse !== null) {
      if (candidate.trajectory !== null) this.collapse.observe(group, candidate.trajectory);
      else this.collapse.forget(group);
    }
  }

  /**
   * Resolves duplicates and prefixes, reports their drops, and returns what is kept. What is
   * kept is known before the drops are reported, and handed to `whenKept` then: the kept lines
   * can be copied while the drops are written. The drops keep their order (duplicates first).
   */
  finish(whenKept: ((kept: KeptLines) => void) | null = null): CurationPlan {
    try {
      return this.resolve(whenKept);
    } finally {
      this.pending.dispose();
    }
  }

  /**
   * The winners that do not give way, as sorted line numbers and byte offsets per file: a
   * counting sort of the groups by file, in typed arrays (a group is a dense number).
   */
  private keptByFile(gaveWay: Uint8Array): KeptLines & { kept: number } {
    const { dedupe } = this;
    const fileIndexes = dedupe.fileIndexes.data;
    const starts = new Int32Array(this.files.length + 1);
    const keptGroups = new Int32Array(dedupe.groups);
    let kept = 0;
    for (let group = 0; group < dedupe.groups; group++) {
      if (gaveWay[group] === 1) continue;
      keptGroups[kept++] = group;
      starts[fileIndexes[group] + 1]++;
    }
    for (let i = 1; i < starts.length; i++) starts[i] += starts[i - 1];
    const lines = new Int32Array(kept);
    const offsets = new Float64Array(kept);
    const next = starts.slice(0, this.files.length);
    for (let i = 0; i < kept; i++) {
      const group = keptGroups[i];
      const at = next[fileIndexes[group]]++;
      lines[at] = dedupe.lines.data[group];
      offsets[at] = dedupe.offsets.data[group];
    }
    const keptLines = new Map<number, Int32Array>();
    const keptOffsets = new Map<number, Float64Array>();
    for (let fileIndex = 0; fileIndex < this.files.length; fileIndex++) {
      const start = starts[fileIndex];
      const end = starts[fileIndex + 1];
      if (start === end) continue;
      // Copies, not views: each may go to another thread, and a view would take the whole buffer along.
      keptLines.set(fileIndex, lines.slice(start, end).sort());
      // A file's offsets grow with its line numbers: sorted apart, they stay in step.
      keptOffsets.set(fileIndex, offsets.slice(start, end).sort());
    }
    return { keptLines, keptOffsets, kept };
  }

  private resolve(whenKept: ((kept: KeptLines) => void) | null): CurationPlan {
    const { dedupe, collapse } = this;
    const near =
      this.signatures === null
        ? null
        : nearDuplicateClusters(this.signatures, dedupe, this.options.keep, this.options.nearDuplicates!);
    if (near !== null) this.nearIndexBytes = near.byteSize;
    // 1 where a group's winner gives way to a similar group's (near duplicates) or to a longer run of its trajectory.
    const gaveWay = new Uint8Array(dedupe.groups);
    if (near !== null || collapse !== null) {
      for (let group = 0; group < dedupe.groups; group++) {
        if ((near !== null && near.keptFor(group) !== -1) || (collapse !== null && collapse.containerOf(group) !== -1)) gaveWay[group] = 1;
      }
    }
    const { keptLines, keptOffsets, kept } = this.keptByFile(gaveWay);
    whenKept?.({ keptLines, keptOffsets });
    const winnerModules = dedupe.winnerModules?.data ?? null;
    let mergedAcrossModules = 0;
    for (const { group, fileIndex, line, moduleId, callId } of this.pending.entries()) {
      const drop: Drop = { call_id: callId, file: this.files[fileIndex].display, line, reason: 'duplicate', kept: dedupe.callIds.get(group) };
      if (winnerModules !== null && winnerModules[group] !== moduleId) {
        mergedAcrossModules++;
        drop.detail = `merged across modules: ${this.moduleNames.get(moduleId)} gave way to ${this.moduleNames.get(winnerModules[group])}`;
      }
      this.onDrop(drop);
    }
    // The keys a later --against skips: every dedupe key, a trajectory step given way to its
    // longer run included (handled too), and those of --against; with a selection, its keys.
    // Without either of the latter, that is the dedupe index itself, and it serves as it is.
    const ownKeys = this.options.seen === null && this.selectedKeys === null;
    const keptKeys = ownKeys ? dedupe.index : new KeyIndex(Math.max(16, dedupe.groups + (this.options.seen?.size ?? 0)));
    if (this.options.seen !== null) for (const [key] of this.options.seen.entries()) keptKeys.set(key, 0);
    if (this.selectedKeys !== null) for (const [key] of this.selectedKeys.entries()) keptKeys.set(key, 0);
    // Nothing to walk the index for when it is the kept keys and no winner gave way.
    const walk = !ownKeys || near !== null || collapse !== null;
    for (const [key, group] of walk ? dedupe.index.entries() : []) {
      if (!ownKeys && this.selectedKeys === null) keptKeys.set(key, 0);
      if (gaveWay[group] === 0) continue;
      // Reported with the record it gave way to.
      const similar = near?.keptFor(group) ?? -1;
      const drop: Drop = {
        call_id: dedupe.callIds.get(group),
        file: this.files[dedupe.fileIndexes.data[group]].display,
        line: dedupe.lines.data[group],
        reason: similar !== -1 ? 'near_duplicate' : 'prefix',
        kept: dedupe.callIds.get(similar !== -1 ? similar : collapse!.containerOf(group)),
      };
      if (similar !== -1) drop.similarity = near!.similarity(group);
      this.drop(drop);
    }
    const { damaged, ...dropped } = this.counts;
    return {
      files: this.files,
      recordsRead: this.recordsRead,
      damagedLines: damaged,
      kept,
      dropped,
      keptLines,
      keptOffsets,
      keptKeys,
      indexBytes: dedupe.byteSize + (collapse?.byteSize ?? 0) + (this.signatures?.byteSize ?? 0) + this.nearIndexBytes,
      uniqueKeys: dedupe.groups,
      mergedAcrossModules: winnerModules === null ? null : mergedAcrossModules,
      keepList: this.keepList,
      quality: this.quality,
    };
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
  hooks.whenRead?.();
  await pauseForTest('planned');
  return curation.finish(hooks.whenKept ?? null);
}
