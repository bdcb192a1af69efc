/**
 * Where each exported line came from: DIR/_traces/examples.jsonl, one row per written example
 * in output order, {"file", "line", "call_id", "merged", "tokens", "trained_tokens"} (the counts
 * report.json sums: the encoding's estimate, or the model folder's own with --tokenizer DIR).
 *
 * The row is taken where the line is written (export/dataset.ts), so it cannot drift from the
 * dataset. Two of its facts are only known at the end and are filled in then: the file's final
 * name (shards are numbered once there are several) and `merged`, the call_ids whose example
 * was identical or near-identical and gave way to this one (exact duplicates and near-duplicates
 * dropped in curation, identical examples dropped in the export), followed through chains: what
 * gave way to a record that itself gave way is merged into the example written.
 *
 * Rows and merges wait on disk, and `merged` is a join on disk (`write`): memory holds one
 * partition of the merges at a time, whatever the number of examples and merges.
 */
import path from 'node:path';
import type { OutputDir, OutputFile } from '../output/output-dir.js';
import { latin1Word, sha256Latin1 } from '../canonical/canonical.js';
import { uuidText, uuidWords } from '../uuid-words.js';
import { partitionOf } from '../pipeline/dedupe.js';
import { KeyIndex } from '../pipeline/key-index.js';
import { PartitionedSpill, PartitionedTextSpill, RunTempDir, TextSpillFile, type TextRow } from '../pipeline/spill.js';
import { META_DIR } from '../output/output-dir.js';

export const EXAMPLES_FILE = path.join(META_DIR, 'examples.jsonl');

/**
 * What a written line was made from: a record's call_id, or a preference pair (both call_ids and
 * the signal). Kept apart, never joined into one text: a call_id may hold any character.
 */
export type ExampleId = string | PairId;

/** A preference row's parts: its row in examples.jsonl names both call_ids and the signal (`{"file","line","call_id","rejected_call_id","signal","merged"}`). */
export interface PairId {
  chosen: string;
  rejected: string;
  signal: string;
}

/** A call_id as 4 words: a uuid's own bits, else the first 16 bytes of its sha256. Returns whether it was a uuid. */
function callIdWords(callId: string, into: Uint32Array, at = 0): boolean {
  if (uuidWords(callId, into, at)) return true;
  const digest = sha256Latin1(callId);
  for (let i = 0; i < 4; i++) into[at + i] = latin1Word(digest, i);
  return false;
}

/** A written example's row (its text: the call_id when not a uuid); its token counts NO_COUNT when it has none. */
const WrittenRow = { file: 0, line: 1, callId: 2, tokens: 6, trained: 7, pair: 8, words: 9 } as const;
const NO_COUNT = 0xffffffff;
/** A merge as it happened (its text: the loser's call_id when not a uuid); its number is its place in the file. */
const MergeRow = { kept: 0, loser: 4, words: 8 } as const;
/** A merge by the partition of its kept call_id. */
const EdgeRow = { seq: 0, kept: 1, loser: 5, words: 9 } as const;
/** A call_id whose merges a written row's `merged` needs: the row's number, and the call_id. */
const FrontierRow = { row: 0, callId: 1, words: 5 } as const;
/** A merge a written row's `merged` needs, by range of row numbers. */
const ReachedRow = { row: 0, seq: 1, kept: 2, loser: 6, words: 10 } as const;
/** A call_id already followed for a row: the row's number and the call_id's first merge in its partition. */
const VisitedRow = { row: 0, head: 1, words: 2 } as const;

/** Rows of the largest table per partition of the join: about 4 MB of merges in memory at once. */
const PARTITION_ROWS = 1 << 16;
/** Files the join keeps open are 5 a partition. */
const MAX_PARTITIONS = 256;

/** The merges of some call_ids in memory, as `merged` made them: each call_id's last merge, each merge's previous one. */
class MergeGraph {
  private readonly heads: KeyIndex;
  private readonly next: Int32Array;
  private readonly loserWords: Uint32Array;
  private readonly loserTexts: (string | null)[];
  /** `edges`: rows with the kept call_id at `kept` and the loser's at `loser`, in the order merged. */
  constructor(edges: Uint32Array, width: number, kept: number, loser: number, texts: (string | null)[]) {
    const count = texts.length;
    this.heads = new KeyIndex(count * 2);
    this.next = new Int32Array(count);
    this.loserWords = new Uint32Array(count * 4);
    this.loserTexts = texts;
    for (let e = 0; e < count; e++) {
      const keptKey = edges.subarray(e * width + kept, e * width + kept + 4);
      this.next[e] = this.heads.get(keptKey);
      this.heads.set(keptKey, e);
      this.loserWords.set(edges.subarray(e * width + loser, e * width + loser + 4), e * 4);
    }
  }

  /** The last merge into the call_id of these words, or -1. */
  head(words: Uint32Array): number {
    return this.heads.get(words);
  }

  nextOf(merge: number): number {
    return this.next[merge];
  }

  loserKey(merge: number): Uint32Array {
    return this.loserWords.subarray(merge * 4, merge * 4 + 4);
  }

  loser(merge: number): string {
    return this.loserTexts[merge] ?? uuidText(this.loserWords, merge * 4);
  }

  /** What gave way to the call_id of `words`, and to those, depth first from the last merge; `seen` holds the call_ids met. */
  mergedInto(words: Uint32Array, out: string[], seen: Set<string>): void {
    for (let merge = this.head(words); merge !== -1; merge = this.next[merge]) {
      const loser = this.loser(merge);
      if (seen.has(loser)) continue;
      seen.add(loser);
      out.push(loser);
      this.mergedInto(this.loserKey(merge), out, seen);
    }
  }
}

/** A partition's rows (of `width` words) and texts read into memory, in the order appended. */
function loadPartition(table: PartitionedTextSpill, partition: number): { rows: Uint32Array; texts: (string | null)[] } {
  const rows = new Uint32Array(table.rows(partition) * table.width);
  const texts: (string | null)[] = [];
  for (const { row, text } of table.read(partition)) {
    rows.set(row, texts.length * table.width);
    texts.push(text);
  }
  return { rows, texts };
}

export class Provenance {
  private readonly dir = new RunTempDir();
  /** Rows as written (`WrittenRow`), in output order. */
  private readonly rows: TextSpillFile;
  /** Merges as they happened (`MergeRow`). */
  private readonly merges: TextSpillFile;
  private readonly row = new Uint32Array(WrittenRow.words);
  private readonly merge = new Uint32Array(MergeRow.words);
  private readonly files: OutputFile[] = [];
  private readonly fileNumbers = new Map<OutputFile, number>();
  /** The join's tables, removed with the rest. */
  private readonly tables: { dispose(): void }[] = [];
  private disposed = false;

  /** `partitionRows`: rows of the join's largest table per partition (tests make many partitions with few). */
  constructor(private readonly partitionRows = PARTITION_ROWS) {
    this.rows = new TextSpillFile(WrittenRow.words, { dir: this.dir, name: 'written' });
    this.merges = new TextSpillFile(MergeRow.words, { dir: this.dir, name: 'merges' });
  }

  /**
   * A line was written: `line` (1-based) of `file`, projected from the record `callId`, with its
   * token counts (all of it, and those trained on) when it has them, so that one example's counts
   * can be compared with a trainer's.
   */
  written(file: OutputFile, line: number, id: ExampleId, tokens: { total: number; assistant: number } | null = null): void {
    let number = this.fileNumbers.get(file);
    if (number === undefined) {
      number = this.files.length;
      this.files.push(file);
      this.fileNumbers.set(file, number);
    }
    this.row[WrittenRow.file] = number;
    this.row[WrittenRow.line] = line;
    this.row[WrittenRow.tokens] = tokens === null ? NO_COUNT : Math.min(tokens.total, NO_COUNT - 1);
    this.row[WrittenRow.trained] = tokens === null ? NO_COUNT : Math.min(tokens.assistant, NO_COUNT - 1);
    if (typeof id === 'string') {
      this.row[WrittenRow.pair] = 0;
      this.rows.append(this.row, callIdWords(id, this.row, WrittenRow.callId) ? null : id);
    } else {
      // A pair's parts as a JSON array: text of its own, whatever characters the call_ids hold.
      const text = JSON.stringify([id.chosen, id.rejected, id.signal]);
      this.row[WrittenRow.pair] = 1;
      callIdWords(text, this.row, WrittenRow.callId);
      this.rows.append(this.row, text);
    }
  }

  /** A curation drop, as written to the manifest: a duplicate or near-duplicate merges into the record it gave way to. */
  dropped(drop: { reason: string; call_id?: string; kept?: string }): void {
    if ((drop.reason === 'duplicate' || drop.reason === 'near_duplicate') && drop.kept !== undefined && drop.call_id !== undefined) this.merged(drop.kept, drop.call_id);
  }

  /** `loser`'s example was identical or near-identical to `kept`'s and gave way to it. */
  merged(kept: string, loser: string): void {
    callIdWords(kept, this.merge, MergeRow.kept);
    this.merges.append(this.merge, callIdWords(loser, this.merge, MergeRow.loser) ? null : loser);
  }

  private table<T extends { dispose(): void }>(table: T): T {
    this.tables.push(table);
    return table;
  }

  /**
   * The merges each written row's `merged` needs, by range of row numbers (`rangeRows` rows a
   * range). A row needs the merges into its call_id, then those into each loser, and so on:
   * each round joins the call_ids to follow (by partition of call_id) with the merges (by
   * partition of kept call_id), one partition in memory at a time, and gives the losers to
   * follow in the next round. A call_id is followed once a row (`visited`), so a cycle of
   * merges (call_ids recorded twice) ends.
   */
  private reachedMerges(partitions: number, rangeRows: number): PartitionedTextSpill {
    const edges = this.table(new PartitionedTextSpill(this.dir, 'edges', EdgeRow.words, partitions));
    const edge = new Uint32Array(EdgeRow.words);
    let seq = 0;
    for (const { row, text } of this.merges.read()) {
      edge[EdgeRow.seq] = seq++;
      edge.set(row, EdgeRow.kept);
      edges.append(partitionOf(row, MergeRow.kept, partitions), edge, text);
    }
    const reached = this.table(new PartitionedTextSpill(this.dir, 'reached', ReachedRow.words, partitions));
    const visited = this.table(new PartitionedSpill(this.dir, 'visited', VisitedRow.words, partitions));
    let frontier = this.table(new PartitionedSpill(this.dir, 'follow-0', FrontierRow.words, partitions));
    const step = new Uint32Array(FrontierRow.words);
    let index = 0;
    for (const { row } of this.rows.read()) {
      step[FrontierRow.row] = index++;
      step.set(row.subarray(WrittenRow.callId, WrittenRow.callId + 4), FrontierRow.callId);
      frontier.append(partitionOf(step, FrontierRow.callId, partitions), step);
    }
    const reachedRow = new Uint32Array(ReachedRow.words);
    const visit = new Uint32Array(VisitedRow.words);
    for (let round = 1; ; round++) {
      const next = this.table(new PartitionedSpill(this.dir, `follow-${round}`, FrontierRow.words, partitions));
      let followed = 0;
      for (let p = 0; p < partitions; p++) {
        if (frontier.rows(p) === 0) {
          frontier.close(p);
          continue;
        }
        const { rows, texts } = loadPartition(edges, p);
        const graph = new MergeGraph(rows, EdgeRow.words, EdgeRow.kept, EdgeRow.loser, texts);
        const merges = texts.length;
        // Row number and merge number in one exact number while they fit (rows < 2^32).
        const visitKey = merges <= 2 ** 21 ? (row: number, head: number): number | string => row * merges + head : (row: number, head: number) => `${row}:${head}`;
        const seen = new Set<number | string>();
        for (const v of visited.read(p)) seen.add(visitKey(v[VisitedRow.row], v[VisitedRow.head]));
        for (const at of frontier.read(p)) {
          const head = graph.head(at.subarray(FrontierRow.callId, FrontierRow.callId + 4));
          if (head === -1) continue;
          const root = at[FrontierRow.row];
          const key = visitKey(root, head);
          if (seen.has(key)) continue;
          seen.add(key);
          visit[VisitedRow.row] = root;
          visit[VisitedRow.head] = head;
          visited.append(p, visit);
          for (let e = head; e !== -1; e = graph.nextOf(e)) {
            reachedRow[ReachedRow.row] = root;
            reachedRow.set(rows.subarray(e * EdgeRow.words, (e + 1) * EdgeRow.words), ReachedRow.seq);
            reached.append(Math.floor(root / rangeRows), reachedRow, texts[e]);
            step[FrontierRow.row] = root;
            step.set(graph.loserKey(e), FrontierRow.callId);
            next.append(partitionOf(step, FrontierRow.callId, partitions), step);
            followed++;
          }
        }
        frontier.close(p);
      }
      frontier = next;
      if (followed === 0) break;
    }
    frontier.dispose();
    edges.dispose();
    visited.dispose();
    return reached;
  }

  /** The merges the rows of one range need, each once, in the order they happened: the graph `merged` made, cut to what these rows reach. */
  private static rangeGraph(reached: PartitionedTextSpill, range: number): MergeGraph {
    const { rows, texts } = loadPartition(reached, range);
    reached.close(range);
    const width = ReachedRow.words;
    const seqOf = (i: number): number => rows[i * width + ReachedRow.seq];
    const order = Int32Array.from({ length: texts.length }, (_, i) => i).sort((a, b) => seqOf(a) - seqOf(b));
    const unique = new Uint32Array(rows.length);
    const uniqueTexts: (string | null)[] = [];
    for (let k = 0; k < order.length; k++) {
      const i = order[k];
      if (k > 0 && seqOf(order[k - 1]) === seqOf(i)) continue;
      unique.set(rows.subarray(i * width, (i + 1) * width), uniqueTexts.length * width);
      uniqueTexts.push(texts[i]);
    }
    return new MergeGraph(unique, width, ReachedRow.kept, ReachedRow.loser, uniqueTexts);
  }

  /**
   * Writes DIR/_traces/examples.jsonl; call once every file has its final name. It runs after
   * the last example, with the other threads idle: the merges the rows need are joined to them
   * on disk (`reachedMerges`), then the rows are written range by range, each range's merges in
   * memory; a row is put together as text (the same text JSON.stringify gives).
   */
  write(output: OutputDir): void {
    const file = output.create(EXAMPLES_FILE);
    const names = this.files.map((f) => JSON.stringify(path.relative(output.dir, f.finalPath).split(path.sep).join('/')));
    try {
      const rowCount = this.rows.count;
      const partitions = Math.min(MAX_PARTITIONS, Math.max(1, Math.ceil(Math.max(rowCount, this.merges.count) / this.partitionRows)));
      const rangeRows = Math.max(1, Math.ceil(rowCount / partitions));
      const reached = this.merges.count === 0 ? null : this.reachedMerges(partitions, rangeRows);
      const rows = this.rows.read();
      let index = 0;
      for (let range = 0; range < partitions; range++) {
        const graph = reached === null ? null : Provenance.rangeGraph(reached, range);
        for (const end = Math.min(rowCount, (range + 1) * rangeRows); index < end; index++) {
          const { row, text } = rows.next().value as TextRow;
          // A uuid's text needs no escaping.
          const callId = text ?? uuidText(row, WrittenRow.callId);
          const words = row.subarray(WrittenRow.callId, WrittenRow.callId + 4);
          let merged = '[]';
          if (graph !== null && graph.head(words) !== -1) {
            const list: string[] = [];
            graph.mergedInto(words, list, new Set([callId]));
            merged = JSON.stringify(list.reverse());
          }
          if (row[WrittenRow.pair] === 1) {
            const [chosen, rejected, signal] = JSON.parse(text!) as [string, string, string];
            file.writeJsonLine(`{"file":${names[row[WrittenRow.file]]},"line":${row[WrittenRow.line]},"call_id":${JSON.stringify(chosen)},"rejected_call_id":${JSON.stringify(rejected)},"signal":${JSON.stringify(signal)},"merged":[]}`);
            continue;
          }
          const counts = row[WrittenRow.tokens] === NO_COUNT ? '' : `,"tokens":${row[WrittenRow.tokens]},"trained_tokens":${row[WrittenRow.trained]}`;
          file.writeJsonLine(`{"file":${names[row[WrittenRow.file]]},"line":${row[WrittenRow.line]},"call_id":${text === null ? `"${callId}"` : JSON.stringify(callId)},"merged":${merged}${counts}}`);
        }
      }
    } finally {
      this.dispose();
    }
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    for (const table of [this.rows, this.merges, ...this.tables]) table.dispose();
    this.dir.remove();
  }
}
