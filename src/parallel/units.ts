/**
 * Work shares for worker threads: contiguous byte ranges of the trace files, in file
 * order, so results merged in share order match a single pass exactly. Large files are
 * cut into several ranges; small ones are grouped.
 */
import { statSync } from 'node:fs';
import type { TraceFile } from '../sources/discover.js';

export interface FileRange {
  fileIndex: number;
  start: number;
  end: number;
}

export interface WorkShare {
  ranges: FileRange[];
  bytes: number;
}

const MIN_SHARE = 4 << 20;
const MAX_SHARE = 64 << 20;

export function fileSizes(files: readonly TraceFile[]): number[] {
  return files.map((f) => statSync(f.path).size);
}

/**
 * About `perWorker` shares for each worker, so a slow share does not leave one core idle;
 * `maxShare` bounds what one share's result holds in memory.
 */
export function planShares(sizes: readonly number[], workers: number, perWorker = 4, maxShare = MAX_SHARE): WorkShare[] {
  const total = sizes.reduce((a, b) => a + b, 0);
  const target = Math.min(maxShare, Math.max(MIN_SHARE, Math.ceil(total / (workers * perWorker))));
  const shares: WorkShare[] = [];
  let current: WorkShare = { ranges: [], bytes: 0 };
  sizes.forEach((size, fileIndex) => {
    let start = 0;
    while (start < size || (size === 0 && start === 0)) {
      const take = Math.min(size - start, target - current.bytes);
      const end = size === 0 ? 0 : start + Math.max(take, 1);
      current.ranges.push({ fileIndex, start, end: end >= size ? Infinity : end });
      current.bytes += end - start;
      start = end;
      if (current.bytes >= target) {
        shares.push(current);
        current = { ranges: [], bytes: 0 };
      }
      if (size === 0) break;
    }
  });
  if (current.ranges.length > 0) shares.push(current);
  return shares;
}
