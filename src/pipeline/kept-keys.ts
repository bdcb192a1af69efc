/**
 * Every output records the dedupe keys it kept under `_traces/`, so a later run given
 * `--against` that output drops what was handled before. Keys accumulate: an output made
 * `--against` an earlier one also carries the earlier keys.
 */
import { createHash } from 'node:crypto';
import { closeSync, existsSync, openSync, readFileSync, readSync } from 'node:fs';
import path from 'node:path';
import { UserError } from '../errors.js';
import { KeyIndex } from './key-index.js';
import { DEFAULT_KEY, KEY_KINDS, KEYS_VERSION, type KeyKind } from './keys.js';
import { RunTempDir } from './spill.js';
import { writeAll } from '../output/write-all.js';
import { COMPLETE_MARKER, META_DIR, type OutputDir } from '../output/output-dir.js';

const KEYS_FILE = 'keys.bin';
const RUN_FILE = 'run.json';

export interface RunInfo {
  command: string;
  key: KeyKind;
  /** How the keys were made (`KEYS_VERSION`); absent in outputs of version 1. */
  keys_version?: number;
  /** How many keys keys.bin holds (16 bytes each). */
  keys: number;
  /** sha256 (hex) of keys.bin as written; absent in outputs made before it was recorded. */
  keys_sha256?: string;
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

/**
 * Kept keys in a temporary file, as keys.bin will hold them: the plan writes them there a
 * partition at a time (they are never all in memory), or a run sets an index's keys aside, and
 * keys.bin is written from the file in its old place, once the run has done the rest.
 */
export class HeldKeys {
  private readonly dir = new RunTempDir();
  private readonly file = path.join(this.dir.path, KEYS_FILE);
  private fd: number | null = openSync(this.file, 'wx');
  /** Keys added so far (16 bytes each). */
  size = 0;

  constructor(keys?: { keyBlocks(): Iterable<Uint8Array> }) {
    if (keys !== undefined) for (const block of keys.keyBlocks()) this.add(block);
  }

  /** Appends keys, 16 bytes each with every word big-endian (as `KeyIndex.keyBlocks` gives them). */
  add(block: Uint8Array): void {
    writeAll(this.fd!, block, this.file);
    this.size += block.length / 16;
  }

  /** The keys as written, a reused block at a time; the file goes once read through. */
  *keyBlocks(): Generator<Uint8Array> {
    this.closeWriting();
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

  private closeWriting(): void {
    if (this.fd === null) return;
    closeSync(this.fd);
    this.fd = null;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.closeWriting();
    this.dir.remove();
  }
}

/**
 * keys.bin, then run.json (its count and checksum), created in that order and so moved into
 * place in that order, before the completion marker: a run.json that says what keys.bin holds
 * is proof it was written whole.
 */
export function writeKeptKeys(output: OutputDir, keys: KeyIndex | HeldKeys, info: Omit<RunInfo, 'keys' | 'keys_sha256' | 'created'>): void {
  const file = output.create(path.join(META_DIR, KEYS_FILE));
  const checksum = createHash('sha256');
  // Keys go out a block at a time: one buffer per key was 88,000 buffers on the bench tree.
  for (const block of keys.keyBlocks()) {
    checksum.update(block);
    file.write(block);
  }
  const run: RunInfo = { ...info, keys_version: KEYS_VERSION, keys: keys.size, keys_sha256: checksum.digest('hex'), created: new Date().toISOString() };
  output.create(path.join(META_DIR, RUN_FILE)).write(`${JSON.stringify(run, null, 2)}\n`);
}

/** A refusal of damaged bookkeeping, saying how to get whole bookkeeping back. */
function damaged(dir: string, what: string): UserError {
  return new UserError(
    `--against ${dir}: ${what}: its bookkeeping is damaged, so what it already covers is unknown: run the command that made it again (with --force), or restore ${dir} from a whole copy`,
  );
}

/** run.json as written by `writeKeptKeys`, or why it cannot be that. */
function readRunInfo(dir: string, runPath: string): RunInfo {
  const where = `${META_DIR}/${RUN_FILE}`;
  let run: unknown;
  try {
    run = JSON.parse(readFileSync(runPath, 'utf8'));
  } catch (error) {
    if (error instanceof SyntaxError) throw damaged(dir, `${where} is not JSON (cut short?)`);
    throw error;
  }
  if (typeof run !== 'object' || run === null || Array.isArray(run)) throw damaged(dir, `${where} holds no object`);
  const info = run as Record<string, unknown>;
  if (typeof info.key !== 'string') throw damaged(dir, `${where} names no --key`);
  if (typeof info.command !== 'string') throw damaged(dir, `${where} names no command`);
  if (!Number.isSafeInteger(info.keys) || (info.keys as number) < 0) throw damaged(dir, `${where} gives no count of keys`);
  if (info.keys_version !== undefined && !Number.isSafeInteger(info.keys_version)) throw damaged(dir, `${where} has a keys_version that is no whole number`);
  if (info.keys_sha256 !== undefined && (typeof info.keys_sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(info.keys_sha256))) {
    throw damaged(dir, `${where} has a keys_sha256 that is no sha256`);
  }
  return info as unknown as RunInfo;
}

export function readKeptKeys(dir: string, expectedKey: KeyKind): KeyIndex {
  const runPath = path.join(dir, META_DIR, RUN_FILE);
  const keysPath = path.join(dir, META_DIR, KEYS_FILE);
  if (existsSync(path.join(dir, META_DIR)) && !existsSync(path.join(dir, COMPLETE_MARKER))) {
    throw new UserError(`--against ${dir} is incomplete, from an interrupted run: rerun that run (with --force) before comparing against it`);
  }
  if (!existsSync(runPath) || !existsSync(keysPath)) {
    throw new UserError(`--against ${dir}: not an output of traces dedupe, filter or export (no ${META_DIR}/${RUN_FILE})`);
  }
  const run = readRunInfo(dir, runPath);
  if (run.key !== expectedKey && !(KEY_KINDS as readonly string[]).includes(run.key)) {
    throw damaged(dir, `${META_DIR}/${RUN_FILE} names a --key traces has not (${run.key})`);
  }
  const mismatch = againstMismatch(dir, run, expectedKey);
  if (mismatch !== null) throw new UserError(mismatch);
  const bytes = readFileSync(keysPath);
  // A copy cut short often stops at a 4 KB boundary, a multiple of 16 like any whole file: the count tells.
  if (bytes.length !== run.keys * 16) {
    throw damaged(dir, `${META_DIR}/${KEYS_FILE} holds ${bytes.length} bytes where ${META_DIR}/${RUN_FILE} says ${run.keys} keys (${run.keys * 16} bytes)`);
  }
  // Outputs made before the checksum was recorded are proven by their count alone.
  if (run.keys_sha256 !== undefined && createHash('sha256').update(bytes).digest('hex') !== run.keys_sha256) {
    throw damaged(dir, `${META_DIR}/${KEYS_FILE} is not what was written (its sha256 differs from ${META_DIR}/${RUN_FILE}'s keys_sha256)`);
  }
  const index = new KeyIndex(Math.max(16, (bytes.length / 16) * 2));
  const key = new Uint32Array(4);
  for (let at = 0; at < bytes.length; at += 16) {
    for (let i = 0; i < 4; i++) key[i] = bytes.readUInt32BE(at + i * 4);
    index.set(key, 0);
  }
  return index;
}
