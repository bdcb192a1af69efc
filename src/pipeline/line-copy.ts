/**
 * Copying kept trace lines byte for byte into an output file, in whichever thread runs it:
 * the part of a tree copy (tree-copy.ts) that worker threads take. Kept small, as a worker
 * loads it when the copy starts.
 */
import { letEventLoopRun } from '../cooperate.js';
import type { Progress } from '../progress.js';
import { readLinesAt, type LineAt } from '../sources/read.js';
import type { FileStamp } from '../sources/lines.js';
import { OutputFile } from '../output/output-dir.js';

/** The kept lines of one output file: its temporary name (made by OutputDir) and the lines to copy into it, in order. */
export interface LineCopyTask {
  tempPath: string;
  /** `stamp`: the file as the run listed it (see `changedSince`). */
  sources: { path: string; offsets: Float64Array; stamp?: FileStamp }[];
}

const CRLF = Buffer.from('\r\n');
const LF = Buffer.from('\n');

/**
 * Writes each line followed by the line end it had in its file (CR LF or LF; a last line
 * without one gets LF, so whatever follows it starts a line). Lines that follow one another
 * in the file are still together in the read buffer, line ends included: such a run goes out
 * in one write. Returns the bytes written.
 */
function copyLines(batch: readonly LineAt[], out: OutputFile): number {
  let written = 0;
  for (let i = 0; i < batch.length; ) {
    const first = batch[i].bytes;
    let runEnd = first.byteOffset + first.length;
    let j = i + 1;
    while (j < batch.length && batch[j].bytes.buffer === first.buffer && batch[j].bytes.byteOffset === runEnd + (batch[j - 1].crlf ? 2 : 1)) {
      runEnd = batch[j].bytes.byteOffset + batch[j].bytes.length;
      j++;
    }
    const end = batch[j - 1].crlf ? CRLF : LF;
    out.write(j === i + 1 ? first : Buffer.from(first.buffer, first.byteOffset, runEnd - first.byteOffset));
    out.write(end);
    written += runEnd - first.byteOffset + end.length;
    i = j;
  }
  return written;
}

/**
 * Copies the kept lines of one output file, in whichever thread runs it, into the file
 * OutputDir created for it (see `OutputFile.reopen`).
 */
export function copyLinesInto(task: LineCopyTask, progress: Progress | null = null): { records: number; bytes: number } {
  const out = OutputFile.reopen(task.tempPath);
  let records = 0;
  let bytes = 0;
  try {
    for (const source of task.sources) {
      // Only the kept lines are read, by their offsets; each batch is copied before the next is read.
      for (const batch of readLinesAt(source.path, source.offsets, undefined, undefined, source.stamp)) {
        const written = copyLines(batch, out);
        records += batch.length;
        bytes += written;
        progress?.advance({ records: batch.length, bytes: written });
      }
      progress?.advance({ files: 1 });
    }
  } finally {
    out.close();
  }
  return { records, bytes };
}

export interface CopyTotals {
  records: number;
  bytes: number;
  files: number;
}

/**
 * Copies tasks until none is left: each thread taking part claims the next task from the
 * shared counter `claims[0]`, so the threads share the copy however busy each is otherwise.
 */
export async function copyClaimed(tasks: readonly LineCopyTask[], claims: Int32Array, progress: Progress | null = null): Promise<CopyTotals> {
  const done: CopyTotals = { records: 0, bytes: 0, files: 0 };
  for (let i = Atomics.add(claims, 0, 1); i < tasks.length; i = Atomics.add(claims, 0, 1)) {
    const { records, bytes } = copyLinesInto(tasks[i], progress);
    done.records += records;
    done.bytes += bytes;
    done.files += tasks[i].sources.length;
    await letEventLoopRun();
  }
  return done;
}

/** A worker thread's part of a tree copy. */
export async function copyShare({ tasks, claims }: { tasks: LineCopyTask[]; claims: Int32Array }): Promise<CopyTotals> {
  return copyClaimed(tasks, claims);
}

declare module '../parallel/jobs.js' {
  interface JobFunctions {
    copy: typeof copyShare;
  }
}
