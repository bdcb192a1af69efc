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
/** The smallest share the tail is cut into: below this, handing a share over costs more than it balances. */
const MIN_TAIL_SHARE = 1 << 20;

export function fileSizes(files: readonly TraceFile[]): number[] {
  return files.map((f) => statSync(f.path).size);
}

/**
 * About `perWorker` shares for each worker, so a slow share does not leave one core idle;
 * `maxShare` bounds what one share's result holds in memory. Shares shrink towards the end
 * (guided scheduling: each at most a `2 × workers`-th of what is left), so the threads
 * finish together instead of one waiting on another's last big share.
 */
export function planShares(sizes: readonly number[], workers: number, perWorker = 4, maxShare = MAX_SHARE): WorkShare[] {
  const total = sizes.reduce((a, b) => a + b, 0);
  const target = Math.min(maxShare, Math.max(MIN_SHARE, Math.ceil(total / (workers * perWorker))));
  const smallest = Math.min(target, MIN_TAIL_SHARE);
  let remaining = total;
  const sizeOfNext = (): number => Math.max(smallest, Math.min(target, Math.ceil(remaining / (2 * workers))));
  const shares: WorkShare[] = [];
  let current: WorkShare = { ranges: [], bytes: 0 };
  let wanted = sizeOfNext();
  sizes.forEach((size, fileIndex) => {
    let start = 0;
    while (start < size || (size === 0 && start === 0)) {
      const take = Math.min(size - start, wanted - current.bytes);
      const end = size === 0 ? 0 : start + Math.max(take, 1);
      current.ranges.push({ fileIndex, start, end: end >= size ? Infinity : end });
      current.bytes += end - start;
      remaining -= end - start;
      start = end;
      if (current.bytes >= wanted) {
        shares.push(current);
        current = { ranges: [], bytes: 0 };
        wanted = sizeOfNext();
      }
      if (size === 0) break;
    }
  });
  if (current.ranges.length > 0) shares.push(current);
  return shares;
}
