/**
 * Where each exported line came from: DIR/_traces/examples.jsonl, one row per written example
 * in output order, {"file", "line", "call_id", "merged"}.
 *
 * The row is taken where the line is written (export/dataset.ts), so it cannot drift from the
 * dataset. Two of its facts are only known at the end and are filled in then: the file's final
 * name (shards are numbered once there are several) and `merged`, the call_ids whose example
 * was identical or near-identical and gave way to this one (exact duplicates and near-duplicates
 * dropped in curation, identical examples dropped in the export), followed through chains: what
 * gave way to a record that itself gave way is merged into the example written. Rows wait on
 * disk and merges in typed columns, so memory does not grow with the number of examples.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import type { OutputDir, OutputFile } from '../output/output-dir.js';
import { CallIdColumn, Column, uuidText, uuidWords } from '../pipeline/columns.js';
import { KeyIndex } from '../pipeline/key-index.js';
import { SpillFile } from '../pipeline/spill.js';
import { META_DIR } from '../output/output-dir.js';

export const EXAMPLES_FILE = path.join(META_DIR, 'examples.jsonl');

/** A call_id as 4 words: a uuid's own bits, else the first 16 bytes of its sha256. Returns whether it was a uuid. */
function callIdWords(callId: string, into: Uint32Array): boolean {
  if (uuidWords(callId, into)) return true;
  const digest = createHash('sha256').update(callId).digest();
  for (let i = 0; i < 4; i++) into[i] = digest.readUInt32BE(i * 4);
  return false;
}


export class Provenance {
  /** Rows as written: file number, line, call_id (4 words). */
  private readonly rows = new SpillFile(6);
  private readonly row = new Uint32Array(6);
  private readonly otherIds = new Map<number, string>();
  private readonly files: OutputFile[] = [];
  private readonly fileNumbers = new Map<OutputFile, number>();
  /** Merges: the kept call_id's words → its first merge; each merge → the next of the same kept one. */
  private readonly heads = new KeyIndex();
  private readonly next = new Column(Int32Array);
  private readonly losers = new CallIdColumn();
  private merges = 0;
  private readonly key = new Uint32Array(4);
  private disposed = false;

  /** A line was written: `line` (1-based) of `file`, projected from the record `callId`. */
  written(file: OutputFile, line: number, callId: string): void {
    let number = this.fileNumbers.get(file);
    if (number === undefined) {
      number = this.files.length;
      this.files.push(file);
      this.fileNumbers.set(file, number);
    }
    this.row[0] = number;
    this.row[1] = line;
    const words = this.row.subarray(2);
    if (!callIdWords(callId, words)) this.otherIds.set(this.rows.rows, callId);
    this.rows.append(this.row);
  }

  /** `loser`'s example was identical or near-identical to `kept`'s and gave way to it. */
  merged(kept: string, loser: string): void {
    callIdWords(kept, this.key);
    const merge = this.merges++;
    this.next.ensure(merge + 1);
    this.losers.set(merge, loser);
    const head = this.heads.get(this.key);
    this.next.data[merge] = head;
    this.heads.set(this.key, merge);
  }

  private mergedInto(callId: string, out: string[], seen: Set<string>): void {
    callIdWords(callId, this.key);
    for (let merge = this.heads.get(this.key); merge !== -1; merge = this.next.data[merge]) {
      const loser = this.losers.get(merge);
      if (seen.has(loser)) continue;
      seen.add(loser);
      out.push(loser);
      this.mergedInto(loser, out, seen);
    }
  }

  /**
   * Writes DIR/_traces/examples.jsonl; call once every file has its final name. It runs after
   * the last example, with the other threads idle: a row is put together as text (the same text
   * JSON.stringify gives), and the merges are looked up by the words the row already holds.
   */
  write(output: OutputDir): void {
    const file = output.create(EXAMPLES_FILE);
    const names = this.files.map((f) => JSON.stringify(path.relative(output.dir, f.finalPath).split(path.sep).join('/')));
    let index = 0;
    try {
      for (const row of this.rows.read()) {
        const other = this.otherIds.size > 0 ? this.otherIds.get(index) : undefined;
        index++;
        // A uuid's text needs no escaping.
        const callId = other ?? uuidText(row, 2);
        const words = other === undefined ? row.subarray(2) : (callIdWords(other, this.key), this.key);
        let merged = '[]';
        if (this.heads.get(words) !== -1) {
          const list: string[] = [];
          this.mergedInto(callId, list, new Set([callId]));
          merged = JSON.stringify(list.reverse());
        }
        file.writeLine(`{"file":${names[row[0]]},"line":${row[1]},"call_id":${other === undefined ? `"${callId}"` : JSON.stringify(callId)},"merged":${merged}}`);
      }
    } finally {
      this.dispose();
    }
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.rows.dispose();
  }
}
