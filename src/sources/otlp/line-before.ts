/**
 * The line before a byte offset of a file read by lines: what a work share starting there
 * looks back at, so that a call instrumented twice whose two spans went out in two export
 * batches (two lines) is matched as it is when the file is read from its start (read.ts).
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { MAX_LINE_BYTES, readLineBatches, type Line } from '../lines.js';

const BACK_CHUNK = 64 << 10;

/** Where the line ending just before `end` (`end` is a line start, or the file's end) starts; null when it is longer than a line may be. */
function lineStartBefore(fd: number, end: number): number | null {
  // The byte at end - 1 is the newline closing that line: its start follows the newline before.
  let to = end - 1;
  const chunk = Buffer.allocUnsafe(BACK_CHUNK);
  while (to > 0) {
    const from = Math.max(0, to - BACK_CHUNK);
    const n = readSync(fd, chunk, 0, to - from, from);
    const at = chunk.subarray(0, n).lastIndexOf(0x0a);
    if (at !== -1) return from + at + 1;
    if (end - from > MAX_LINE_BYTES + 2) return null;
    to = from;
  }
  return 0;
}

/**
 * The last line that is not blank before the line starting at `offset`, as the line reader
 * yields it (a line too long to be a record flagged `tooLong`, as when read in order), or null
 * when there is none.
 */
export async function lineBefore(path: string, offset: number): Promise<Line | null> {
  let end = offset;
  while (end > 0) {
    const fd = openSync(path, 'r');
    let start: number | null;
    try {
      start = lineStartBefore(fd, end);
    } finally {
      closeSync(fd);
    }
    // Longer than a record may be: the reader in order finds it too long too, and reads no span of it.
    if (start === null) return { bytes: Buffer.alloc(0), length: end - 1, tooLong: true, number: 0, offset: 0, terminated: true };
    let found: Line | null = null;
    for await (const lines of readLineBatches(path, { range: { start, end } })) if (lines.length > 0) found = lines[lines.length - 1];
    if (found !== null) return found;
    end = start;
  }
  return null;
}
