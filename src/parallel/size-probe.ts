/**
 * Whether a command line names at least `bytes` of files, found before the command's own
 * discovery runs: the worker threads can then start booting while the command loads. Rough on
 * purpose: every existing path on the line counts (an option's value too), and the walk stops
 * at the first `bytes` or `maxEntries` entries, so it costs a few ms however big the tree.
 */
import { statSync, readdirSync } from 'node:fs';
import path from 'node:path';

export function namesAtLeast(paths: readonly string[], bytes: number, maxEntries = 5000): boolean {
  let total = 0;
  let seen = 0;
  const stack = [...paths];
  while (stack.length > 0) {
    const at = stack.pop()!;
    if (++seen > maxEntries) return true;
    let info;
    try {
      info = statSync(at);
    } catch {
      continue;
    }
    if (info.isFile()) {
      total += info.size;
      if (total >= bytes) return true;
    } else if (info.isDirectory()) {
      let names: string[];
      try {
        names = readdirSync(at);
      } catch {
        continue;
      }
      for (const name of names) stack.push(path.join(at, name));
    }
  }
  return false;
}
