/**
 * A worker of bench/warmup.ts: runs the `stats` job over its shares and times each; or, over
 * the share's bytes read beforehand, one kind of work alone (see `WarmupJob`): the strict JSON
 * check every command makes of every line, `JSON.parse` of every line, or the native byte
 * search (`indexOf`, memchr) that skips string bodies.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { checkJsonText } from '../src/canonical/scan.js';
import { JOBS } from '../src/parallel/jobs.js';
import { runJob } from '../src/parallel/job.js';
import type { TraceFile } from '../src/sources/discover.js';
import type { WorkShare } from '../src/parallel/units.js';
import type { WarmupJob } from './warmup.js';

const { files, shares, job } = workerData as { files: TraceFile[]; shares: WorkShare[]; job: WarmupJob };

function shareBytes(share: WorkShare): Buffer[] {
  return share.ranges.map((range) => {
    const fd = openSync(files[range.fileIndex].path, 'r');
    try {
      const end = range.end === Infinity ? range.start + share.bytes : range.end;
      const bytes = Buffer.allocUnsafe(end - range.start);
      return bytes.subarray(0, readSync(fd, bytes, 0, bytes.length, range.start));
    } finally {
      closeSync(fd);
    }
  });
}

/**
 * `work` on each whole line of the ranges (a range's cut lines are left out: they are few); a
 * damaged line costs its work like any other. A worker runs one kind, so `work` stays inlined.
 */
function eachLine(ranges: Buffer[], work: (bytes: Buffer, start: number, end: number) => void): void {
  for (const bytes of ranges) {
    let start = bytes.indexOf(0x0a) + 1;
    for (let end = bytes.indexOf(0x0a, start); end !== -1; start = end + 1, end = bytes.indexOf(0x0a, start)) {
      try {
        work(bytes, start, end);
      } catch {
        // Damaged: counted in the time all the same.
      }
    }
  }
}

const checkLines = (ranges: Buffer[]): void => eachLine(ranges, (bytes, start, end) => checkJsonText(bytes, start, end));
/** `JSON.parse` of each line, as the anchor loop does. */
const parseLines = (ranges: Buffer[]): void => eachLine(ranges, (bytes, start, end) => JSON.parse(bytes.toString('utf8', start, end)));

/** Every quote of the bytes found with `indexOf`: the native search alone, without the JavaScript around it. */
function searchQuotes(ranges: Buffer[]): number {
  let found = 0;
  for (const bytes of ranges) for (let at = bytes.indexOf(0x22); at !== -1; at = bytes.indexOf(0x22, at + 1)) found++;
  return found;
}

const ON_BYTES: Record<Exclude<WarmupJob, 'stats'>, (ranges: Buffer[]) => unknown> = { check: checkLines, parse: parseLines, memchr: searchQuotes };

const times: number[] = [];
/** Times `work` alone: the bytes it reads are read before. */
async function timed(work: () => unknown): Promise<void> {
  const started = performance.now();
  await work();
  times.push(performance.now() - started);
}
for (const share of shares) {
  if (job === 'stats') await timed(() => runJob(JOBS.stats, { files, share, prices: null }));
  else {
    const bytes = shareBytes(share);
    await timed(() => ON_BYTES[job](bytes));
  }
}
parentPort!.postMessage(times);
