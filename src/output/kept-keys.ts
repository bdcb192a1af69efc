/**
 * Every output records the dedupe keys it kept under `_traces/`, so a later run given
 * `--against` that output drops what was handled before. Keys accumulate: an output made
 * `--against` an earlier one also carries the earlier keys.
 */
import { closeSync, existsSync, openSync, readFileSync, readSync } from 'node:fs';
import path from 'node:path';
import { UserError } from '../errors.js';
import { KeyIndex } from '../pipeline/key-index.js';
import { KEYS_VERSION, type KeyKind } from '../pipeline/keys.js';
import { RunTempDir } from '../pipeline/spill.js';
import { writeAll } from './write-all.js';
import { COMPLETE_MARKER, META_DIR, type OutputDir } from './output-dir.js';
import { readsAlso } from './output-path.js';

const KEYS_FILE = 'keys.bin';
const RUN_FILE = 'run.json';

export interface RunInfo {
  command: string;
  key: KeyKind;
  /** How the keys were made (`KEYS_VERSION`); absent in outputs of version 1. */
  keys_version?: number;
  keys: number;
  created: string;
}

/** Keys made from the recorded hashes changed with version 2; the others are hashes of what they cover, as before. */
const FOLDED_KEYS: readonly KeyKind[] = ['inputs,config', 'inputs'];

/**
 * Kept keys set aside in a temporary file, as keys.bin will hold them: a run that has more to
 * do (export's projection) frees the index meanwhile, and still writes its files in their order.
 */
export class HeldKeys {
  private readonly dir = new RunTempDir();
  private readonly file = path.join(this.dir.path, KEYS_FILE);
  readonly size: number;

  constructor(keys: KeyIndex) {
    this.size = keys.size;
    const fd = openSync(this.file, 'wx');
    try {
      for (const block of keys.keyBlocks()) writeAll(fd, block, this.file);
    } finally {
      closeSync(fd);
    }
  }

  /** The keys as written, a reused block at a time; the file goes once read through. */
  *keyBlocks(): Generator<Uint8Array> {
    const block = new Uint8Array(1 << 16);
    const fd = openSync(this.file, 'r');
    try {
      for (let read = readSync(fd, block); read > 0; read = readSync(fd, block)) yield block.subarray(0, read);
    } finally {
      closeSync(fd);
      this.dispose();
    }
  }

  private disposed = false;

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.dir.remove();
  }
}

export function writeKeptKeys(output: OutputDir, keys: KeyIndex | HeldKeys, info: Omit<RunInfo, 'keys' | 'created'>): void {
  const file = output.create(path.join(META_DIR, KEYS_FILE));
  // Keys go out a block at a time: one buffer per key was 88,000 buffers on the bench tree.
  for (const block of keys.keyBlocks()) file.write(block);
  const run: RunInfo = { ...info, keys_version: KEYS_VERSION, keys: keys.size, created: new Date().toISOString() };
  output.create(path.join(META_DIR, RUN_FILE)).write(`${JSON.stringify(run, null, 2)}\n`);
}

export function readKeptKeys(dir: string, expectedKey: KeyKind): KeyIndex {
  readsAlso(dir);
  const runPath = path.join(dir, META_DIR, RUN_FILE);
  const keysPath = path.join(dir, META_DIR, KEYS_FILE);
  if (existsSync(path.join(dir, META_DIR)) && !existsSync(path.join(dir, COMPLETE_MARKER))) {
    throw new UserError(`--against ${dir} is incomplete, from an interrupted run: rerun that run (with --force) before comparing against it`);
  }
  if (!existsSync(runPath) || !existsSync(keysPath)) {
    throw new UserError(`--against ${dir}: not an output of traces dedupe, filter or export (no ${META_DIR}/${RUN_FILE})`);
  }
  const run = JSON.parse(readFileSync(runPath, 'utf8')) as RunInfo;
  if (run.key !== expectedKey) {
    throw new UserError(`--against ${dir} was made with --key ${run.key}; run again with --key ${run.key} to compare like with like`);
  }
  if (FOLDED_KEYS.includes(run.key) && (run.keys_version ?? 1) < KEYS_VERSION) {
    throw new UserError(
      `--against ${dir} was made by an earlier traces, whose --key ${run.key} keys cannot be compared with this one's: run that ${run.command} again (with --force) to refresh its ${META_DIR}/${KEYS_FILE}`,
    );
  }
  const bytes = readFileSync(keysPath);
  if (bytes.length % 16 !== 0) throw new UserError(`--against ${dir}: ${META_DIR}/${KEYS_FILE} is damaged (size not a multiple of 16)`);
  const index = new KeyIndex(Math.max(16, (bytes.length / 16) * 2));
  const key = new Uint32Array(4);
  for (let at = 0; at < bytes.length; at += 16) {
    for (let i = 0; i < 4; i++) key[i] = bytes.readUInt32BE(at + i * 4);
    index.set(key, 0);
  }
  return index;
}
