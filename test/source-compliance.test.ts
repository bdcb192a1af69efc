/**
 * The compliance test every registered source passes (Synalinks too), on its own fixtures,
 * found by convention at test/fixtures/<kind>/ (FOLDER_OF names the two folders older than
 * the convention). For each source, on a copy of its fixtures in which a fake vendor key is
 * planted in every text field (one key per field name, so a leak names its field) and one
 * file is damaged:
 *
 * - every command runs on it (exit 0 or 1, never a stack trace), and the planting left the
 *   records there are (the same count as the fixtures as they are);
 * - the damaged input is named the same by every command that reads records: the same count,
 *   and the same file, line and reason where a command lists them;
 * - one and two threads (TRACES_WORKERS) agree: the same stats, the same exported files;
 * - a round trip through `dedupe` keeps the records: its output reads back as the records it
 *   kept, and deduplicating that again drops nothing;
 * - no planted key reaches what a command prints or writes (dedupe and filter copy records as
 *   recorded by design: only what they print is checked).
 *
 * A new source is a folder under src/sources/, a line in registry.ts and fixtures at
 * test/fixtures/<kind>/: this file then runs it with no change (docs/sources.md).
 */
import assert from 'node:assert/strict';
import { cpSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { Engine } from '../src/engine/duckdb.js';
import type { SourceKind } from '../src/record.js';
import { discover } from '../src/sources/discover.js';
import { readFiles } from '../src/sources/read.js';
import { SOURCE_KINDS } from '../src/sources/registry.js';
import { damage, Planter } from './plant-keys.js';
import { FIXTURES, runCliAsync, tempDir, type CliResult } from './helpers.js';
import { leaksIn, leaksInFiles, secretBodies, writtenFiles } from './leaks.js';

/** Fixture folders named before the test/fixtures/<kind>/ convention (other tests and helpers use them by these names). */
const FOLDER_OF: Record<string, string> = { otlp: 'otel', synalinks: 'synalinks-golden' };

export function fixtureFolder(kind: string): string {
  return path.join(FIXTURES, FOLDER_OF[kind] ?? kind);
}

/** Parquet rows as text, so a key in a column is seen. */
async function parquetText(file: string): Promise<string | null> {
  if (!file.endsWith('.parquet')) return null;
  const engine = await Engine.open(null, { threads: 1 });
  try {
    const rows = await engine.query(`SELECT * FROM read_parquet('${file.replaceAll("'", "''")}')`);
    return JSON.stringify(rows.rows, (_, v: unknown) => (typeof v === 'bigint' ? String(v) : v));
  } finally {
    engine.close();
  }
}

/** A stack trace in what a command printed: a crash, never a user's error. */
const STACK = /\n\s+at .+[:(].*\d+:\d+\)?\n/;

function ran(name: string, result: CliResult): CliResult {
  assert.ok(result.status === 0 || result.status === 1, `${name}: exit ${result.status}\n${result.stderr.slice(0, 2000)}`);
  assert.doesNotMatch(result.stderr, STACK, `${name} printed a stack trace`);
  return result;
}

function json<T = Record<string, unknown>>(name: string, result: CliResult): T {
  ran(name, result);
  return JSON.parse(result.stdout) as T;
}

interface Damaged {
  file: string;
  line: number;
  reason: string;
}

const sameDamage = (list: Damaged[]) => list.map(({ file, line, reason }) => ({ file, line, reason }));

/** The records and damaged lines of a tree, read in this process (the commands are checked against these). */
async function readTree(tree: string): Promise<{ sources: SourceKind[]; files: string[]; records: number; damaged: number }> {
  const discovery = await discover([tree]);
  let records = 0;
  let damaged = 0;
  for await (const batch of readFiles(discovery.files)) {
    records += batch.records.length;
    damaged += batch.damaged.length;
  }
  return { sources: [...new Set(discovery.files.map((file) => file.source))], files: discovery.files.map((file) => file.path), records, damaged };
}

/** Runs the commands two at a time: each is a process of its own, most of it waiting on its start. */
async function runAll(commands: [string, string[]][], env: NodeJS.ProcessEnv): Promise<Map<string, CliResult>> {
  const results = new Map<string, CliResult>();
  const queue = [...commands];
  const next = async (): Promise<void> => {
    for (let command = queue.shift(); command !== undefined; command = queue.shift()) results.set(command[0], await runCliAsync(command[1], { env }));
  };
  await Promise.all([next(), next()]);
  return results;
}

for (const kind of SOURCE_KINDS) {
  describe(`source compliance: ${kind}`, () => {
    const folder = fixtureFolder(kind);
    let dir = '';
    let tree = '';
    let planter: Planter;
    let original: Awaited<ReturnType<typeof readTree>>;
    let planted: Awaited<ReturnType<typeof readTree>>;
    let damagedFile = '';
    let results = new Map<string, CliResult>();
    const out = (name: string) => path.join(dir, name);
    // The commands run with two worker threads; stats and export run again with one.
    const TWO = { TRACES_WORKERS: '2' };

    before(async () => {
      assert.ok(existsSync(folder), `${kind}: no fixtures at ${path.relative(FIXTURES, folder)}/ (a registered source keeps its fixtures at test/fixtures/<kind>/)`);
      dir = tempDir(`traces-compliance-${kind}-`);
      original = await readTree(folder);
      tree = path.join(dir, 'tree');
      cpSync(folder, tree, { recursive: true });
      planter = new Planter(kind);
      for (const file of writtenFiles(tree)) planter.file(file);
      planted = await readTree(tree);
      // The damaged file: a file read as this source's, a JSON Lines or CSV one when there is one.
      damagedFile = planted.files.find((file) => /\.(jsonl|csv)$/i.test(file)) ?? planted.files[0]!;
      damage(damagedFile);
      results = await runAll(
        [
          ['stats --json', ['stats', tree, '--json']],
          ['stats -v', ['stats', tree, '-v']],
          ['runs', ['runs', tree]],
          ['runs --json', ['runs', tree, '--json']],
          ['verify --json', ['verify', tree, '--json']],
          ['scan --json', ['scan', tree, '--json']],
          ['export --json', ['export', tree, '--format', 'openai', '--out', out('export'), '--trajectories', 'all', '--json']],
          ['index --json', ['index', tree, '--out', out('index.parquet'), '--json']],
          ['dedupe --json', ['dedupe', tree, '--out', out('dedupe'), '--json']],
          ['filter --json', ['filter', tree, '--out', out('filter'), '--status', 'ok,exception,no_output', '--json']],
        ].map(([name, args]) => [name as string, args as string[]]),
        TWO,
      );
      // The same reads with one thread.
      results.set('stats --json (one thread)', await runCliAsync(['stats', tree, '--json'], { env: { TRACES_WORKERS: '1' } }));
      results.set('export (one thread)', await runCliAsync(['export', tree, '--format', 'openai', '--out', out('export-1'), '--trajectories', 'all'], { env: { TRACES_WORKERS: '1' } }));
      const exported = writtenFiles(out('export')).filter((file) => file.endsWith('.jsonl') && !file.includes('_traces'));
      results.set('validate --json', await runCliAsync(['validate', ...exported, '--format', 'openai', '--json']));
    });

    it('reads its fixtures as its own records, and the planted keys leave the records there are', () => {
      assert.ok(original.records > 0, `${kind}: its fixtures hold no record`);
      assert.deepEqual(original.sources, [kind]);
      assert.equal(planted.records, original.records, `${kind}: planting keys changed the records read`);
      assert.equal(planted.damaged, original.damaged);
      assert.ok(planter.planted.size > 0, `${kind}: no text field to plant a key in`);
    });

    it('every command runs (exit 0 or 1, no stack trace)', () => {
      for (const [name, result] of results) ran(`${kind}: ${name}`, result);
    });

    it('names the damaged input the same in every command', () => {
      const counts = Object.fromEntries(
        ['stats --json', 'scan --json', 'export --json', 'index --json', 'dedupe --json', 'filter --json'].map((name) => [name, json<{ damaged_lines: number }>(name, results.get(name)!).damaged_lines]),
      );
      assert.ok(counts['stats --json']! > original.damaged, `${kind}: the damaged file ${path.basename(damagedFile)} is read as undamaged`);
      for (const [name, n] of Object.entries(counts)) assert.equal(n, counts['stats --json'], `${kind}: ${name} counts ${n} damaged, stats ${counts['stats --json']}`);
      const stats = json<{ damaged: Damaged[] }>('stats', results.get('stats --json')!).damaged;
      const index = json<{ damaged: Damaged[] }>('index', results.get('index --json')!).damaged;
      assert.deepEqual(sameDamage(index), sameDamage(stats));
      assert.ok(stats.some((d) => path.resolve(d.file) === damagedFile), `${kind}: the damage is not named in ${path.basename(damagedFile)}`);
    });

    it('one and two threads agree', () => {
      assert.deepEqual(json('stats, one thread', results.get('stats --json (one thread)')!), json('stats, two threads', results.get('stats --json')!));
      ran('export, one thread', results.get('export (one thread)')!);
      const files = (target: string) =>
        writtenFiles(target)
          .filter((file) => file.endsWith('.jsonl') && !file.includes('_traces'))
          .map((file) => [path.relative(target, file), readFileSync(file, 'utf8')]);
      const two = files(out('export'));
      assert.ok(two.length > 0, `${kind}: nothing exported`);
      assert.deepEqual(files(out('export-1')), two);
    });

    it('a round trip through dedupe keeps the records', async () => {
      const deduped = json<{ kept: number }>('dedupe', results.get('dedupe --json')!);
      assert.ok(deduped.kept > 0, `${kind}: dedupe kept nothing`);
      const [back, again] = await Promise.all([runCliAsync(['stats', out('dedupe'), '--json']), runCliAsync(['dedupe', out('dedupe'), '--dry-run', '--json'])]);
      const read = json<{ records: number; damaged_lines: number }>('stats of the copy', back);
      assert.equal(read.records, deduped.kept);
      assert.equal(read.damaged_lines, 0);
      const second = json<{ kept: number; dropped: Record<string, number> }>('dedupe again', again);
      assert.equal(second.kept, deduped.kept);
      assert.equal(second.dropped.duplicate, 0);
    });

    it('no planted key leaves through what a command prints or writes', async () => {
      const bodies = secretBodies([...planter.planted.values()]);
      const found: string[] = [];
      for (const [name, result] of results) found.push(...leaksIn(bodies, [result.stdout, result.stderr], name));
      found.push(...(await leaksInFiles(bodies, out('export'))));
      found.push(...(await leaksInFiles(bodies, out('index.parquet'), parquetText)));
      assert.deepEqual(found, [], `${kind}: planted keys found:\n${found.join('\n')}`);
    });
  });
}

/** The convention itself: each registered source has its fixtures folder, and no folder names a kind that is not registered. */
describe('source fixtures follow test/fixtures/<kind>/', () => {
  it('every registered source has fixtures', () => {
    const missing = SOURCE_KINDS.filter((kind) => !existsSync(fixtureFolder(kind)) || readdirSync(fixtureFolder(kind)).length === 0);
    assert.deepEqual(missing, []);
  });
});
