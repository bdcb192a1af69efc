/**
 * A worker of bench/warmup.ts: runs the `stats` job over its shares and times each; or, for
 * `check`, only the strict JSON check every command makes of every line, over the share's
 * bytes read beforehand: what reading costs in JavaScript before a single field is used.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { checkJsonText } from '../src/canonical/scan.js';
import { JOBS } from '../src/jobs.js';
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

/** Checks each whole line of the ranges (a range's cut lines are left out: they are few). */
function checkLines(ranges: Buffer[]): void {
  for (const bytes of ranges) {
    let start = bytes.indexOf(0x0a) + 1;
    for (let end = bytes.indexOf(0x0a, start); end !== -1; start = end + 1, end = bytes.indexOf(0x0a, start)) {
      try {
        checkJsonText(bytes, start, end);
      } catch {
        // A damaged line costs its check like any other.
      }
    }
  }
}

const times: number[] = [];
for (const share of shares) {
  const bytes = job === 'check' ? shareBytes(share) : null;
  const started = performance.now();
  if (bytes !== null) checkLines(bytes);
  else await runJob(JOBS.stats, { files, share, prices: null });
  times.push(performance.now() - started);
}
parentPort!.postMessage(times);
