// Preloaded into benchmarked Node processes (`node --import <this> ...`): at exit, writes the
// process's peak RSS in KB and its CPU time (user + system, every thread) in microseconds,
// space-separated, to the file named by $TRACES_BENCH_RSS_FILE. Needs nothing installed.
import { writeFileSync } from 'node:fs';

const file = process.env.TRACES_BENCH_RSS_FILE;
if (file) {
  process.on('exit', () => {
    try {
      const usage = process.resourceUsage();
      writeFileSync(file, `${usage.maxRSS} ${usage.userCPUTime + usage.systemCPUTime}`);
    } catch {
      // the measurement is optional
    }
  });
}
