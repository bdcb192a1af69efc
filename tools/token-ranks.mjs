#!/usr/bin/env node
/**
 * Writes gpt-tokenizer's rank tables with v8.serialize beside the compiled tokenizer
 * (dist/src/targets/token-ranks/), after `tsc`: see src/targets/token-ranks.ts for why and
 * how they are checked. A table already made from the installed module is left as it is.
 *
 *   node tools/token-ranks.mjs [FOLDER]    (FOLDER: elsewhere than dist/, for tests)
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { deserialize, serialize } from 'node:v8';

const ENCODINGS = ['o200k_base', 'cl100k_base'];
const folder = process.argv[2] ?? fileURLToPath(new URL('../dist/src/targets/token-ranks/', import.meta.url));
mkdirSync(folder, { recursive: true });

function writtenFrom(file) {
  try {
    return deserialize(readFileSync(file)).source;
  } catch {
    return null;
  }
}

for (const encoding of ENCODINGS) {
  const specifier = `gpt-tokenizer/bpeRanks/${encoding}`;
  const source = createHash('sha256').update(readFileSync(fileURLToPath(import.meta.resolve(specifier)))).digest('hex');
  const file = path.join(folder, `${encoding}.v8`);
  if (writtenFrom(file) === source) continue;
  const ranks = (await import(specifier)).default;
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, serialize({ source, ranks }));
  renameSync(temporary, file);
}
