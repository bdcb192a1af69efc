// Preloaded into benchmarked Node processes (`node --import <this> ...`): at exit, writes the
// process's peak RSS in KB to the file named by $TRACES_BENCH_RSS_FILE. Needs nothing installed.
import { writeFileSync } from 'node:fs';

const file = process.env.TRACES_BENCH_RSS_FILE;
if (file) {
  process.on('exit', () => {
    try {
      writeFileSync(file, String(process.resourceUsage().maxRSS));
    } catch {
      // the measurement is optional
    }
  });
}
