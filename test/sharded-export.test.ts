/**
 * Beyond one machine, whole (issue 43): a tree spread over several hosts, indexed per host,
 * given one keep-list and one tool file computed over every index in the embedded DuckDB,
 * and exported per host, gives exactly the examples one machine exporting the whole tree
 * writes, line for line, per split (and per dataset with --group-by module).
 *
 * The tree is real-shaped: the samples, the trees the genuine Synalinks Recorder wrote
 * (test/fixtures/genuine) and a generated tree (bench/generate.ts) with agents whose
 * tool-calling and final modules are different folders, near-duplicates, and the quiet
 * failures the quality stages drop (truncated, empty, broken answers).
 * It is spread three ways: by file, by program (top folders), and every line on another host.
 */
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { FIXTURES, generatedTree, REPO, runCli, SAMPLES, tempDir, flat } from './helpers.js';
import { Engine, sqlString } from '../src/engine/duckdb.js';

const HOSTS = 4;

/** Every file under `dir`, relative, sorted. */
function filesUnder(dir: string, under = ''): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(path.join(dir, under), { withFileTypes: true })) {
    const relative = path.join(under, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(dir, relative));
    else out.push(relative);
  }
  return out.sort();
}

/** The whole tree, on one machine: one root holding the samples, the genuine trees and a generated tree. */
function wholeTree(): string {
  const work = tempDir('traces-sharded-');
  const all = path.join(work, 'all');
  mkdirSync(all);
  cpSync(SAMPLES, path.join(all, 'samples'), { recursive: true });
  for (const name of ['bare-exponent', 'plus-exponent']) cpSync(path.join(FIXTURES, 'genuine', name, 'tree'), path.join(all, `genuine-${name}`), { recursive: true });
  const { tree } = generatedTree({ mb: 12, seed: 3, plantNearDuplicates: true, plantFailures: true });
  cpSync(tree, path.join(all, 'generated'), { recursive: true });
  return all;
}

type Spread = 'file' | 'program' | 'line';

/** Spreads the tree's files over HOSTS folders: whole files by file or by program, or each line of a trace file to another host. */
function spread(all: string, how: Spread): string[] {
  const work = tempDir(`traces-hosts-${how}-`);
  const hosts = Array.from({ length: HOSTS }, (_, k) => path.join(work, `host-${k}`));
  const files = filesUnder(all);
  const programs = [...new Set(files.map((f) => f.split(path.sep).slice(0, 2).join('/')))].sort();
  files.forEach((file, i) => {
    const source = path.join(all, file);
    const place = (host: number, bytes: Buffer | string) => {
      const target = path.join(hosts[host], file);
      mkdirSync(path.dirname(target), { recursive: true });
      writeFileSync(target, bytes);
    };
    // A root's own files (synalinks.json, its knowledge base) are on every host, as a deployed root's are.
    if (!file.endsWith('.jsonl')) return hosts.forEach((_, host) => place(host, readFileSync(source)));
    if (how === 'file') return place(i % HOSTS, readFileSync(source));
    if (how === 'program') return place(programs.indexOf(file.split(path.sep).slice(0, 2).join('/')) % HOSTS, readFileSync(source));
    const lines = readFileSync(source, 'utf8').split('\n');
    const last = lines.pop();
    const byHost: string[][] = hosts.map(() => []);
    // Record after record to the next host; a damaged line stays with the line before it (or after it, first),
    // so that no host's copy starts with one: discovery reads a file's first record to tell its folder's layout.
    const parses = (line: string) => {
      try {
        JSON.parse(line);
        return true;
      } catch {
        return false;
      }
    };
    let next = 0;
    let previous = -1;
    const allLines = last !== undefined && last !== '' ? [...lines.map((l) => `${l}\n`), last] : lines.map((l) => `${l}\n`);
    const pending: string[] = [];
    for (const line of allLines) {
      if (!parses(line)) {
        if (previous === -1) pending.push(line);
        else byHost[previous].push(line);
        continue;
      }
      previous = next;
      next = (next + 1) % HOSTS;
      byHost[previous].push(line, ...pending.splice(0));
    }
    if (pending.length > 0) byHost[0].push(...pending);
    byHost.forEach((mine, host) => mine.length > 0 && place(host, mine.join('')));
  });
  for (const host of hosts) mkdirSync(host, { recursive: true });
  return hosts;
}

/** Every example line an export wrote, by dataset folder and split, sorted (the hosts write in their own order). */
function examplesOf(out: string, into = new Map<string, string[]>()): Map<string, string[]> {
  if (!existsSync(out)) return into;
  for (const file of filesUnder(out)) {
    const match = /^(?:(.*)[/\\])?(training|validation)(?:-\d+)?\.jsonl$/.exec(file);
    if (match === null || file.startsWith('_traces')) continue;
    const key = `${match[1] ?? ''}:${match[2]}`;
    const lines = readFileSync(path.join(out, file), 'utf8').split('\n').filter((l) => l !== '');
    into.set(key, [...(into.get(key) ?? []), ...lines]);
  }
  for (const lines of into.values()) lines.sort();
  return into;
}

function run(args: string[]): string {
  const result = runCli(args);
  assert.equal(result.status, 0, `traces ${args.join(' ')}\n${result.stderr}`);
  return result.stdout;
}

/** One machine: the whole tree exported at once. */
function oneMachine(all: string, options: string[]): Map<string, string[]> {
  const out = path.join(tempDir('traces-one-'), 'out');
  run(['export', all, '--format', 'openai', '--out', out, ...options]);
  return examplesOf(out);
}

/** The global half: an index per host, then one keep-list and one tool file over every index (embedded DuckDB). */
function globalChoice(hosts: string[], options: string[]): { work: string; keep: string; tools: string } {
  const work = tempDir('traces-engine-');
  const indexes = path.join(work, 'index');
  hosts.forEach((host, k) => run(['index', host, '--format', 'openai', '--out', `${path.join(indexes, `host-${k}`)}/`]));
  const keep = path.join(work, 'keep.parquet');
  const tools = path.join(work, 'tools.json');
  run(['keep-list', indexes, '--out', keep, '--tools-out', tools, ...options]);
  return { work, keep, tools };
}

/** Sharded: the global choice, then export per host. */
function sharded(hosts: string[], options: string[]): { examples: Map<string, string[]>; found: number; listed: number } {
  const { work, keep, tools } = globalChoice(hosts, options);
  const examples = new Map<string, string[]>();
  let found = 0;
  let listed = 0;
  hosts.forEach((host, k) => {
    const out = path.join(work, `out-${k}`);
    const result = runCli(['export', host, '--format', 'openai', '--keep-list', keep, '--inferred-tools', tools, '--out', out, '--json', ...options]);
    // A host none of whose records is on the list writes nothing, and says so.
    if (result.status === 1 && /no example to write/.test(result.stderr)) return;
    assert.equal(result.status, 0, `export on host ${k}\n${result.stderr}`);
    const report = JSON.parse(result.stdout) as { keep_list: { listed: number; met: number } };
    found += report.keep_list.met;
    listed = report.keep_list.listed;
    examplesOf(out, examples);
  });
  for (const lines of examples.values()) lines.sort();
  return { examples, found, listed };
}

function assertSame(actual: Map<string, string[]>, expected: Map<string, string[]>, label: string): void {
  assert.deepEqual([...actual.keys()].sort(), [...expected.keys()].sort(), `${label}: the datasets and splits`);
  for (const [key, lines] of expected) {
    const mine = actual.get(key)!;
    // As multisets: a line written twice is two lines.
    const counts = new Map<string, number>();
    for (const l of lines) counts.set(l, (counts.get(l) ?? 0) + 1);
    for (const l of mine) counts.set(l, (counts.get(l) ?? 0) - 1);
    const missing = [...counts].filter(([, n]) => n > 0).map(([l]) => l);
    const extra = [...counts].filter(([, n]) => n < 0).map(([l]) => l);
    const show = (l: string[]) => l.slice(0, 2).map((x) => x.slice(0, 400)).join('\n    ');
    assert.ok(
      missing.length === 0 && extra.length === 0,
      `${label} ${key}: one machine ${lines.length} lines, sharded ${mine.length}\n  missing:\n    ${show(missing)}\n  not on one machine:\n    ${show(extra)}`,
    );
  }
}

const OPTION_SETS: string[][] = [[], ['--near-duplicates', '0.9'], ['--trajectories', 'all'], ['--key', 'inputs,config'], ['--group-by', 'module']];

describe('a tree spread over hosts exports exactly what one machine exports', () => {
  const all = wholeTree();
  const spreads = new Map<Spread, string[]>((['file', 'program', 'line'] as Spread[]).map((how) => [how, spread(all, how)]));
  for (const options of OPTION_SETS) {
    it(`with ${options.length === 0 ? 'the default options' : options.join(' ')}`, () => {
      const expected = oneMachine(all, options);
      const total = [...expected.values()].reduce((n, l) => n + l.length, 0);
      assert.ok(total > 1000, `the whole tree gives ${total} examples`);
      for (const [how, hosts] of spreads) {
        // The trees are spread in full: every trace line is on some host.
        assert.equal(hosts.reduce((n, h) => n + filesUnder(h).filter((f) => statSync(path.join(h, f)).size > 0).length, 0) > 0, true);
        const { examples, found, listed } = sharded(hosts, options);
        assertSame(examples, expected, `spread by ${how}`);
        // The hosts' reports add up: each listed id was found on exactly one host.
        assert.equal(found, listed, `spread by ${how}: the hosts found ${found} of the ${listed} listed ids`);
      }
    });
  }
});

describe('map mode: trace lines on stdin, examples on stdout', () => {
  const all = wholeTree();
  const hosts = spread(all, 'line');
  for (const options of [[], ['--group-by', 'module']]) {
    it(`gives the one-machine examples from every host's lines${options.length === 0 ? '' : ` with ${options.join(' ')}`}`, () => {
      const expected = oneMachine(all, options);
      const { keep, tools } = globalChoice(hosts, options);
      const examples = new Map<string, string[]>();
      for (const host of hosts) {
        // The host's lines in any order, as an engine's partition hands them over: here every file's, one after another.
        const input = filesUnder(host)
          .filter((f) => f.endsWith('.jsonl'))
          .map((f) => readFileSync(path.join(host, f), 'utf8'))
          .map((text) => (text.endsWith('\n') || text === '' ? text : `${text}\n`))
          .join('');
        const result = runCli(['map', '--format', 'openai', '--keep-list', keep, '--inferred-tools', tools, ...options], { input });
        assert.equal(result.status, 0, result.stderr);
        assert.match(result.stderr, /traces map: [\d,]+ lines?, [\d,]+ examples?/);
        for (const line of result.stdout.split('\n').filter((l) => l !== '')) {
          const [split, dataset, example] = line.split('\t');
          const key = `${dataset}:${split}`;
          examples.set(key, [...(examples.get(key) ?? []), example]);
        }
      }
      for (const lines of examples.values()) lines.sort();
      assertSame(examples, expected, 'map mode');
    });
  }
});

describe('the printed keep-list SQL', () => {
  const all = wholeTree();
  const hosts = spread(all, 'program');
  for (const options of [[], ['--trajectories', 'all'], ['--key', 'inputs,config'], ['--keep', 'last'], ['--group-by', 'module']]) {
    it(`run in DuckDB as printed, lists what traces keep-list keeps${options.length === 0 ? '' : ` with ${options.join(' ')}`}`, async () => {
      const { work, keep } = globalChoice(hosts, options);
      const printed = run(['keep-list', '--sql', '--dialect', 'duckdb', ...options]);
      assert.ok(printed.includes("read_parquet('index/*/*.parquet')") && printed.includes("'keep.parquet'"), printed);
      const fromSql = path.join(work, 'keep-sql.parquet');
      const engine = await Engine.open(null);
      try {
        // Only the two paths change: the statement runs as printed.
        await engine.query(printed.replace("'index/*/*.parquet'", sqlString(path.join(work, 'index', '*', '*.parquet'))).replace("'keep.parquet'", sqlString(fromSql)));
        // The ids, and the sides the list settles (a dataset whose groups all hashed to one side).
        const ids = async (file: string) => (await engine.query(`SELECT call_id, split FROM read_parquet(${sqlString(file)}) ORDER BY 1`)).rows.map((r) => `${String(r[0])} ${String(r[1])}`);
        const expected = await ids(keep);
        assert.ok(expected.length > 1000);
        assert.deepEqual(await ids(fromSql), expected);
        if (options.includes('--group-by')) assert.ok(expected.some((row) => !row.endsWith(' null')), 'some side is settled by the list');
      } finally {
        engine.close();
      }
    });
  }

  it('is what docs/engine.md shows', () => {
    const doc = readFileSync(path.join(REPO, 'docs', 'engine.md'), 'utf8');
    const shown = /<!-- keep-list --sql: duckdb -->\s*```sql\n([\s\S]*?)```/.exec(doc);
    assert.ok(shown, 'docs/engine.md shows the printed keep-list SQL');
    assert.equal(shown[1], run(['keep-list', '--sql', '--dialect', 'duckdb']));
  });

  it('differs between dialects only in how a list is exploded and where the list is read and written', () => {
    const texts = Object.fromEntries(['duckdb', 'spark', 'trino'].map((d) => [d, run(['keep-list', '--sql', '--dialect', d])]));
    assert.match(texts.duckdb, /unnest\(string_split\(trajectory_prefixes, ' '\)\)/);
    assert.match(texts.spark, /explode\(split\(trajectory_prefixes, ' '\)\)/);
    assert.match(texts.spark, /INSERT OVERWRITE DIRECTORY/);
    assert.match(texts.trino, /CROSS JOIN UNNEST\(split\(w\.trajectory_prefixes, ' '\)\) AS p \(digest\)/);
    const common = (text: string) =>
      text
        .replace(/`timestamp`/g, '"timestamp"')
        .split('\n')
        .filter((l) => /PARTITION BY|key_rank|holder_rank|example_rank|LEFT JOIN holders/.test(l) && !l.startsWith('SELECT call_id FROM examples'));
    assert.deepEqual(common(texts.spark), common(texts.duckdb));
    assert.deepEqual(common(texts.trino), common(texts.duckdb));
  });
});

describe('a keep-list and the exports that apply it', () => {
  it('says when an export runs with other options than the list was made with, naming each', () => {
    const work = tempDir('traces-keep-options-');
    run(['index', SAMPLES, '--format', 'openai', '--out', `${path.join(work, 'index')}/`]);
    const keep = path.join(work, 'keep.parquet');
    run(['keep-list', path.join(work, 'index'), '--out', keep]);
    const same = runCli(['export', SAMPLES, '--format', 'openai', '--keep-list', keep, '--out', path.join(work, 'same')]);
    assert.equal(same.status, 0, same.stderr);
    assert.doesNotMatch(same.stderr, /made with other options/);
    const other = runCli(['export', SAMPLES, '--format', 'openai', '--keep-list', keep, '--trajectories', 'all', '--key', 'inputs,config', '--out', path.join(work, 'other')]);
    assert.equal(other.status, 0, other.stderr);
    assert.match(other.stderr, /made with other options than this export's: --key inputs,config \(the list: inputs,config,module\), --trajectories all \(the list: last\)/);
  });

  it('says what an index built without --format leaves out of the list, and refuses an index without its columns', async () => {
    const work = tempDir('traces-keep-index-');
    run(['index', SAMPLES, '--out', `${path.join(work, 'plain')}/`]);
    const plain = runCli(['keep-list', path.join(work, 'plain'), '--out', path.join(work, 'keep.parquet')]);
    assert.equal(plain.status, 0, plain.stderr);
    assert.match(flat(plain.stderr), /built without --format: the target's refusals, repeated examples \(duplicate_example\) and the split's moved groups are not in the list/);
    // An index of an earlier traces: the columns before the global ones.
    const old = path.join(work, 'old.parquet');
    const engine = await Engine.open(null);
    try {
      await engine.query(
        `COPY (SELECT * EXCLUDE (trajectory, trajectory_inputs, trajectory_prefixes, minhash, tool_calls, quality, flagged, refused, example, fraction) FROM read_parquet(${sqlString(path.join(work, 'plain', '*.parquet'))})) TO ${sqlString(old)} (FORMAT parquet)`,
      );
    } finally {
      engine.close();
    }
    const earlier = runCli(['keep-list', old, '--out', path.join(work, 'k2.parquet')]);
    assert.equal(earlier.status, 2);
    assert.match(earlier.stderr, /the indexes lack the columns the keep-list reads \(trajectory, .*\): they were written by an earlier traces; index the hosts again/);
    const refused = runCli(['keep-list', path.join(work, 'missing'), '--out', path.join(work, 'k3.parquet')]);
    assert.equal(refused.status, 2);
    assert.match(refused.stderr, /missing: no such index/);
  });
});
