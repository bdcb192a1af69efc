// The trace files of a Synalinks tree as bench/baselines/tracetree.py finds them, for the Node
// baselines (shared so that every baseline reads the same files).
import { readdirSync } from 'node:fs';
import path from 'node:path';

const NAME = /^(.+)_\d{8}-\d{6}\.jsonl$/;

export function traceFiles(root) {
  const out = [];
  const walk = (dir, depth) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (depth < 3) walk(full, depth + 1);
        continue;
      }
      const rel = path.relative(root, full).split(path.sep);
      const m = NAME.exec(entry.name);
      if (m && (rel.length === 2 || rel.length === 3) && rel[0] !== 'datasets' && m[1] === rel[rel.length - 2]) out.push(full);
    }
  };
  walk(root, 1);
  return out.sort();
}
