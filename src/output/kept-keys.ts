/**
 * Every output records the dedupe keys it kept under `_traces/`, so a later run given
 * `--against` that output drops what was handled before. Keys accumulate: an output made
 * `--against` an earlier one also carries the earlier keys.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { UserError } from '../errors.js';
import { KeyIndex } from '../pipeline/key-index.js';
import { DEFAULT_KEY, KEYS_VERSION, type KeyKind } from '../pipeline/keys.js';
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

/** The keys version from which each kind's keys are made as today: the recorded hashes are folded whole since 2, and mixed with the module since 3. */
const SAME_KEYS_SINCE: Record<KeyKind, number> = { 'inputs,config': 2, inputs: 2, 'inputs,config,module': 3, conversation: 1 };

/** Why an earlier output's keys cannot serve this run, or null when they can. */
function againstMismatch(dir: string, run: RunInfo, expectedKey: KeyKind): string | null {
  if (run.key === 'inputs,config' && expectedKey === DEFAULT_KEY) {
    return (
      `--against ${dir} was made with --key inputs,config, the default before records of different modules were kept apart ` +
      `(it dropped an agent's final answer as a duplicate of its last tool step, since both share the recorded hashes). ` +
      `Either make that output again with today's default (traces ${run.command} ... --force) and compare against it, ` +
      `or pass --key inputs,config to compare like with like, merging across modules as that output did`
    );
  }
  if (run.key !== expectedKey) return `--against ${dir} was made with --key ${run.key}; run again with --key ${run.key} to compare like with like`;
  if ((run.keys_version ?? 1) < SAME_KEYS_SINCE[run.key]) {
    return `--against ${dir} was made by an earlier traces, whose --key ${run.key} keys cannot be compared with this one's: run that ${run.command} again (with --force) to refresh its ${META_DIR}/${KEYS_FILE}`;
  }
  return null;
}

export function writeKeptKeys(output: OutputDir, keys: KeyIndex, info: Omit<RunInfo, 'keys' | 'created'>): void {
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
  const mismatch = againstMismatch(dir, run, expectedKey);
  if (mismatch !== null) throw new UserError(mismatch);
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
