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
import { letEventLoopRun } from '../parallel/cooperate.js';
import { readLinesAt, readSelectedRecords, type LineAt } from '../sources/read.js';
import { safeSegment } from '../export/names.js';
import type { OutputDir, OutputFile } from './output-dir.js';
import type { Progress } from '../progress.js';
import { addToList } from '../lists.js';

/** The path of a trace file inside an output tree: its path below its root. */
export function relativeTracePath(file: TraceFile): string {
  return path.relative(file.root, file.path);
}

function stamp(epochSeconds: number | null): string {
  if (epochSeconds === null) return '19700101-000000';
  const iso = new Date(Math.floor(epochSeconds) * 1000).toISOString();
  return `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}-${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}`;
}

/** Where a rebuilt record goes in a Synalinks-shaped output tree. */
export function rebuiltTracePath(program: string, module: string, timestamp: number | null): string {
  const moduleSegment = safeSegment(module);
  return path.join(safeSegment(program), moduleSegment, `${moduleSegment}_${stamp(timestamp)}.jsonl`);
}

/**
 * Writes each line followed by a newline. Lines that follow one another in the file with a
 * bare newline between them are still together in the read buffer, newlines included: such a
 * run goes out in one write. Returns the bytes written.
 */
function copyLines(batch: readonly LineAt[], out: OutputFile): number {
  let written = 0;
  for (let i = 0; i < batch.length; ) {
    const first = batch[i].bytes;
    let runEnd = first.byteOffset + first.length;
    let j = i + 1;
    // Only a bare newline ends a line one byte before the next begins (a CR would make it two).
    while (j < batch.length && batch[j].bytes.buffer === first.buffer && batch[j].bytes.byteOffset === runEnd + 1) {
      runEnd = batch[j].bytes.byteOffset + batch[j].bytes.length;
      j++;
    }
    if (j === i + 1) out.writeLine(first);
    else out.writeLine(Buffer.from(first.buffer, first.byteOffset, runEnd - first.byteOffset));
    written += runEnd - first.byteOffset + 1;
    i = j;
  }
  return written;
}

export async function copyKeptLines(
  files: readonly TraceFile[],
  keptLines: ReadonlyMap<number, Int32Array>,
  /** The byte offsets of the same lines, in the same order. */
  keptOffsets: ReadonlyMap<number, Float64Array>,
  output: OutputDir,
  /** Advanced per batch of lines read (Synalinks) or per file (rebuilt records). */
  progress: Progress | null = null,
): Promise<number> {
  // Files from different roots with the same relative path go into one output file.
  const opened = new Map<string, OutputFile>();
  const fileAt = (relative: string) => {
    let out = opened.get(relative);
    if (out === undefined) opened.set(relative, (out = output.create(relative)));
    return out;
  };
  const synalinks = new Map<string, number[]>();
  const others: number[] = [];
  files.forEach((file, index) => {
    if (!keptLines.has(index)) return;
    if (file.source !== undefined && file.source !== 'synalinks') {
      others.push(index);
      return;
    }
    const relative = relativeTracePath(file);
    addToList(synalinks, relative, index);
  });
  let written = 0;
  for (const [relative, indexes] of synalinks) {
    const out = fileAt(relative);
    for (const index of indexes) {
      // Only the kept lines are read, by their offsets; each batch is copied before the next is read.
      for (const batch of readLinesAt(files[index].path, keptOffsets.get(index)!)) {
        written += batch.length;
        progress?.advance({ records: batch.length, bytes: copyLines(batch, out) });
        await letEventLoopRun();
      }
      progress?.advance({ files: 1 });
    }
  }
  for (const index of others) {
    // One output file per source file and module, named after its first kept record.
    const paths = new Map<string, string>();
    for await (const { records } of readSelectedRecords(files, new Map([[index, keptLines.get(index)!]]))) {
      for (const record of records) {
        const key = `${record.program}\0${record.module}`;
        let relative = paths.get(key);
        if (relative === undefined) paths.set(key, (relative = rebuiltTracePath(record.program, record.module, record.timestamp)));
        fileAt(relative).writeLine(record.raw);
        written++;
      }
      progress?.advance({ records: records.length });
    }
    progress?.advance({ files: 1 });
  }
  for (const out of opened.values()) out.close();
  return written;
}
