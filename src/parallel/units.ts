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
  return files.map((f) => f.size ?? statSync(f.path).size);
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

/**
 * Shares of a pass over kept lines only (export's projection), cut by kept records rather than
 * input bytes: its work is per kept record. Cut by bytes, a share of trajectory prefixes (all
 * giving way) took 5 ms and one of final answers 300 ms, and this thread, running ahead over
 * light shares, then waited on a worker's heavy one. A file is cut only where `cuttable` says,
 * at a kept line's offset; the rest of a file and files with nothing kept ride along, so the
 * shares still cover every byte (progress). Shares shrink towards the end, as in `planShares`.
 */
export function planKeptShares(
  sizes: readonly number[],
  keptOffsets: ReadonlyMap<number, Float64Array>,
  cuttable: (fileIndex: number) => boolean,
  workers: number,
  recordsPerShare: number,
): WorkShare[] {
  let remaining = 0;
  for (const offsets of keptOffsets.values()) remaining += offsets.length;
  const smallest = Math.max(1, recordsPerShare >> 3);
  const sizeOfNext = (): number => Math.max(smallest, Math.min(recordsPerShare, Math.ceil(remaining / (2 * workers))));
  const shares: WorkShare[] = [];
  let current: WorkShare = { ranges: [], bytes: 0 };
  let records = 0;
  let wanted = sizeOfNext();
  const close = (): void => {
    shares.push(current);
    current = { ranges: [], bytes: 0 };
    records = 0;
    wanted = sizeOfNext();
  };
  sizes.forEach((size, fileIndex) => {
    const offsets = keptOffsets.get(fileIndex) ?? new Float64Array(0);
    let first = 0;
    let start = 0;
    if (cuttable(fileIndex)) {
      while (offsets.length - first > wanted - records) {
        first += wanted - records;
        remaining -= wanted - records;
        const end = offsets[first];
        current.ranges.push({ fileIndex, start, end });
        current.bytes += end - start;
        start = end;
        close();
      }
    }
    current.ranges.push({ fileIndex, start, end: Infinity });
    current.bytes += size - start;
    records += offsets.length - first;
    remaining -= offsets.length - first;
    if (records >= wanted) close();
  });
  if (current.ranges.length > 0) shares.push(current);
  return shares;
}
