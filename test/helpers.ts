/** Shared test helpers: paths, temp folders and running the real CLI. */
import { execFile, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { generate, GENERATOR_VERSION, type Expected, type GenerateOptions } from '../bench/generate.js';
import { canonicalValueHash } from '../src/canonical/canonical.js';

/** The repository root (tests run from dist/test/). */
export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const SAMPLES = path.join(REPO, 'samples', 'synalinks');
export const FIXTURES = path.join(REPO, 'test', 'fixtures');
/** A copy of shared/fixtures/synalinks-golden, so the suite runs wherever the repository is cloned. */
export const GOLDEN = path.join(FIXTURES, 'synalinks-golden');
const BIN = path.join(REPO, 'bin', 'traces.js');

export interface CliResult {
  status: number;
  stdout: string;
  stderr: string;
}

export function runCli(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string } = {}): CliResult {
  const result = spawnSync(process.execPath, [BIN, ...args], {
    cwd: options.cwd ?? REPO,
    env: { ...process.env, ...options.env },
    encoding: 'utf8',
    input: options.input,
    maxBuffer: 256 << 20,
  });
  return { status: result.status ?? -1, stdout: result.stdout, stderr: result.stderr };
}

/** runCli without blocking: several commands can run at once (the compliance test runs a source's commands side by side). */
export function runCliAsync(args: string[], options: { env?: NodeJS.ProcessEnv } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [BIN, ...args], { cwd: REPO, env: { ...process.env, ...options.env }, encoding: 'utf8', maxBuffer: 256 << 20 }, (error, stdout, stderr) => {
      const status = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
      if (status === null) reject(error);
      else resolve({ status, stdout, stderr });
    });
  });
}

export function runCliJson<T = Record<string, unknown>>(args: string[], options?: Parameters<typeof runCli>[1]): T {
  const result = runCli([...args, '--json'], options);
  if (result.stdout.trim() === '') throw new Error(`no JSON output (exit ${result.status}): ${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}

const tempDirs: string[] = [];

/** A fresh temporary folder, removed when the test's process ends. */
export function tempDir(prefix = 'traces-test-'): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  // One exit listener for all of them: a listener per folder tripped MaxListenersExceededWarning.
  if (tempDirs.length === 0) process.on('exit', () => tempDirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
  tempDirs.push(dir);
  return dir;
}

/**
 * Where generated trees are kept between runs: the checkout's own cache folder
 * (node_modules/.cache, as other tools keep theirs), not the temp folder, which the suite
 * leaves as it found it.
 */
const TREE_CACHE = path.join(REPO, 'node_modules', '.cache', 'traces-test-trees');

/**
 * A tree from the benchmark generator, generated once per checkout and reused by every test
 * file and run asking for the same options. Keyed by the options and GENERATOR_VERSION;
 * staged in a private folder and renamed into place, so a file never sees a half-written
 * tree. Tests only read it.
 */
export function generatedTree(options: Omit<GenerateOptions, 'out'>): { tree: string; expected: Expected } {
  const key = createHash('sha256').update(JSON.stringify({ version: GENERATOR_VERSION, ...options })).digest('hex').slice(0, 16);
  const dir = path.join(TREE_CACHE, key);
  const expectedFile = path.join(dir, 'expected.json');
  if (!existsSync(expectedFile)) {
    mkdirSync(path.dirname(dir), { recursive: true });
    const staging = mkdtempSync(path.join(path.dirname(dir), `${key}.staging-`));
    writeFileSync(path.join(staging, 'expected.json'), JSON.stringify(generate({ out: path.join(staging, 'tree'), ...options })));
    try {
      renameSync(staging, dir);
    } catch {
      // Another test file renamed the same tree into place first.
      rmSync(staging, { recursive: true, force: true });
    }
  }
  return { tree: path.join(dir, 'tree'), expected: JSON.parse(readFileSync(expectedFile, 'utf8')) as Expected };
}

/** mulberry32: a small seeded generator, the same everywhere, so a failure names a reproducible case. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The LanguageModel config of a hand-made test record calling `model`. */
export function testConfig(model = 'openai/gpt-4o-mini') {
  return {
    module: 'synalinks',
    class_name: 'LanguageModel',
    config: { model, api_base: null, name: 'language_model', description: 'A language model API wrapper.' },
    registered_name: null,
  };
}

/** The LanguageModel config the hand-made test records share. */
export const TEST_CONFIG = testConfig();

/**
 * One Synalinks record line as the Recorder writes it, with genuine hashes: `messages` ends
 * with the completion. `outputs` is that message unless `outputsText` gives the recorded JSON
 * (a structured call's parsed object, its number text kept); `model` names the model called.
 */
export function synalinksLine(record: { index: number; callId?: string; program: string; module: string; messages: object[]; outputsText?: string; model?: string }): string {
  const { index, messages } = record;
  const config = record.model === undefined ? TEST_CONFIG : testConfig(record.model);
  const line = JSON.stringify({
    synalinks_version: '0.9.014',
    call_id: record.callId ?? `00000000-0000-4000-8000-${String(index).padStart(12, '0')}`,
    parent_call_id: null,
    program: record.program,
    module: record.module,
    timestamp: 1783412130 + index,
    duration: 1.5,
    usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120, cached_tokens: 0, cache_creation_tokens: 0, reasoning_tokens: 0 },
    cost: 0.001,
    messages,
    inputs_hash: canonicalValueHash(messages.slice(0, -1)),
    outputs: record.outputsText === undefined ? messages.at(-1) : '__OUTPUTS__',
    config,
    config_hash: canonicalValueHash(config),
  });
  const outputsText = record.outputsText;
  return outputsText === undefined ? line : line.replace('"__OUTPUTS__"', () => outputsText);
}

/**
 * A Synalinks tree of one module (`prog/gen`) whose records ask these user texts, each answered
 * `answer <i>`, with genuine hashes: the root folder.
 */
export function chatTree(userTexts: string[], prefix = 'traces-test-'): string {
  const tree = path.join(tempDir(prefix), 'tree');
  const dir = path.join(tree, 'prog', 'gen');
  mkdirSync(dir, { recursive: true });
  const lines = userTexts.map((text, index) =>
    synalinksLine({ index, program: 'prog', module: 'gen', messages: [{ role: 'user', content: text }, { role: 'assistant', content: `answer ${index}` }] }),
  );
  writeFileSync(path.join(dir, 'gen_20260101-000000.jsonl'), `${lines.join('\n')}\n`);
  return tree;
}

/** The garbage collector, to call from a test (node runs tests without --expose-gc). */
export function collectGarbage(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

/** Two full collections, then the bytes the heap and array buffers still hold: what a structure keeps alive. */
export function bytesHeld(): number {
  const gc = collectGarbage();
  gc();
  gc();
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.arrayBuffers;
}

/**
 * A command's human output with its wrapping undone: every run of white space one space. For
 * tests of what a summary says, not of its layout (summaries wrap at 80 columns).
 */
export function flat(text: string): string {
  return text.replace(/\s+/g, ' ');
}

/** runCli's options for a test of a summary's logical lines (the last line, a line per reason): no wrapping. */
export const UNWRAPPED = { env: { ...process.env, COLUMNS: String(2 ** 20) } };
