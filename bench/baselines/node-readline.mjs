#!/usr/bin/env node
// Baseline for `traces stats`: the plain Node loop (readline + JSON.parse per line) that
// `traces stats` replaces. Counts classes and distinct ok (inputs_hash, config_hash) keys.
//
//   node bench/baselines/node-readline.mjs TREE
import { createReadStream, readdirSync } from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';

const NAME = /^(.+)_\d{8}-\d{6}\.jsonl$/;

function traceFiles(root) {
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

const counts = { records: 0, ok: 0, exception: 0, no_output: 0, damaged_lines: 0, unique_ok_keys: 0 };
const keys = new Set();
const files = traceFiles(process.argv[2]);
for (const file of files) {
  const lines = readline.createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  for await (const line of lines) {
    let rec;
    try {
      rec = JSON.parse(line);
    } catch {
      counts.damaged_lines++;
      continue;
    }
    if (rec === null || typeof rec !== 'object' || !('synalinks_version' in rec)) {
      counts.damaged_lines++;
      continue;
    }
    counts.records++;
    if ('exception' in rec) counts.exception++;
    else if (rec.outputs === null || rec.outputs === undefined) counts.no_output++;
    else {
      counts.ok++;
      keys.add(`${rec.inputs_hash}:${rec.config_hash}`);
    }
  }
}
counts.unique_ok_keys = keys.size;
counts.files = files.length;
process.stdout.write(JSON.stringify(counts) + '\n');
