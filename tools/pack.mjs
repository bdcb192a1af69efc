#!/usr/bin/env node
/**
 * `npm pack` / `npm publish` steps (package.json prepack and postpack).
 *
 *   clean          remove dist/src, so no file of a deleted module ships
 *   strip-prepare  drop `prepare` from package.json until `restore`
 *   restore        put package.json back as it was
 *
 * Why strip `prepare`: in a clone it builds dist/ on `npm ci` (the README's quick start).
 * The tarball ships dist/ already, and npm 11 warns about a package installed from a file
 * that has a `prepare` script, as it does about install scripts.
 */
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const manifest = path.join(root, 'package.json');
const backup = path.join(root, 'package.json.before-pack');

const step = process.argv[2];
if (step === 'clean') {
  rmSync(path.join(root, 'dist', 'src'), { recursive: true, force: true });
} else if (step === 'strip-prepare') {
  // A backup left by a pack that failed before postpack is the real package.json.
  if (existsSync(backup)) renameSync(backup, manifest);
  const text = readFileSync(manifest, 'utf8');
  const pkg = JSON.parse(text);
  writeFileSync(backup, text);
  delete pkg.scripts.prepare;
  writeFileSync(manifest, `${JSON.stringify(pkg, null, 2)}\n`);
} else if (step === 'restore') {
  if (existsSync(backup)) renameSync(backup, manifest);
} else {
  process.stderr.write(`usage: node tools/pack.mjs clean|strip-prepare|restore\n`);
  process.exitCode = 2;
}
