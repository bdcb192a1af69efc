#!/usr/bin/env node
// Baseline for `traces stats`: the plain Node loop (readline + JSON.parse per line) that
// `traces stats` replaces. Counts classes and distinct ok (inputs_hash, config_hash) keys.
//
//   node bench/baselines/node-readline.mjs TREE
import { createReadStream } from 'node:fs';
import readline from 'node:readline';
import { traceFiles } from './trace-files.mjs';

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
