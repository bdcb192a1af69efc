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
import { SOURCE_KINDS } from '../src/sources/registry.js';
import { damage, Planter } from './plant-keys.js';
import { FIXTURES, runCli, tempDir, type CliResult } from './helpers.js';
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

for (const kind of SOURCE_KINDS) {
  describe(`source compliance: ${kind}`, () => {
    const folder = fixtureFolder(kind);
    let tree = '';
    let dir = '';
    let planter: Planter;
    let originalRecords = 0;

    before(() => {
      assert.ok(existsSync(folder), `${kind}: no fixtures at ${path.relative(FIXTURES, folder)}/ (a registered source keeps its fixtures at test/fixtures/<kind>/)`);
      dir = tempDir(`traces-compliance-${kind}-`);
      const original = path.join(dir, 'original');
      cpSync(folder, original, { recursive: true });
      const stats = json<{ records: number }>(`${kind} stats --json (fixtures as they are)`, runCli(['stats', original, '--json']));
      originalRecords = stats.records;
      tree = path.join(dir, 'tree');
      cpSync(folder, tree, { recursive: true });
      planter = new Planter(kind);
      for (const file of writtenFiles(tree)) planter.file(file);
    });

    it('reads its fixtures as its own records, and the planted keys leave the records there are', () => {
      assert.ok(originalRecords > 0, `${kind}: its fixtures hold no record`);
      const sources = json<{ source: string }[]>('sql source', runCli(['sql', 'SELECT DISTINCT source FROM records', tree, '--json']));
      assert.deepEqual(sources.map((row) => row.source), [kind]);
      const planted = json<{ records: number }>('stats --json', runCli(['stats', tree, '--json']));
      assert.equal(planted.records, originalRecords, `${kind}: planting keys changed the records read`);
      assert.ok(planter.planted.size > 0, `${kind}: no text field to plant a key in`);
    });

    describe('on planted fixtures with a damaged file', () => {
      const bodies = () => secretBodies([...planter.planted.values()]);
      const out = (name: string) => path.join(dir, name);
      const results = new Map<string, CliResult>();
      let damagedFile = '';

      before(() => {
        // The damaged file: the first file read as records, a JSON Lines one when there is one.
        const files = json<{ root: string; file: string }[]>('sql files', runCli(['sql', 'SELECT DISTINCT root, file FROM records ORDER BY file', tree, '--json']));
        const paths = files.map((row) => path.resolve(row.root, row.file));
        damagedFile = paths.find((file) => /\.(jsonl|csv)$/i.test(file)) ?? paths[0]!;
        damage(damagedFile);
        const commands: [string, string[]][] = [
          ['stats', ['stats', tree]],
          ['stats --json', ['stats', tree, '--json']],
          ['stats -v', ['stats', tree, '-v']],
          ['runs', ['runs', tree]],
          ['runs --json', ['runs', tree, '--json']],
          ['verify --json', ['verify', tree, '--json']],
          ['scan --json', ['scan', tree, '--json']],
          ['sql SELECT *', ['sql', 'SELECT * FROM records ORDER BY file, line', tree, '--json']],
          ['export --json', ['export', tree, '--format', 'openai', '--out', out('export'), '--trajectories', 'all', '--json']],
          ['export --dry-run -v', ['export', tree, '--format', 'openai', '--dry-run', '-v']],
          ['index --json', ['index', tree, '--out', out('index.parquet'), '--json']],
          ['dedupe --json', ['dedupe', tree, '--out', out('dedupe'), '--json']],
          ['filter --json', ['filter', tree, '--out', out('filter'), '--status', 'ok,exception,no_output', '--json']],
        ];
        for (const [name, args] of commands) results.set(name, runCli(args));
        const exported = writtenFiles(out('export')).filter((file) => file.endsWith('.jsonl') && !file.includes('_traces'));
        results.set('validate --json', runCli(['validate', ...exported, '--format', 'openai', '--json']));
      });

      it('every command runs (exit 0 or 1, no stack trace)', () => {
        for (const [name, result] of results) ran(`${kind}: ${name}`, result);
      });

      it('names the damaged input the same in every command', () => {
        const counts = Object.fromEntries(
          ['stats --json', 'scan --json', 'export --json', 'index --json', 'dedupe --json', 'filter --json'].map((name) => [name, json<{ damaged_lines: number }>(name, results.get(name)!).damaged_lines]),
        );
        assert.ok(counts['stats --json']! >= 1, `${kind}: the damaged file ${path.basename(damagedFile)} is read as undamaged`);
        for (const [name, n] of Object.entries(counts)) assert.equal(n, counts['stats --json'], `${kind}: ${name} counts ${n} damaged, stats ${counts['stats --json']}`);
        const stats = json<{ damaged: Damaged[] }>('stats', results.get('stats --json')!).damaged;
        const index = json<{ damaged: Damaged[] }>('index', results.get('index --json')!).damaged;
        assert.deepEqual(sameDamage(index), sameDamage(stats));
        assert.ok(stats.some((d) => path.resolve(d.file) === damagedFile), `${kind}: the damage is not named in ${path.basename(damagedFile)}`);
      });

      it('one and two threads agree', () => {
        const [one, two] = ['1', '2'].map((workers) => {
          const env = { TRACES_WORKERS: workers };
          const stats = json('stats', runCli(['stats', tree, '--json'], { env }));
          const target = out(`export-${workers}`);
          ran('export', runCli(['export', tree, '--format', 'openai', '--out', target, '--trajectories', 'all'], { env }));
          const files = writtenFiles(target).filter((file) => file.endsWith('.jsonl') && !file.includes('_traces')).map((file) => [path.relative(target, file), readFileSync(file, 'utf8')]);
          return { stats, files };
        });
        assert.deepEqual(two!.stats, one!.stats);
        assert.deepEqual(two!.files, one!.files);
        assert.ok(one!.files.length > 0);
      });

      it('a round trip through dedupe keeps the records', () => {
        const deduped = json<{ kept: number }>('dedupe', results.get('dedupe --json')!);
        assert.ok(deduped.kept > 0, `${kind}: dedupe kept nothing`);
        const back = json<{ records: number; damaged_lines: number }>('stats of the copy', runCli(['stats', out('dedupe'), '--json']));
        assert.equal(back.records, deduped.kept);
        assert.equal(back.damaged_lines, 0);
        const again = json<{ kept: number; dropped: Record<string, number> }>('dedupe again', runCli(['dedupe', out('dedupe'), '--dry-run', '--json']));
        assert.equal(again.kept, deduped.kept);
        assert.equal(again.dropped.duplicate, 0);
      });

      it('no planted key leaves through what a command prints or writes', async () => {
        const found: string[] = [];
        for (const [name, result] of results) found.push(...leaksIn(bodies(), [result.stdout, result.stderr], name));
        found.push(...(await leaksInFiles(bodies(), out('export'))));
        found.push(...(await leaksInFiles(bodies(), out('index.parquet'), parquetText)));
        assert.deepEqual(found, [], `${kind}: planted keys found:\n${found.join('\n')}`);
      });
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
