/**
 * `traces stats` on an OTLP span file against a Synalinks tree of the same size, per byte.
 *
 *   npm run build && node dist/bench/otlp.js [--mb 1024] [--runs 3] [--keep]
 *
 * The OTLP file is made from the genuine fixtures (test/fixtures/otel, written by the real
 * instrumentations): their lines are repeated with fresh trace and span ids and a counter in
 * every message text, so each copy is a new call, until the file holds `--mb` MB, one
 * ExportTraceServiceRequest per line as the Collector's file exporter writes. The Synalinks
 * tree is bench/generate.ts's small profile (records of about 2 KB, files of about 10 MB).
 * Both are read once to warm the page cache, then timed alternately; medians are reported,
 * with the ratio of the OTLP file's bytes per second to the tree's. The browser's index is
 * also opened on each (browse-store-rss.ts), for its peak RSS: a span file's records are set
 * aside on disk, so it should need about what a tree of the same size does.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { generate } from './generate.js';

const PROJECT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const TRACES = path.join(PROJECT, 'bin', 'traces.js');
const FIXTURES = path.join(PROJECT, 'test', 'fixtures', 'otel');
const OUT = path.join(PROJECT, 'bench', 'out');
const MB = 1024 * 1024;

function option(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
}

const mb = option('--mb', 1024);
const runs = option('--runs', 3);
const keep = process.argv.includes('--keep');

function hex(n: number, width: number): string {
  return n.toString(16).padStart(width, '0').slice(-width);
}

/** The fixture lines, repeated with new ids and texts until the file holds `mb` MB. */
function writeOtlp(file: string): void {
  const lines = readdirSync(FIXTURES)
    .filter((f) => f.endsWith('.jsonl') && f !== 'server-log.jsonl')
    .flatMap((f) => readFileSync(path.join(FIXTURES, f), 'utf8').split('\n'))
    .filter((l) => l.includes('resourceSpans'));
  const fd = openSync(file, 'w');
  let written = 0;
  let copy = 0;
  try {
    while (written < mb * MB) {
      copy++;
      for (const line of lines) {
        const out = line
          .replace(/"traceId":"([0-9a-f]{32})"/g, (_m, id: string) => `"traceId":"${id.slice(0, 24)}${hex(copy, 8)}"`)
          .replace(/"(spanId|parentSpanId)":"([0-9a-f]{16})"/g, (_m, key: string, id: string) => `"${key}":"${id.slice(0, 8)}${hex(copy, 8)}"`)
          .replace(/(What is|Describe|Compare|Name|Is|Tell me)/g, `$1 (#${copy})`);
        written += writeSync(fd, out + '\n');
        if (written >= mb * MB) break;
      }
    }
  } finally {
    closeSync(fd);
  }
}

function bytesUnder(target: string): number {
  const info = statSync(target);
  if (info.isFile()) return info.size;
  return readdirSync(target, { recursive: true, encoding: 'utf8' }).reduce((sum, f) => {
    const s = statSync(path.join(target, f));
    return s.isFile() ? sum + s.size : sum;
  }, 0);
}

function timeStats(target: string): number {
  const started = process.hrtime.bigint();
  const result = spawnSync(process.execPath, [TRACES, 'stats', target, '--json'], { encoding: 'utf8', maxBuffer: 64 * MB });
  if (result.status !== 0) throw new Error(`stats ${target}: ${result.stderr}`);
  return Number(process.hrtime.bigint() - started) / 1e9;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

mkdirSync(OUT, { recursive: true });
const otlp = path.join(OUT, `otlp-${mb}.jsonl`);
const tree = path.join(OUT, `tree-small-${mb}-1`);
// Only what this run made is removed at the end: a tree `npm run bench -- --keep` left is reused and kept.
const made = { otlp: !existsSync(otlp), tree: !existsSync(tree) };
if (made.otlp) writeOtlp(otlp);
if (made.tree) generate({ out: tree, mb, seed: 1, profile: 'small' });
const sizes = { otlp: bytesUnder(otlp), tree: bytesUnder(tree) };
timeStats(otlp);
timeStats(tree);
const times: { otlp: number[]; tree: number[] } = { otlp: [], tree: [] };
for (let i = 0; i < runs; i++) {
  times.otlp.push(timeStats(otlp));
  times.tree.push(timeStats(tree));
}
/** The browser's index opened on `target`, in a process of its own: its peak RSS. */
function browseStore(target: string): { records: number; peak_rss_mb: number } {
  const result = spawnSync(process.execPath, [path.join(PROJECT, 'dist', 'bench', 'browse-store-rss.js'), target], { encoding: 'utf8', maxBuffer: 64 * MB });
  if (result.status !== 0) throw new Error(`browse store ${target}: ${result.stderr}`);
  return JSON.parse(result.stdout) as { records: number; peak_rss_mb: number };
}
const browse = { otlp: browseStore(otlp), tree: browseStore(tree) };
const rate = (bytes: number, seconds: number) => bytes / MB / seconds;
const otlpRate = rate(sizes.otlp, median(times.otlp));
const treeRate = rate(sizes.tree, median(times.tree));
process.stdout.write(
  JSON.stringify(
    {
      otlp: { bytes: sizes.otlp, seconds: times.otlp, mb_per_s: Number(otlpRate.toFixed(1)) },
      synalinks_small: { bytes: sizes.tree, seconds: times.tree, mb_per_s: Number(treeRate.toFixed(1)) },
      ratio_otlp_per_byte_vs_synalinks: Number((otlpRate / treeRate).toFixed(2)),
      browse_index: { otlp: browse.otlp, synalinks_small: browse.tree, peak_rss_ratio_otlp_vs_synalinks: Number((browse.otlp.peak_rss_mb / browse.tree.peak_rss_mb).toFixed(2)) },
    },
    null,
    2,
  ) + '\n',
);
if (!keep) {
  if (made.otlp) rmSync(otlp, { force: true });
  if (made.tree) rmSync(tree, { recursive: true, force: true });
}
