/**
 * File-system safety of every path a run writes (--out, --manifest, _traces/, shards,
 * group-by folders, browse's exclusion file): links, inputs, existing files, read-only
 * folders, unreadable inputs, roots inside a tree, and interruption by signals. After each
 * test every input file holds the bytes it had before.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { REPO, SAMPLES, runCli, tempDir, type CliResult, flat } from './helpers.js';
import { JOBS } from '../src/parallel/jobs.js';

const BIN = path.join(REPO, 'bin', 'traces.js');
const ONE_FILE = path.join('my_program', 'generator', 'generator_20260707-101530.jsonl');

/** Every file under `dir` (not following links) with the hash of its bytes. */
function snapshot(dir: string): Map<string, string> {
  const hashes = new Map<string, string>();
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const full = path.join(folder, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile()) hashes.set(path.relative(dir, full), createHash('sha256').update(readFileSync(full)).digest('hex'));
      else hashes.set(path.relative(dir, full), entry.isSymbolicLink() ? 'link' : 'other');
    }
  };
  walk(dir);
  return hashes;
}

/** Files left under a folder, as relative paths (links and folders named too), or null when it is gone. */
function listing(dir: string): string[] | null {
  if (!existsSync(dir)) return null;
  const found: string[] = [];
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const full = path.join(folder, entry.name);
      found.push(path.relative(dir, full) + (entry.isDirectory() ? '/' : ''));
      if (entry.isDirectory()) walk(full);
    }
  };
  walk(dir);
  return found.sort();
}

/** A private copy of the samples, and a check that no test changed it. */
function inputTree(): { base: string; tree: string; check: () => void } {
  const base = tempDir('traces-fs-');
  const tree = path.join(base, 'T');
  cpSync(SAMPLES, tree, { recursive: true });
  const before = snapshot(tree);
  return { base, tree, check: () => assert.deepEqual(snapshot(tree), before, 'the input tree is unchanged') };
}

function refused(result: CliResult, pattern: RegExp): void {
  assert.equal(result.status, 2, `exit 2 expected, got ${result.status}: ${result.stderr}`);
  assert.match(result.stderr, pattern);
  assert.doesNotMatch(result.stderr, /\n\s+at /, 'no stack trace');
}

const inputs: (() => void)[] = [];
function tracked(): ReturnType<typeof inputTree> {
  const made = inputTree();
  inputs.push(made.check);
  return made;
}
after(() => {
  for (const check of inputs) check();
});

describe('--out: links, inputs, existing folders', () => {
  it('a link to the input, with or without --force, is refused and the input is untouched', () => {
    const { base, tree, check } = tracked();
    const link = path.join(base, 'link');
    symlinkSync(tree, link);
    for (const cmd of [['dedupe'], ['filter'], ['export', '--format', 'nemo']]) {
      refused(runCli([...cmd, tree, '--out', link]), /symbolic link/);
      refused(runCli([...cmd, tree, '--out', link, '--force']), /symbolic link/);
    }
    // A new folder under a link that points into the input is the input's inside.
    refused(runCli(['dedupe', tree, '--out', path.join(link, 'my_program', 'new'), '--force']), /symbolic link|inside the input/);
    assert.equal(existsSync(path.join(tree, 'my_program', 'new')), false);
    check();
  });

  it('a link to elsewhere and a dangling link are refused, and nothing is written at their targets', () => {
    const { base, tree, check } = tracked();
    const elsewhere = path.join(base, 'elsewhere');
    mkdirSync(elsewhere);
    symlinkSync(elsewhere, path.join(base, 'to-elsewhere'));
    symlinkSync(path.join(base, 'missing'), path.join(base, 'dangling'));
    refused(runCli(['dedupe', tree, '--out', path.join(base, 'to-elsewhere'), '--force']), /to-elsewhere is a symbolic link .*points to/);
    refused(runCli(['dedupe', tree, '--out', path.join(base, 'dangling')]), /dangling link/);
    assert.deepEqual(readdirSync(elsewhere), []);
    assert.equal(existsSync(path.join(base, 'missing')), false);
    check();
  });

  it('an --out equal to, inside or around an input is refused, compared by real path', () => {
    const { base, tree, check } = tracked();
    refused(runCli(['dedupe', tree, '--out', tree, '--force']), /is the input/);
    refused(runCli(['dedupe', tree, '--out', path.join(tree, 'clean')]), /is inside the input/);
    refused(runCli(['dedupe', tree, '--out', base, '--force']), /contains the input/);
    // The same folder spelled through `..`, and an input named through a link.
    refused(runCli(['dedupe', tree, '--out', path.join(tree, 'my_program', '..', 'x')]), /inside the input/);
    symlinkSync(tree, path.join(base, 'input-link'));
    refused(runCli(['dedupe', path.join(base, 'input-link'), '--out', path.join(tree, 'x')]), /inside the input/);
    // A single file named as the input: a folder beside it is fine, the file itself is not.
    const single = path.join(tree, ONE_FILE);
    refused(runCli(['dedupe', single, '--out', single, '--force']), /is the input|not a folder/);
    const beside = path.join(path.dirname(single), '..', '..', '..', 'beside-single');
    assert.equal(runCli(['dedupe', single, '--out', beside]).status, 0);
    // A module folder reached through a link inside the root is an input where it really is.
    const real = path.join(base, 'real-module');
    cpSync(path.join(tree, 'my_program', 'generator'), path.join(real, 'generator'), { recursive: true });
    const linkedTree = path.join(base, 'linked-tree');
    mkdirSync(path.join(linkedTree, 'my_program'), { recursive: true });
    symlinkSync(path.join(real, 'generator'), path.join(linkedTree, 'my_program', 'generator'));
    const linkedBefore = snapshot(real);
    refused(runCli(['dedupe', linkedTree, '--out', path.join(real, 'generator', 'out')]), /inside the input/);
    assert.deepEqual(snapshot(real), linkedBefore);
    assert.equal(existsSync(path.join(tree, 'clean')), false);
    assert.equal(existsSync(path.join(tree, 'x')), false);
    check();
  });

  it('an existing --out: refused unless empty, --force replaces only what traces writes', () => {
    const { base, tree, check } = tracked();
    const out = path.join(base, 'out');
    mkdirSync(out);
    writeFileSync(path.join(out, 'mine.txt'), 'mine');
    refused(runCli(['dedupe', tree, '--out', out]), /is not empty: pass --force/);
    assert.equal(runCli(['dedupe', tree, '--out', out, '--force']).status, 0);
    assert.equal(readFileSync(path.join(out, 'mine.txt'), 'utf8'), 'mine');
    assert.ok(existsSync(path.join(out, '_traces', 'complete')), 'the completion marker is written');
    // An --out under a regular file.
    refused(runCli(['dedupe', tree, '--out', path.join(out, 'mine.txt', 'sub')]), /is a file, not a folder/);
    check();
  });

  it('a link inside --out (_traces/, a program folder, a shard) is never written through', () => {
    const { base, tree, check } = tracked();
    const elsewhere = path.join(base, 'elsewhere');
    mkdirSync(elsewhere);
    writeFileSync(path.join(elsewhere, 'keep.txt'), 'keep');
    const out = path.join(base, 'out');
    mkdirSync(out);
    symlinkSync(elsewhere, path.join(out, '_traces'));
    refused(runCli(['dedupe', tree, '--out', out]), /_traces is a symbolic link/);
    // A link into the input itself, planted where dedupe writes a program folder.
    symlinkSync(path.join(tree, 'my_program'), path.join(out, 'my_program'));
    assert.equal(runCli(['dedupe', tree, '--out', out, '--force']).status, 0);
    assert.equal(lstatSync(path.join(out, '_traces')).isDirectory(), true, 'the link was replaced by a folder');
    assert.equal(lstatSync(path.join(out, 'my_program')).isDirectory(), true);
    assert.deepEqual(readdirSync(elsewhere), ['keep.txt']);
    // Shards and group-by folders: a shard name that is a link to a file elsewhere.
    const nemo = path.join(base, 'nemo');
    mkdirSync(nemo);
    writeFileSync(path.join(elsewhere, 'target.jsonl'), 'precious\n');
    symlinkSync(path.join(elsewhere, 'target.jsonl'), path.join(nemo, 'training-001.jsonl'));
    refused(runCli(['export', tree, '--format', 'nemo', '--out', nemo, '--max-file-mb', '0.001']), /not empty/);
    const sharded = runCli(['export', tree, '--format', 'nemo', '--out', nemo, '--max-file-mb', '0.001', '--force']);
    assert.equal(sharded.status, 0, sharded.stderr);
    assert.equal(lstatSync(path.join(nemo, 'training-001.jsonl')).isFile(), true);
    assert.equal(readFileSync(path.join(elsewhere, 'target.jsonl'), 'utf8'), 'precious\n');
    const grouped = path.join(base, 'grouped');
    mkdirSync(grouped);
    symlinkSync(path.join(tree, 'math_agent'), path.join(grouped, 'math_agent'));
    assert.equal(runCli(['export', tree, '--format', 'nemo', '--out', grouped, '--group-by', 'module', '--force']).status, 0);
    assert.equal(lstatSync(path.join(grouped, 'math_agent')).isDirectory(), true);
    check();
  });

  it('a --force rerun never removes an earlier file through a link planted in --out', () => {
    const { base, tree, check } = tracked();
    const out = path.join(base, 'out');
    assert.equal(runCli(['dedupe', tree, '--out', out]).status, 0);
    // The earlier run's my_program folder is now a link into the input, whose files have the same names.
    rmSync(path.join(out, 'my_program'), { recursive: true });
    symlinkSync(path.join(tree, 'my_program'), path.join(out, 'my_program'));
    const rerun = runCli(['dedupe', tree, '--out', out, '--force', '--program', 'math_agent']);
    assert.equal(rerun.status, 0, rerun.stderr);
    assert.equal(existsSync(path.join(out, 'my_program')), false, 'the link itself is removed');
    check();
  });

  it('a --force rerun removes the shards of the earlier run that it does not write again', () => {
    const { base, tree, check } = tracked();
    const out = path.join(base, 'out');
    assert.equal(runCli(['export', tree, '--format', 'nemo', '--out', out, '--max-file-mb', '0.001']).status, 0);
    assert.ok(readdirSync(out).some((f) => f.startsWith('training-00')));
    assert.equal(runCli(['export', tree, '--format', 'nemo', '--out', out, '--force']).status, 0);
    assert.deepEqual(readdirSync(out).filter((f) => f.endsWith('.jsonl')).sort(), ['training.jsonl', 'validation.jsonl']);
    check();
  });
});

describe('--manifest and other named files', () => {
  it('an input file as --manifest is refused and keeps its bytes (dedupe, filter, export)', () => {
    const { base, tree, check } = tracked();
    const input = path.join(tree, ONE_FILE);
    for (const cmd of [['dedupe'], ['filter'], ['export', '--format', 'openai']]) {
      refused(runCli([...cmd, tree, '--out', path.join(base, `o-${cmd[0]}`), '--manifest', input]), /is inside the input/);
      refused(runCli([...cmd, tree, '--out', path.join(base, `o-${cmd[0]}`), '--manifest', input, '--force']), /is inside the input/);
      assert.equal(existsSync(path.join(base, `o-${cmd[0]}`)), false, 'a refused run leaves no --out behind');
    }
    refused(runCli(['dedupe', tree, '--out', path.join(base, 'o'), '--manifest', path.join(tree, 'my_program', 'new.jsonl')]), /inside the input/);
    assert.equal(existsSync(path.join(tree, 'my_program', 'new.jsonl')), false);
    check();
  });

  it('an existing --manifest needs --force; a linked or dangling one is refused even then', () => {
    const { base, tree, check } = tracked();
    const manifest = path.join(base, 'drops.jsonl');
    writeFileSync(manifest, 'old\n');
    refused(runCli(['dedupe', tree, '--out', path.join(base, 'o1'), '--manifest', manifest]), /already exists: pass --force/);
    assert.equal(readFileSync(manifest, 'utf8'), 'old\n');
    assert.equal(runCli(['dedupe', tree, '--out', path.join(base, 'o2'), '--manifest', manifest, '--force']).status, 0);
    assert.match(readFileSync(manifest, 'utf8'), /"reason":"duplicate"/);
    const precious = path.join(base, 'precious.txt');
    writeFileSync(precious, 'precious');
    symlinkSync(precious, path.join(base, 'm-link'));
    symlinkSync(path.join(base, 'nowhere.jsonl'), path.join(base, 'm-dangling'));
    refused(runCli(['dedupe', tree, '--out', path.join(base, 'o3'), '--manifest', path.join(base, 'm-link'), '--force']), /symbolic link/);
    refused(runCli(['dedupe', tree, '--out', path.join(base, 'o4'), '--manifest', path.join(base, 'm-dangling')]), /dangling link/);
    assert.equal(readFileSync(precious, 'utf8'), 'precious');
    assert.equal(existsSync(path.join(base, 'nowhere.jsonl')), false);
    // No temporary name is left beside the manifest.
    assert.deepEqual(readdirSync(base).filter((f) => f.includes('traces-partial')), []);
    check();
  });

  it('the exclusion file browse writes: never through a link, no temporary name left', async () => {
    const { writeExcludeFile } = await import('../src/ui/exclude-file.js');
    const base = tempDir();
    const file = path.join(base, 'exclude.txt');
    writeExcludeFile(file, 'a\n');
    writeExcludeFile(file, 'b\n');
    assert.equal(readFileSync(file, 'utf8'), 'b\n');
    const precious = path.join(base, 'precious.txt');
    writeFileSync(precious, 'precious');
    symlinkSync(precious, path.join(base, 'link.txt'));
    assert.throws(() => writeExcludeFile(path.join(base, 'link.txt'), 'c\n'), /symbolic link/);
    assert.equal(readFileSync(precious, 'utf8'), 'precious');
    assert.deepEqual(readdirSync(base).sort(), ['exclude.txt', 'link.txt', 'precious.txt']);
  });

  it("browse's exclusion file passes the same checks", () => {
    const { base, tree, check } = tracked();
    refused(runCli(['browse', tree, '--exclude', path.join(tree, 'exclude.txt')]), /--exclude .* is inside the input/);
    symlinkSync(path.join(base, 'x'), path.join(base, 'ex-link'));
    refused(runCli(['browse', tree, '--exclude', path.join(base, 'ex-link')]), /symbolic link/);
    check();
  });

  it("browse refuses an existing --exclude file that is no list of call_ids, since w would write over it", async () => {
    const { readExcludeFile } = await import('../src/ui/exclude-file.js');
    const base = tempDir();
    const notes = path.join(base, 'notes.txt');
    writeFileSync(notes, '# Plans\nCall the vendor on Monday.\n');
    const run = runCli(['browse', SAMPLES, '--exclude', notes]);
    assert.equal(run.status, 2, run.stderr);
    assert.match(run.stderr, /--exclude \S+ exists and is not a list of call_ids \("Call the vendor on Monday\." is no call_id\); browse writes this file when you press w/);
    assert.equal(readFileSync(notes, 'utf8'), '# Plans\nCall the vendor on Monday.\n');
    for (const json of ['{"call_id": "x"}', '["a", "b"]', 'a,b']) {
      writeFileSync(notes, `${json}\n`);
      assert.throws(() => readExcludeFile(notes), /is not a list of call_ids/, json);
    }
    // A list of Synalinks, Ask and klieo ids, with comments and blank lines, is read; a missing file is an empty list.
    const list = path.join(base, 'list.txt');
    writeFileSync(list, '# traces browse\n9e0e124a-0496-429e-ab25-80de74b5da64\n\n01J9Z8CAPT:2  # a klieo step\n');
    assert.deepEqual([...readExcludeFile(list)], ['9e0e124a-0496-429e-ab25-80de74b5da64', '01J9Z8CAPT:2']);
    assert.deepEqual([...readExcludeFile(path.join(base, 'missing.txt'))], []);
  });
});

describe('roots inside a tree, and runs that find nothing', () => {
  it('a module folder, a program folder and a single file read the traces under them, in their tree layout', () => {
    const { base, tree, check } = tracked();
    const records = (root: string) => (JSON.parse(runCli(['stats', root, '--json']).stdout) as { records: number }).records;
    const moduleDir = path.join(tree, 'my_program', 'generator');
    assert.equal(records(moduleDir), 8);
    assert.equal(records(path.join(tree, 'math_agent', 'final_generator_math_agent')) > 0, true);
    assert.equal(records(path.join(tree, 'my_program')), 12);
    assert.equal(records(path.join(tree, ONE_FILE)) > 0, true);
    const out = path.join(base, 'module-out');
    assert.equal(runCli(['dedupe', moduleDir, '--out', out]).status, 0);
    assert.deepEqual(
      listing(out)!.filter((f) => f.endsWith('.jsonl') && !f.startsWith('_traces')),
      ['my_program/generator/generator_20260707-101530.jsonl', 'my_program/generator/generator_20260707-143002.jsonl'],
    );
    const programOut = path.join(base, 'program-out');
    assert.equal(runCli(['dedupe', path.join(tree, 'my_program'), '--out', programOut]).status, 0);
    assert.ok(existsSync(path.join(programOut, 'my_program', 'generator_cot', 'generator_cot_20260707-101530.jsonl')));
    assert.ok(existsSync(path.join(programOut, 'my_program', 'my_program_20260707-101530.jsonl')));
    check();
  });

  it('no trace file: said on stderr, exit 2; dedupe, filter and export write nothing', () => {
    const { base } = tracked();
    const empty = path.join(base, 'empty');
    mkdirSync(empty);
    writeFileSync(path.join(empty, 'notes.txt'), 'not a trace');
    const stats = runCli(['stats', empty]);
    assert.equal(stats.status, 2);
    assert.match(stats.stderr, /no trace file found under/);
    for (const cmd of [['dedupe'], ['filter'], ['export', '--format', 'nemo'], ['export', '--format', 'ask-recording']]) {
      const out = path.join(base, `out-${cmd.join('-')}`);
      refused(runCli([...cmd, empty, '--out', out]), /no trace file found under .*nothing written/);
      assert.equal(existsSync(out), false);
    }
  });
});

/** `setpriv` to nobody: as root, permissions block nothing, so unreadable inputs need another user. */
function asNobody(): ((args: string[], cwd?: string) => CliResult) | null {
  const probe = spawnSync('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', process.execPath, '-e', 'process.exit(7)']);
  if (probe.status !== 7) return null;
  return (args, cwd) => {
    const result = spawnSync('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', process.execPath, BIN, ...args], {
      cwd: cwd ?? REPO,
      encoding: 'utf8',
      env: { ...process.env, TMPDIR: '/tmp' },
    });
    return { status: result.status ?? -1, stdout: result.stdout, stderr: result.stderr };
  };
}

describe('unreadable inputs and unwritable outputs', () => {
  const nobody = process.getuid?.() === 0 ? asNobody() : null;
  const skip = process.getuid?.() !== 0 ? false : nobody === null ? 'needs setpriv to run as nobody (as root, chmod 000 blocks nothing)' : false;

  /** A tree nobody can read except one file and one module folder. */
  function lockedTree(): { base: string; tree: string; restore: () => void } {
    const { base, tree } = tracked();
    chmodSync(base, 0o755);
    chmodSync(path.join(tree, ONE_FILE), 0o000);
    chmodSync(path.join(tree, 'math_agent', 'final_generator_math_agent'), 0o000);
    return {
      base,
      tree,
      restore: () => {
        chmodSync(path.join(tree, ONE_FILE), 0o644);
        chmodSync(path.join(tree, 'math_agent', 'final_generator_math_agent'), 0o755);
      },
    };
  }
  const run = (args: string[]) => (process.getuid?.() === 0 ? nobody!(args) : runCli(args));

  it('are named, counted in --json and exit 1 in every reading command, without a stack trace', { skip }, () => {
    const { base, tree, restore } = lockedTree();
    try {
      for (const cmd of [['stats'], ['verify'], ['scan'], ['runs'], ['dedupe', '--dry-run']]) {
        const result = run([...cmd, tree, '--json']);
        assert.equal(result.status, 1, `${cmd[0]}: ${result.stderr}`);
        assert.match(flat(result.stderr), /generator_20260707-101530\.jsonl: cannot read: permission denied \(EACCES\)/);
        assert.match(flat(result.stderr), /final_generator_math_agent: cannot read: permission denied/);
        assert.doesNotMatch(result.stderr, /\n\s+at /);
        if (cmd[0] !== 'runs') {
          const json = JSON.parse(result.stdout) as { unreadable_inputs: { path: string }[] };
          assert.equal(json.unreadable_inputs.length, 2, cmd[0]);
        }
      }
      for (const cmd of [['dedupe'], ['filter'], ['export', '--format', 'nemo']]) {
        const out = path.join(base, `out-${cmd[0]}`);
        mkdirSync(out);
        chmodSync(out, 0o777);
        const result = run([...cmd, tree, '--out', out, '--force']);
        assert.equal(result.status, 1, `${cmd[0]}: ${result.stderr}`);
        assert.match(result.stderr, /permission denied/);
        assert.ok(existsSync(path.join(out, '_traces', 'complete')));
      }
      // A single unreadable file named as the root.
      const single = run(['stats', path.join(tree, ONE_FILE)]);
      assert.equal(single.status, 1);
      assert.doesNotMatch(single.stderr, /\n\s+at /);
    } finally {
      restore();
    }
  });

  it('a read-only --out or --manifest folder gives one line and exit 2', { skip }, () => {
    const { base, tree } = tracked();
    chmodSync(base, 0o777);
    const readOnly = path.join(base, 'ro');
    mkdirSync(readOnly);
    chmodSync(readOnly, 0o555);
    for (const args of [
      ['dedupe', tree, '--out', path.join(readOnly, 'out')],
      ['export', tree, '--format', 'openai', '--out', path.join(readOnly, 'out')],
      ['dedupe', tree, '--out', readOnly, '--force'],
      ['dedupe', tree, '--out', path.join(base, 'free'), '--manifest', path.join(readOnly, 'm.jsonl')],
    ]) {
      const free = path.join(base, 'free');
      if (existsSync(free)) chmodSync(free, 0o777);
      const result = run(args);
      refused(result, /cannot write .*permission denied/);
      assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
    }
    assert.deepEqual(readdirSync(readOnly), []);
  });

  it('standard output on a full disk is named in one line, exit 2', { skip: existsSync('/dev/full') ? false : 'no /dev/full' }, () => {
    for (const args of [
      ['stats', SAMPLES, '--json'],
      ['index', SAMPLES, '--out', '-'],
      ['sql', 'SELECT call_id FROM records', SAMPLES, '--csv'],
    ]) {
      const full = openSync('/dev/full', 'w');
      try {
        const result = spawnSync(process.execPath, [BIN, ...args], { stdio: ['ignore', full, 'pipe'], encoding: 'utf8' });
        assert.equal(result.status, 2, `${args.join(' ')}: ${result.stderr}`);
        assert.match(result.stderr, /^traces: standard output: no space left on the device/m);
        assert.doesNotMatch(result.stderr, /\n\s+at /);
      } finally {
        closeSync(full);
      }
    }
  });
});

describe('interruption', () => {
  /** A private temp folder, so spill folders of this run can be seen (and no other's). */
  function start(args: string[], pause: string, tmp: string): { child: ReturnType<typeof spawn>; paused: Promise<void>; exited: Promise<number | null> } {
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, TRACES_TEST_PAUSE: pause, TMPDIR: tmp }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    const paused = new Promise<void>((resolve, reject) => {
      child.stderr!.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        if (stderr.includes(`test pause at ${pause}`)) resolve();
      });
      child.on('exit', () => reject(new Error(`the run ended before pausing: ${stderr}`)));
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code, signal) => resolve(code ?? (signal === 'SIGKILL' ? -9 : null))));
    return { child, paused, exited };
  }

  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    it(`${signal} leaves nothing this run created, in --out or in the temp folder`, async () => {
      const { base, tree, check } = tracked();
      const tmp = path.join(base, 'tmp');
      mkdirSync(tmp);
      const out = path.join(base, 'new', 'out');
      const existing = path.join(base, 'existing');
      mkdirSync(existing);
      for (const [target, cmd] of [
        [out, ['dedupe', tree, '--out', out]],
        [existing, ['export', tree, '--format', 'nemo', '--out', existing, '--manifest', path.join(base, 'drops.jsonl')]],
      ] as const) {
        const run = start([...cmd], 'reading', tmp);
        await run.paused;
        assert.ok(readdirSync(tmp).some((f) => f.startsWith(`traces-spill-${run.child.pid}-`)), 'the spill folder exists');
        assert.ok(readdirSync(target).some((f) => f.startsWith('.traces-partial-')), 'the staging folder exists');
        run.child.kill(signal);
        assert.equal(await run.exited, code);
        assert.deepEqual(readdirSync(tmp), [], 'no spill folder left');
        if (target === out) assert.equal(existsSync(path.join(base, 'new')), false, 'folders the run made are gone');
        else assert.deepEqual(readdirSync(existing), [], 'an --out that existed is left as it was');
        assert.equal(existsSync(path.join(base, 'drops.jsonl')), false);
        assert.deepEqual(readdirSync(base).filter((f) => f.includes('traces-partial')), []);
        // A plain rerun is not refused.
        assert.equal(runCli([...cmd], { env: { TMPDIR: tmp } }).status, 0);
      }
      check();
    });
  }

  it('after SIGKILL while reading, the next run removes the dead run\'s temporary files and spill folder', async () => {
    const { base, tree, check } = tracked();
    const tmp = path.join(base, 'tmp');
    mkdirSync(tmp);
    const out = path.join(base, 'out');
    const run = start(['dedupe', tree, '--out', out], 'reading', tmp);
    await run.paused;
    run.child.kill('SIGKILL');
    await run.exited;
    assert.ok(readdirSync(out).some((f) => f.startsWith('.traces-partial-')), 'a hard kill leaves the staging folder');
    assert.ok(readdirSync(tmp).length > 0, 'and the spill folder');
    const rerun = runCli(['dedupe', tree, '--out', out], { env: { TMPDIR: tmp } });
    assert.equal(rerun.status, 0, rerun.stderr);
    assert.match(rerun.stderr, /removed the temporary files of an interrupted run/);
    assert.deepEqual(readdirSync(out).filter((f) => f.startsWith('.')), []);
    assert.deepEqual(readdirSync(tmp), []);
    check();
  });

  // Another pid namespace, as a second container sharing /tmp is: unprivileged, through a user namespace.
  const UNSHARE = ['unshare', '--pid', '--fork', '--map-root-user', '--kill-child'];
  const canUnshare = spawnSync(UNSHARE[0]!, [...UNSHARE.slice(1), 'true']).status === 0;

  it('a run in another pid namespace leaves a live run\'s spill folder alone: the live run finishes (issue 39)', { skip: !canUnshare && 'no unprivileged pid namespaces here (unshare)' }, async () => {
    const { base, tree, check } = tracked();
    const tmp = path.join(base, 'tmp');
    mkdirSync(tmp);
    const out = path.join(base, 'out');
    const live = start(['export', tree, '--format', 'nemo', '--out', out], 'reading', tmp);
    await live.paused;
    const spills = readdirSync(tmp).filter((f) => f.startsWith(`traces-spill-${live.child.pid}-`));
    assert.ok(spills.length > 0, 'the live run has a spill folder');
    // Its pid is no process there: a pid alone would call the live run dead.
    const other = spawnSync(UNSHARE[0]!, [...UNSHARE.slice(1), process.execPath, BIN, 'dedupe', tree, '--dry-run'], { env: { ...process.env, TMPDIR: tmp }, encoding: 'utf8' });
    assert.equal(other.status, 0, other.stderr);
    for (const spill of spills) assert.ok(existsSync(path.join(tmp, spill)), `${spill} is still there`);
    live.child.kill('SIGUSR2');
    assert.equal(await live.exited, 0);
    assert.ok(existsSync(path.join(out, '_traces', 'complete')));
    check();
  });

  it('the spill folders of a hard-killed pid-1 run (a container\'s entrypoint) are removed by the next run (issue 39)', { skip: !canUnshare && 'no unprivileged pid namespaces here (unshare)' }, async () => {
    const { base, tree, check } = tracked();
    const tmp = path.join(base, 'tmp');
    mkdirSync(tmp);
    const child = spawn(UNSHARE[0]!, [...UNSHARE.slice(1), process.execPath, BIN, 'dedupe', tree, '--out', path.join(base, 'out')], {
      env: { ...process.env, TRACES_TEST_PAUSE: 'reading', TMPDIR: tmp },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
    let stderr = '';
    await new Promise<void>((resolve, reject) => {
      child.stderr!.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        if (stderr.includes('test pause at reading')) resolve();
      });
      child.on('exit', () => reject(new Error(`the run ended before pausing: ${stderr}`)));
    });
    assert.match(stderr, /\(pid 1\)/, 'the run is pid 1 in its namespace');
    assert.ok(readdirSync(tmp).some((f) => f.startsWith('traces-spill-1-')), 'its spill folder');
    // SIGKILL to the run itself (its pid out here is unshare's child); unshare exits once it is reaped, its files closed.
    const inner = Number(readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(' ')[0]);
    process.kill(inner, 'SIGKILL');
    await exited;
    assert.ok(readdirSync(tmp).some((f) => f.startsWith('traces-spill-1-')), 'a hard kill leaves it');
    // Pid 1 out here is init, always alive: only the lock tells the run is gone.
    const next = runCli(['dedupe', tree, '--dry-run'], { env: { TMPDIR: tmp } });
    assert.equal(next.status, 0, next.stderr);
    assert.deepEqual(readdirSync(tmp).filter((f) => f.startsWith('traces-spill')), []);
    check();
  });

  it('after SIGKILL while moving files into place, the output is called incomplete and --force cleans it', async () => {
    const { base, tree, check } = tracked();
    const tmp = path.join(base, 'tmp');
    mkdirSync(tmp);
    const clean = path.join(base, 'clean');
    assert.equal(runCli(['export', tree, '--format', 'nemo', '--out', clean]).status, 0);
    const out = path.join(base, 'out');
    const run = start(['export', tree, '--format', 'nemo', '--out', out], 'moving', tmp);
    await run.paused;
    run.child.kill('SIGKILL');
    await run.exited;
    assert.equal(existsSync(path.join(out, '_traces', 'complete')), false, 'no completion marker');
    const plain = runCli(['export', tree, '--format', 'nemo', '--out', out]);
    refused(plain, /incomplete, from an earlier interrupted run: rerun with --force/);
    refused(runCli(['dedupe', tree, '--against', out, '--out', path.join(base, 'x')]), /incomplete/);
    const forced = runCli(['export', tree, '--format', 'nemo', '--out', out, '--force']);
    assert.equal(forced.status, 0, forced.stderr);
    // The same files as an uninterrupted run, with equal bytes (report.json and run.json hold times).
    const files = (dir: string) => listing(dir)!.filter((f) => !f.endsWith('/'));
    assert.deepEqual(files(out), files(clean));
    for (const f of files(clean).filter((f) => f.endsWith('.jsonl'))) assert.equal(readFileSync(path.join(out, f), 'utf8'), readFileSync(path.join(clean, f), 'utf8'), f);
    check();
  });

  it('a file that disappears mid-run ends it with one line and exit 2, leaving nothing behind (worker threads too)', async () => {
    const { base, tree } = tracked();
    const tmp = path.join(base, 'tmp');
    mkdirSync(tmp);
    const out = path.join(base, 'out');
    const child = spawn(process.execPath, [BIN, 'dedupe', tree, '--out', out], {
      env: { ...process.env, TRACES_TEST_PAUSE: 'reading', TMPDIR: tmp, TRACES_SHARE_BYTES: '2000', TRACES_WORKERS: '2' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    await new Promise<void>((resolve) =>
      child.stderr!.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        if (stderr.includes('test pause at reading')) resolve();
      }),
    );
    const gone = path.join(tree, 'math_agent', 'tool_calls_generator_math_agent', 'tool_calls_generator_math_agent_20260708-163045.jsonl');
    const bytes = readFileSync(gone);
    rmSync(gone);
    child.kill('SIGUSR2');
    const code = await exited;
    writeFileSync(gone, bytes);
    assert.equal(code, 2, stderr);
    assert.match(stderr, /traces: .*tool_calls_generator_math_agent_20260708-163045\.jsonl: it disappeared after traces listed it \(ENOENT\)/);
    assert.doesNotMatch(stderr, /\n\s+at /);
    assert.equal(existsSync(out), false);
    assert.deepEqual(readdirSync(tmp), []);
  });

  it('a worker thread reports a file-system error with its code, path and call', async () => {
    const { WorkerPool } = await import('../src/parallel/pool.js');
    const { describeFileSystemError } = await import('../src/errors.js');
    const base = tempDir();
    // Its folder is a file: ENOTDIR (a file gone since it was listed is said otherwise, as a user's error).
    writeFileSync(path.join(base, 'p'), '');
    const missing = path.join(base, 'p', 'm', 'm_20260101-000000.jsonl');
    const payload = {
      files: [{ path: missing, display: missing, root: base, source: 'synalinks' }],
      share: { ranges: [{ fileIndex: 0, start: 0, end: Infinity }], bytes: 0 },
      prices: null,
    };
    const pool = new WorkerPool(1);
    try {
      await assert.rejects(
        async () => {
          for await (const result of pool.map(JOBS.stats, [payload], (p) => p)) void result;
        },
        (error: NodeJS.ErrnoException) => {
          assert.equal(error.code, 'ENOTDIR');
          assert.equal(error.path, missing);
          assert.match(describeFileSystemError(error) ?? '', /m_20260101-000000\.jsonl: a part of the path is a file, not a folder \(ENOTDIR in open\)/);
          return true;
        },
      );
    } finally {
      await pool.close();
    }
  });

  it('a full disk under the run\'s temporary folder says so and names TMPDIR; elsewhere it says to write elsewhere', { skip: !existsSync('/dev/full') && 'needs /dev/full (Linux)' }, async () => {
    const { describeFileSystemError, RUN_TEMP_PREFIX } = await import('../src/errors.js');
    const { writeAll } = await import('../src/output/write-all.js');
    const { tmpdir } = await import('node:os');
    // /dev/full answers every write with a real ENOSPC from the kernel, as a full disk does.
    const fd = openSync('/dev/full', 'w');
    const failure = (file: string): string => {
      try {
        writeAll(fd, Buffer.alloc(4096), file);
      } catch (error) {
        return describeFileSystemError(error) ?? 'not described';
      }
      return 'no error';
    };
    try {
      const spill = path.join(tmpdir(), `${RUN_TEMP_PREFIX}${process.pid}-abc123`, 'keys-3');
      const said = failure(spill);
      assert.match(said, /keys-3: no space left on the device \(ENOSPC in write\): the temporary folder is full: .*set TMPDIR to a folder with room/);
      const output = path.join(tmpdir(), 'out', 'training.jsonl');
      assert.match(failure(output), /training\.jsonl: no space left on the device \(ENOSPC in write\): free some space or write elsewhere$/);
    } finally {
      closeSync(fd);
    }
  });

  it('a link loop inside a root is reported as unreadable, not a crash or a hang', () => {
    const { tree, check } = tracked();
    const loop = path.join(tree, 'my_program', 'loop');
    symlinkSync(loop, loop);
    const result = runCli(['stats', tree, '--json']);
    rmSync(loop);
    assert.equal(result.status, 1, result.stderr);
    assert.match(flat(result.stderr), /loop: cannot read: too many symbolic links \(ELOOP\)/);
    assert.equal((JSON.parse(result.stdout) as { records: number }).records, 24);
    check();
  });

  it('a FIFO named like a trace file is skipped, never waited on', () => {
    const { tree, check } = tracked();
    const fifo = path.join(tree, 'my_program', 'generator', 'generator_20260101-000000.jsonl');
    mkfifoSyncOrSkip(fifo);
    const result = runCli(['stats', tree, '--json']);
    rmSync(fifo);
    assert.equal(result.status, 0, result.stderr);
    assert.equal((JSON.parse(result.stdout) as { records: number }).records, 24);
    check();
  });
});

function mkfifoSyncOrSkip(file: string): void {
  const made = spawnSync('mkfifo', [file]);
  if (made.status !== 0) throw new Error(`mkfifo failed: ${made.stderr}`);
}

/** Runs until TRACES_TEST_PAUSE=`point`, calls `change`, and lets the run go on. */
async function changedWhilePaused(point: string, args: string[], change: () => void, env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env, TRACES_TEST_PAUSE: point }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  let changed = false;
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    if (!changed && stderr.includes(`test pause at ${point}`)) {
      changed = true;
      change();
      child.kill('SIGUSR2');
    }
  });
  const code = await exited;
  assert.ok(changed, `the run never paused: ${stderr}`);
  return { code, stderr };
}

describe('an input rewritten between the plan and the second read', () => {
  /** Runs until the plan has every line's place, calls `change`, and lets the run go on. */
  const changedAfterPlanning = (args: string[], change: () => void, env: NodeJS.ProcessEnv = {}) => changedWhilePaused('planned', args, change, env);

  const cases: [string, string[], NodeJS.ProcessEnv][] = [
    ['dedupe, one thread', ['dedupe'], { TRACES_WORKERS: '1' }],
    ['dedupe, workers copying', ['dedupe'], { TRACES_WORKERS: '2', TRACES_SHARE_BYTES: '4096' }],
    ['export, one thread', ['export', '--format', 'nemo'], { TRACES_WORKERS: '1' }],
    ['export, workers projecting', ['export', '--format', 'nemo'], { TRACES_WORKERS: '2', TRACES_SHARE_BYTES: '4096' }],
  ];
  /** The file with one letter of its first user text changed: the same size, another record. */
  const sameSize = (file: string): string => {
    const text = readFileSync(file, 'utf8');
    const at = text.indexOf('"content":"') + 11;
    const changed = `${text.slice(0, at)}${text[at] === 'Z' ? 'Y' : 'Z'}${text.slice(at + 1)}`;
    assert.equal(Buffer.byteLength(changed), Buffer.byteLength(text));
    return changed;
  };
  const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  for (const [name, command, env] of cases) {
    for (const [how, rewrite, why] of [
      ['cut short', (file: string) => truncateSync(file, 0), 'no record starts at byte \\d+ any more'],
      // Every later line moves by 8 bytes: a kept line's planned place now falls inside another line.
      ['rewritten with a line put first', (file: string) => writeFileSync(file, `{"x":1}\n${readFileSync(file, 'utf8')}`), 'no record starts at byte \\d+ any more'],
      // Issue 39. Every line still lines up; an editor that writes in place: the same size, a new modification time.
      ['rewritten in place at the same size', (file: string) => writeFileSync(file, sameSize(file)), escaped('rewritten in place: the same size, modified again')],
      // An editor that saves a new file and renames it over the old one.
      ['replaced by a file of the same size', (file: string) => {
        writeFileSync(`${file}.tmp`, sameSize(file));
        renameSync(`${file}.tmp`, file);
      }, escaped('another file is at its path now, as an editor saves one')],
    ] as const) {
      it(`${name}: a trace file ${how} stops the run with one line, and nothing is written`, async () => {
        const tree = path.join(tempDir(), 'tree');
        cpSync(SAMPLES, tree, { recursive: true });
        const module = path.join(tree, 'my_program', 'generator_cot');
        const file = path.join(module, readdirSync(module).find((f) => f.endsWith('.jsonl'))!);
        const out = path.join(tempDir(), 'out');
        const run = await changedAfterPlanning([...command, tree, '--out', out], () => rewrite(file), env);
        assert.equal(run.code, 2, run.stderr);
        const lines = run.stderr.split('\n').filter((line) => line.startsWith('traces:') && !line.includes('test pause'));
        assert.equal(lines.length, 1, run.stderr);
        assert.match(lines[0], new RegExp(`^traces: ${escaped(file)}: changed while traces was reading it \\(${why}\\): rerun once nothing rewrites it$`));
        assert.equal(existsSync(out), false, 'nothing was written');
      });
    }
  }

  it('an Ask recording rewritten in place at the same size between the plan and the export stops the run with one line (issue 39)', async () => {
    const tree = path.join(tempDir(), 'tree');
    cpSync(path.join(REPO, 'test', 'fixtures', 'ask', 'message-tools'), tree, { recursive: true });
    const file = path.join(tree, 'recording.json');
    const out = path.join(tempDir(), 'out');
    const run = await changedAfterPlanning(['export', tree, '--format', 'nemo', '--out', out], () => writeFileSync(file, sameSize(file)), { TRACES_WORKERS: '1' });
    assert.equal(run.code, 2, run.stderr);
    const lines = run.stderr.split('\n').filter((line) => line.startsWith('traces:') && !line.includes('test pause'));
    assert.deepEqual(lines, [`traces: ${file}: changed while traces was reading it (rewritten in place: the same size, modified again): rerun once nothing rewrites it`]);
    assert.equal(existsSync(out), false, 'nothing was written');
  });

  for (const [point, when] of [
    ['reading', 'before it was read'],
    ['planned', 'between the plan and the second read'],
  ] as const) {
    for (const [name, command, env] of cases) {
      it(`${name}: a trace file removed ${when} stops the run with one line that says so, and nothing is written`, async () => {
        const tree = path.join(tempDir(), 'tree');
        cpSync(SAMPLES, tree, { recursive: true });
        const module = path.join(tree, 'my_program', 'generator_cot');
        const file = path.join(module, readdirSync(module).find((f) => f.endsWith('.jsonl'))!);
        const out = path.join(tempDir(), 'out');
        const run = await changedWhilePaused(point, [...command, tree, '--out', out], () => rmSync(file), env);
        assert.equal(run.code, 2, run.stderr);
        const lines = run.stderr.split('\n').filter((line) => line.startsWith('traces:') && !line.includes('test pause'));
        assert.deepEqual(lines, [
          `traces: ${file}: it disappeared after traces listed it (ENOENT): another program moved or removed it while traces ran; this run stopped and wrote nothing: rerun once nothing moves the trace files`,
        ]);
        assert.equal(existsSync(out), false, 'nothing was written');
      });
    }
  }

  it('a file appended to meanwhile (a recorder still writing) is read as planned', async () => {
    const tree = path.join(tempDir(), 'tree');
    cpSync(SAMPLES, tree, { recursive: true });
    const module = path.join(tree, 'my_program', 'generator_cot');
    const file = path.join(module, readdirSync(module).find((f) => f.endsWith('.jsonl'))!);
    const unchanged = path.join(tempDir(), 'unchanged');
    assert.equal(runCli(['dedupe', tree, '--out', unchanged]).status, 0);
    const out = path.join(tempDir(), 'out');
    const run = await changedAfterPlanning(['dedupe', tree, '--out', out], () => writeFileSync(file, `${readFileSync(file, 'utf8')}{"appended": true}\n`), {
      TRACES_WORKERS: '2',
      TRACES_SHARE_BYTES: '4096',
    });
    assert.equal(run.code, 0, run.stderr);
    const relative = path.relative(tree, file);
    assert.equal(readFileSync(path.join(out, relative), 'utf8'), readFileSync(path.join(unchanged, relative), 'utf8'));
  });
});

describe('an input reached by a second path (a bind mount)', () => {
  it('is refused as an output by either path, and its files stay as they were', (t) => {
    const base = tempDir();
    const source = path.join(base, 'source');
    const mounted = path.join(base, 'mounted');
    mkdirSync(source);
    mkdirSync(mounted);
    cpSync(SAMPLES, path.join(source, 'tree'), { recursive: true });
    const mount = spawnSync('mount', ['--bind', source, mounted], { encoding: 'utf8' });
    if (mount.status !== 0) {
      t.skip(`no bind mount here (needs root): ${(mount.stderr || mount.error?.message || '').trim()}`);
      return;
    }
    try {
      const tree = path.join(source, 'tree');
      const traceFile = path.join('my_program', 'generator', readdirSync(path.join(tree, 'my_program', 'generator')).find((f) => f.endsWith('.jsonl'))!);
      const before = readFileSync(path.join(tree, traceFile));
      const out = path.join(base, 'out');
      for (const [args, where] of [
        [['dedupe', tree, '--out', out, '--manifest', path.join(mounted, 'tree', traceFile), '--force'], /--manifest \S+ is inside the input/],
        [['filter', tree, '--out', path.join(mounted, 'tree', 'filtered')], /--out \S+ is inside the input/],
        [['dedupe', path.join(tree, 'my_program'), '--out', mounted, '--force'], /--out \S+ contains the input/],
        [['export', path.join(mounted, 'tree'), '--format', 'nemo', '--out', out, '--manifest', path.join(tree, traceFile), '--force'], /--manifest \S+ is inside the input/],
      ] as const) {
        const run = runCli([...args]);
        assert.equal(run.status, 2, run.stderr);
        assert.match(run.stderr, where);
        assert.ok(readFileSync(path.join(tree, traceFile)).equals(before), `${args.join(' ')} changed an input`);
        assert.equal(existsSync(out), false);
      }
      // A path that is no input's is written as usual.
      assert.equal(runCli(['dedupe', tree, '--out', out, '--manifest', path.join(base, 'drops.jsonl')]).status, 0);
    } finally {
      spawnSync('umount', [mounted]);
    }
  });
});

describe('files and folders other flags name are inputs too', () => {
  it('no output is, is inside or contains a keep-list, an exclusion list, an --against output, a tools, rules or prices file', () => {
    const base = tempDir();
    const tree = path.join(base, 'tree');
    cpSync(SAMPLES, tree, { recursive: true });
    const lists = path.join(base, 'lists');
    mkdirSync(lists);
    const ids = path.join(lists, 'ids.txt');
    writeFileSync(ids, '# call_ids\nnot-a-call\n');
    const tools = path.join(lists, 'tools.json');
    writeFileSync(tools, '[]\n');
    const rules = path.join(lists, 'rules.json');
    writeFileSync(rules, '[{"name": "ticket", "pattern": "TCK-[0-9]{6}"}]\n');
    const prices = path.join(lists, 'prices.json');
    writeFileSync(prices, readFileSync(path.join(REPO, 'src', 'pricing', 'default-prices.json')));
    const earlier = path.join(base, 'earlier');
    assert.equal(runCli(['dedupe', tree, '--out', earlier]).status, 0);
    const snapshot = () =>
      [ids, tools, rules, prices, ...readdirSync(earlier, { recursive: true }).map((f) => path.join(earlier, String(f)))]
        .filter((f) => lstatSync(f).isFile())
        .map((f) => `${f}:${createHash('sha256').update(readFileSync(f)).digest('hex')}`);
    const before = snapshot();
    const out = path.join(base, 'out');
    for (const [args, expected] of [
      [['dedupe', tree, '--keep-list', ids, '--out', out, '--manifest', ids, '--force'], /--manifest \S+ is the input/],
      [['filter', tree, '--exclude', ids, '--out', out, '--manifest', ids, '--force'], /--manifest \S+ is the input/],
      [['dedupe', tree, '--against', earlier, '--out', earlier, '--force'], /--out \S+ is the input/],
      [['dedupe', tree, '--against', earlier, '--out', path.join(earlier, 'next')], /--out \S+ is inside the input/],
      [['export', tree, '--format', 'openai', '--tools', tools, '--out', lists, '--force'], /--out \S+ contains the input/],
      [['export', tree, '--format', 'openai', '--scrub-rules', rules, '--out', out, '--manifest', rules, '--force'], /--manifest \S+ is the input/],
      [['index', tree, '--prices', prices, '--out', prices, '--force'], /--out \S+ is the input/],
    ] as const) {
      const run = runCli([...args]);
      assert.equal(run.status, 2, `${args.join(' ')}: ${run.stderr}`);
      assert.match(run.stderr, expected);
      assert.deepEqual(snapshot(), before, `${args.join(' ')} changed an input`);
      assert.equal(existsSync(out), false);
    }
  });

  it('a temporary folder (TMPDIR) inside the traces is refused before anything is written there', () => {
    const tree = path.join(tempDir(), 'tree');
    cpSync(SAMPLES, tree, { recursive: true });
    const tmp = path.join(tree, 'tmp');
    mkdirSync(tmp);
    const out = path.join(path.dirname(tree), 'out');
    for (const args of [
      ['dedupe', tree, '--out', out],
      ['export', tree, '--format', 'openai', '--out', out],
      ['index', tree, '--out', '-'],
      ['sql', 'SELECT 1', tree],
    ]) {
      const run = runCli(args, { env: { TMPDIR: tmp } });
      assert.equal(run.status, 2, `${args.join(' ')}: ${run.stderr}`);
      assert.match(run.stderr, /temporary folder \S+ \(TMPDIR\) is inside the input/);
      assert.deepEqual(readdirSync(tmp), [], `${args.join(' ')} wrote into the input`);
      assert.equal(existsSync(out), false);
    }
    assert.equal(runCli(['stats', tree], { env: { TMPDIR: tmp } }).status, 0, 'stats writes no temporary file');
  });
});

describe('an output name taken while the run was going (the user, a second run)', () => {
  /** A file saved at a name the run will write, after the run checked its paths and before it moves its files into place. */
  const cases: { name: string; point: string; args: (tree: string, base: string) => string[]; taken: string; flag: string; named?: string; env?: NodeJS.ProcessEnv }[] = [
    { name: 'export --manifest', point: 'planned', args: (tree, base) => ['export', tree, '--format', 'openai', '--out', path.join(base, 'out'), '--manifest', path.join(base, 'kept.jsonl')], taken: 'kept.jsonl', flag: '--manifest' },
    { name: 'export, a dataset file', point: 'planned', args: (tree, base) => ['export', tree, '--format', 'nemo', '--out', path.join(base, 'out')], taken: path.join('out', 'training.jsonl'), flag: '--out' },
    {
      name: 'dedupe with workers, a trace file of the copy',
      point: 'planned',
      args: (tree, base) => ['dedupe', tree, '--out', path.join(base, 'out')],
      taken: path.join('out', ONE_FILE),
      flag: '--out',
      env: { TRACES_WORKERS: '2', TRACES_SHARE_BYTES: '4096' },
    },
    { name: 'filter, the completion marker', point: 'planned', args: (tree, base) => ['filter', tree, '--status', 'ok', '--out', path.join(base, 'out')], taken: path.join('out', '_traces', 'complete'), flag: '--out' },
    { name: 'index --out FILE', point: 'written', args: (tree, base) => ['index', tree, '--out', path.join(base, 'index.parquet')], taken: 'index.parquet', flag: '--out' },
    { name: 'index --out DIR/', point: 'written', args: (tree, base) => ['index', tree, '--out', `${path.join(base, 'parts')}/`], taken: path.join('parts', 'notes.txt'), flag: '--out', named: 'parts' },
  ];
  for (const { name, point, args, taken, flag, named = taken, env } of cases) {
    it(`${name}: the file stays as it is, the run says so with exit 2 and leaves nothing`, async () => {
      const base = tempDir();
      const tree = path.join(base, 'tree');
      cpSync(SAMPLES, tree, { recursive: true });
      const before = snapshot(tree);
      const run = await changedWhilePaused(
        point,
        args(tree, base),
        () => {
          mkdirSync(path.dirname(path.join(base, taken)), { recursive: true });
          writeFileSync(path.join(base, taken), 'the only copy\n');
        },
        env,
      );
      assert.equal(run.code, 2, run.stderr);
      assert.match(run.stderr, new RegExp(`traces: ${flag} [^\n]*: ${path.join(base, named).replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} appeared while traces was running; nothing was written over it`));
      assert.equal(readFileSync(path.join(base, taken), 'utf8'), 'the only copy\n');
      // Only the tree and what the test saved: no output, no temporary file.
      const left = listing(base)!.filter((entry) => !entry.startsWith('tree'));
      const saved = taken.split(path.sep);
      assert.deepEqual(left, saved.map((_, i) => saved.slice(0, i + 1).join('/') + (i < saved.length - 1 ? '/' : '')));
      assert.deepEqual(snapshot(tree), before);
    });
  }

  it('with --force the run replaces it, as it replaces what was there when it began', async () => {
    const base = tempDir();
    const tree = path.join(base, 'tree');
    cpSync(SAMPLES, tree, { recursive: true });
    const manifest = path.join(base, 'kept.jsonl');
    const run = await changedWhilePaused('planned', ['export', tree, '--format', 'openai', '--out', path.join(base, 'out'), '--manifest', manifest, '--force'], () =>
      writeFileSync(manifest, 'the only copy\n'),
    );
    assert.equal(run.code, 0, run.stderr);
    assert.match(readFileSync(manifest, 'utf8'), /"reason":"status"/);
  });
});

describe('a flag naming a file the run writes itself', () => {
  const cases: [string, string[], string][] = [
    ['export, a dataset', ['export', '--format', 'openai'], 'training.jsonl'],
    ['export, the completion marker', ['export', '--format', 'nemo'], path.join('_traces', 'complete')],
    ['dedupe, a trace file of the copy', ['dedupe'], ONE_FILE],
  ];
  for (const [name, command, own] of cases) {
    it(`${name}: --manifest there is refused before anything is moved, and nothing is left`, () => {
      const { base, tree, check } = tracked();
      const out = path.join(base, 'out');
      const result = runCli([...command, tree, '--out', out, '--manifest', path.join(out, own)]);
      assert.equal(result.status, 2, result.stderr);
      assert.match(result.stderr, new RegExp(`traces: --manifest \\S+: ${own.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} is a file traces writes itself into --out \\S+: choose another path\\n`));
      assert.equal(listing(out), null, 'nothing of the run is left');
      check();
    });
  }
});

describe('an output whose name is near the 255 bytes a file system allows', () => {
  it('is written: the temporary names beside it are shortened (index --out, --manifest, browse\'s exclusion file)', async () => {
    const dir = tempDir();
    const index = path.join(dir, `${'i'.repeat(240)}.parquet`);
    const built = runCli(['index', SAMPLES, '--out', index]);
    assert.equal(built.status, 0, built.stderr);
    assert.ok(existsSync(index));
    const manifest = path.join(dir, `${'é'.repeat(120)}.jsonl`);
    const exported = runCli(['export', SAMPLES, '--format', 'nemo', '--out', path.join(dir, 'out'), '--manifest', manifest]);
    assert.equal(exported.status, 0, exported.stderr);
    assert.ok(readFileSync(manifest, 'utf8').length > 0);
    const { writeExcludeFile } = await import('../src/ui/exclude-file.js');
    const exclude = path.join(dir, `${'x'.repeat(250)}`);
    writeExcludeFile(exclude, '# none\n');
    assert.equal(readFileSync(exclude, 'utf8'), '# none\n');
    assert.deepEqual(readdirSync(dir).filter((name) => name.startsWith('.')), [], 'no temporary name left');
  });
});

describe('an empty path (an unset shell variable)', () => {
  it('is refused as a root and as every output flag, where it meant the current folder; nothing is read there or written', () => {
    const cwd = tempDir();
    writeFileSync(path.join(cwd, 'keep.txt'), 'mine\n');
    const tree = path.join(tempDir(), 'tree');
    cpSync(SAMPLES, tree, { recursive: true });
    const out = path.join(tempDir(), 'out');
    const cases: [string[], string][] = [
      [['stats', ''], 'traces: a root is an empty path: name a trace folder or file (is a shell variable unset?)'],
      [['stats', tree, ' '], 'traces: a root is an empty path: name a trace folder or file (is a shell variable unset?)'],
      [['dedupe', tree, '--out', ''], 'traces: --out is an empty path: name the folder to write (is a shell variable unset?)'],
      [['export', tree, '--format', 'nemo', '--out', '', '--force'], 'traces: --out is an empty path: name the folder to write (is a shell variable unset?)'],
      [['index', tree, '--out', ''], 'traces: --out is an empty path: name the file to write (is a shell variable unset?)'],
      [['export', tree, '--format', 'nemo', '--out', out, '--manifest', ''], 'traces: --manifest is an empty path: name the file to write (is a shell variable unset?)'],
      [['filter', tree, '--out', out, '--manifest', ''], 'traces: --manifest is an empty path: name the file to write (is a shell variable unset?)'],
    ];
    for (const [args, message] of cases) {
      const run = runCli(args, { cwd });
      assert.equal(run.status, 2, `${JSON.stringify(args)}: ${run.stderr}`);
      assert.equal(run.stderr, `${message}\n`, JSON.stringify(args));
    }
    assert.deepEqual(readdirSync(cwd), ['keep.txt']);
    assert.equal(existsSync(out), false);
  });
});
