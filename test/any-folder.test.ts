/**
 * A user names the folder they have: the one above a Synalinks root, a Ruby project holding
 * Ask recordings deep in its tests. Every recording under it is read, each Synalinks record
 * under the program and module it names, and the files that are not traces are counted.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { discover } from '../src/sources/discover.js';
import { locateFile } from '../src/ui/index-store.js';
import { FIXTURES, REPO, runCli, runCliJson, SAMPLES, tempDir } from './helpers.js';

/** The folder above the sample tree, as a user may name it: `samples`. */
const ABOVE_SAMPLES = path.dirname(SAMPLES);

type StatsJson = { records: number; files: number; damaged_lines: number; programs: unknown; modules: unknown; skipped_not_traces?: number };

function counts({ records, files, damaged_lines, programs, modules }: StatsJson) {
  return { records, files, damaged_lines, programs, modules };
}

describe('naming the folder above a Synalinks root', () => {
  it('stats samples counts what stats samples/synalinks counts', () => {
    const above = runCliJson<StatsJson>(['stats', 'samples']);
    assert.equal(above.records, 24);
    assert.deepEqual(counts(above), counts(runCliJson<StatsJson>(['stats', 'samples/synalinks'])));
  });

  it('export samples reads all 24 records and writes the dataset samples/synalinks gives', () => {
    const [fromAbove, fromRoot] = [path.join(tempDir(), 'above'), path.join(tempDir(), 'root')];
    const above = runCli(['export', 'samples', '--format', 'nemo', '--out', fromAbove]);
    assert.equal(above.status, 0, above.stderr);
    assert.match(above.stderr, /^read 24 records from 8 files/m);
    const root = runCli(['export', 'samples/synalinks', '--format', 'nemo', '--out', fromRoot]);
    assert.equal(root.status, 0, root.stderr);
    for (const file of ['training.jsonl', 'validation.jsonl']) {
      assert.equal(readFileSync(path.join(fromAbove, file), 'utf8'), readFileSync(path.join(fromRoot, file), 'utf8'), file);
    }
  });

  it('finds every trace file of the tree, in the tree its records name', async () => {
    const place = (found: Awaited<ReturnType<typeof discover>>) => found.files.map((f) => [f.path, f.root]);
    assert.deepEqual(place(await discover([ABOVE_SAMPLES])), place(await discover([SAMPLES])));
  });

  it('takes program and module from the records, not from folders renamed since', async () => {
    const tree = path.join(tempDir(), 'tree');
    cpSync(SAMPLES, tree, { recursive: true });
    // A newcomer renamed a program folder and a module folder, each with its files.
    renameSync(path.join(tree, 'my_program'), path.join(tree, 'renamed_program'));
    const own = readdirSync(path.join(tree, 'renamed_program')).find((name) => name.startsWith('my_program_'))!;
    renameSync(path.join(tree, 'renamed_program', own), path.join(tree, 'renamed_program', own.replace('my_program_', 'renamed_program_')));
    const module = path.join(tree, 'renamed_program', 'generator_cot');
    const file = readdirSync(module).find((name) => name.startsWith('generator_cot_'))!;
    renameSync(path.join(module, file), path.join(module, file.replace('generator_cot_', 'cot_')));
    renameSync(module, path.join(tree, 'renamed_program', 'cot'));
    const renamed = runCliJson<StatsJson>(['stats', path.dirname(tree)]);
    assert.deepEqual(counts(renamed), counts(runCliJson<StatsJson>(['stats', SAMPLES])));
    const found = await discover([path.dirname(tree)]);
    const cot = found.files.find((f) => path.basename(path.dirname(f.path)) === 'cot')!;
    assert.deepEqual(locateFile(cot), { program: 'my_program', module: 'generator_cot' });
  });
});

describe('a Ruby project holding Ask recordings', () => {
  it('stats from the project root reads every recording under test/recordings/<test>/', () => {
    const project = path.join(tempDir(), 'proj');
    const fixtures = path.join(FIXTURES, 'ask');
    for (const test of readdirSync(fixtures)) {
      mkdirSync(path.join(project, 'test', 'recordings', test), { recursive: true });
      for (const name of readdirSync(path.join(fixtures, test))) cpSync(path.join(fixtures, test, name), path.join(project, 'test', 'recordings', test, name));
    }
    // What a project holds beside its recordings: code and YAML configuration, none of it traces.
    mkdirSync(path.join(project, 'config'));
    writeFileSync(path.join(project, 'config', 'database.yml'), 'default: &default\n  adapter: sqlite3\n');
    cpSync(path.join(REPO, 'bin', 'traces.js'), path.join(project, 'Rakefile'));
    const fromFixtures = runCliJson<StatsJson>(['stats', fixtures]);
    assert.ok(fromFixtures.records > 0);
    for (const args of [['stats', project], ['stats', '.'], ['stats', '.', '--source', 'ask']]) {
      const run = runCli([...args, '--json'], { cwd: project });
      assert.equal(run.status, 0, `${args.join(' ')}: ${run.stderr}`);
      const got = JSON.parse(run.stdout) as StatsJson;
      assert.deepEqual(counts(got), counts(fromFixtures), args.join(' '));
      assert.equal(got.skipped_not_traces, 2, args.join(' '));
    }
  });
});

describe('files skipped as not traces', () => {
  it('are counted without -v, on stderr and in --json, by every command that reads traces', () => {
    const out = tempDir();
    const commands = [
      ['stats', SAMPLES],
      ['verify', SAMPLES],
      ['scan', SAMPLES],
      ['runs', SAMPLES],
      ['dedupe', SAMPLES, '--dry-run'],
      ['export', SAMPLES, '--format', 'openai', '--out', path.join(out, 'ft')],
    ];
    for (const args of commands) {
      const run = runCli(args);
      assert.match(run.stderr, /^skipped 5 files that are not traces \(-v lists them\)$/m, `${args.join(' ')}: ${run.stderr}`);
    }
    for (const args of commands.slice(0, 2)) assert.equal(runCliJson<StatsJson>(args).skipped_not_traces, 5, args.join(' '));
    // With -v, each is listed instead.
    assert.doesNotMatch(runCli(['stats', SAMPLES, '-v']).stderr, /-v lists them/);
  });
});
