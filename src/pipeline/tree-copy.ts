/**
 * Writes kept records into a tree with the input's layout and file names, each line byte for byte.
 *
 * Records of other recorders (Ask recordings, klieo runs) have no line to copy: each is
 * written as a Synalinks-shaped JSONL line (its `raw`, which reads back with the same
 * hashes) under `<program>/<module>/<module>_<YYYYmmdd-HHMMSS>.jsonl`, names made safe,
 * the time (UTC) being the start of the first kept record of that file and module.
 */
import path from 'node:path';
import type { TraceFile } from '../sources/discover.js';
import { runOnWorker, workerCount } from '../parallel/run-shares.js';
import { readSelectedRecords } from '../sources/read.js';
import { copyClaimed, type CopyTotals, type LineCopyTask } from './line-copy.js';
import { CaseDistinctNames, outsideReserved, safeSegment } from '../output/names.js';
import { OutputFile, type OutputDir } from '../output/output-dir.js';
import type { Progress } from '../progress.js';
import { JOBS } from '../parallel/jobs.js';
import { isoTime } from '../time.js';

/** The path of a trace file inside an output tree: its path below its root, away from traces' own folders. */
export function relativeTracePath(file: TraceFile): string {
  return outsideReserved(path.relative(file.root, file.path));
}

/** A file name's `<date>-<time>`; a time unknown, or past year 9999 (no such stamp), as 1970's first second. */
function stamp(epochSeconds: number | null): string {
  const iso = isoTime(epochSeconds === null ? null : Math.floor(epochSeconds));
  if (iso === null || !/^\d{4}-/.test(iso)) return '19700101-000000';
  return `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}-${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}`;
}

/**
 * Where a rebuilt record goes in a Synalinks-shaped output tree. `folders` keeps modules whose
 * names differ only in case (`Gen`, `gen`) in folders of their own, as datasets are kept.
 */
export function rebuiltTracePath(program: string, module: string, timestamp: number | null, folders: CaseDistinctNames): string {
  const folder = folders.nameFor(path.join(safeSegment(program), safeSegment(module)));
  return path.join(folder, `${path.basename(folder)}_${stamp(timestamp)}.jsonl`);
}

/**
 * A copy of the kept lines into a tree with the input's layout, started as soon as the kept
 * lines are known: the worker threads of the run (when it has them) start on the trace lines
 * while this thread still reports the drops; `finish` joins in, copies the rebuilt records of
 * other recorders, and waits for the workers.
 */
export class TreeCopy {
  private readonly lineCopies: LineCopyTask[] = [];
  /** How many of `lineCopies` the threads have claimed (shared with the workers). */
  private readonly claims = new Int32Array(new SharedArrayBuffer(4));
  private readonly others: number[] = [];
  /** The line copies by output path (relative to the output folder). */
  private readonly copied = new Map<string, LineCopyTask>();
  /** Files the rebuilt records are written to, open until the end. */
  private readonly opened = new Map<string, OutputFile>();
  /** The workers' parts, already running. */
  private readonly elsewhere: Promise<CopyTotals>[] = [];
  /** The module folders of rebuilt records, apart where case is not. */
  private readonly folders = new CaseDistinctNames();

  constructor(
    private readonly files: readonly TraceFile[],
    private readonly keptLines: ReadonlyMap<number, Int32Array>,
    /** The byte offsets of the same lines, in the same order. */
    keptOffsets: ReadonlyMap<number, Float64Array>,
    private readonly output: OutputDir,
  ) {
    files.forEach((file, index) => {
      if (!keptLines.has(index)) return;
      if (file.source !== undefined && file.source !== 'synalinks') {
        this.others.push(index);
        return;
      }
      // Files from different roots with the same relative path go into one output file.
      const relative = relativeTracePath(file);
      let task = this.copied.get(relative);
      if (task === undefined) {
        // Created here, written by whichever thread claims it: no descriptor stays open
        // meanwhile, so a tree of thousands of files stays within the open-file limit.
        const created = this.output.create(relative);
        created.close();
        this.copied.set(relative, (task = { tempPath: created.tempPath, sources: [] }));
        this.lineCopies.push(task);
      }
      task.sources.push({ path: file.path, offsets: keptOffsets.get(index)!, stamp: file.stamp });
    });
    for (let i = 0; i < Math.min(workerCount(), this.lineCopies.length); i++) {
      const part = runOnWorker(JOBS.copy, { tasks: this.lineCopies, claims: this.claims })!;
      // A failure is reported by `finish`; until then it must not count as unhandled.
      part.catch(() => undefined);
      this.elsewhere.push(part);
    }
  }

  /** Where rebuilt records with this output path go: after the copied lines, when a trace file has the same path. */
  private fileAt(relative: string): OutputFile {
    let out = this.opened.get(relative);
    if (out === undefined) {
      const copied = this.copied.get(relative);
      out = copied !== undefined ? OutputFile.reopen(copied.tempPath, { append: true }) : this.output.create(relative);
      this.opened.set(relative, out);
    }
    return out;
  }

  /** Copies what is left in this thread, waits for the workers' parts, then writes the rebuilt records; returns the records written. */
  async finish(progress: Progress | null = null): Promise<number> {
    let written = (await copyClaimed(this.lineCopies, this.claims, progress)).records;
    for (const part of this.elsewhere) {
      const done = await part;
      written += done.records;
      progress?.advance(done);
    }
    for (const index of this.others) {
      // One output file per source file and module, named after its first kept record.
      const paths = new Map<string, string>();
      for await (const { records } of readSelectedRecords(this.files, new Map([[index, this.keptLines.get(index)!]]))) {
        for (const record of records) {
          const key = `${record.program}\0${record.module}`;
          let relative = paths.get(key);
          if (relative === undefined) paths.set(key, (relative = rebuiltTracePath(record.program, record.module, record.timestamp, this.folders)));
          this.fileAt(relative).writeLine(record.raw);
          written++;
        }
        progress?.advance({ records: records.length });
      }
      progress?.advance({ files: 1 });
    }
    for (const out of this.opened.values()) out.close();
    return written;
  }
}
