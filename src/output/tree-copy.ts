/** Writes kept records into a tree with the input's layout and file names, each line byte for byte. */
import path from 'node:path';
import type { TraceFile } from '../sources/discover.js';
import { readLineBatches } from '../sources/lines.js';
import type { OutputDir } from './output-dir.js';

/** The path of a trace file inside an output tree: its path below its root. */
export function relativeTracePath(file: TraceFile): string {
  return path.relative(file.root, file.path);
}

export async function copyKeptLines(
  files: readonly TraceFile[],
  keptLines: ReadonlyMap<number, Int32Array>,
  output: OutputDir,
): Promise<number> {
  // Files from different roots with the same relative path go into one output file.
  const byRelative = new Map<string, number[]>();
  files.forEach((file, index) => {
    if (!keptLines.has(index)) return;
    const relative = relativeTracePath(file);
    byRelative.set(relative, [...(byRelative.get(relative) ?? []), index]);
  });
  let written = 0;
  for (const [relative, indexes] of byRelative) {
    const out = output.create(relative);
    for (const index of indexes) {
      const lines = keptLines.get(index)!;
      let next = 0;
      for await (const batch of readLineBatches(files[index].path)) {
        for (const line of batch) {
          if (next < lines.length && lines[next] === line.number) {
            out.writeLine(line.bytes);
            next++;
            written++;
          }
        }
        if (next >= lines.length) break;
      }
    }
    out.close();
  }
  return written;
}
