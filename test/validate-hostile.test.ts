/**
 * `validate DIR` on a dataset folder anyone may have written: what it reads is bounded by size
 * and kind, and each thing wrong is one line of the report, never a stack trace or a hang. The
 * data_files globs are matched without backtracking (src/pipeline/glob.ts).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { nameGlob, pathGlob } from '../src/pipeline/glob.js';
import { flat, REPO, runCli, SAMPLES, tempDir } from './helpers.js';

const BIN = path.join(REPO, 'bin', 'traces.js');
let exported = '';

/** A copy of a genuine hf export, changed by `change`. */
function folder(change: (dir: string) => void): string {
  const dir = path.join(tempDir('traces-hostile-hf-'), 'ds');
  cpSync(exported, dir, { recursive: true });
  change(dir);
  return dir;
}

/**
 * validate on the folder, in a child that a hang cannot keep: the guard is far above any honest
 * run and only turns a hang into a failure with a message.
 */
function validated(dir: string): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [BIN, 'validate', dir, '--format', 'hf'], { encoding: 'utf8', timeout: 120_000 });
  assert.notEqual(result.signal, 'SIGTERM', `validate ${dir} did not finish: it hangs or reads without end`);
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function refusedInOneLine(dir: string, problem: RegExp): void {
  const result = validated(dir);
  assert.equal(result.status, 1, result.stderr + result.stdout);
  assert.match(flat(result.stdout), problem);
  assert.doesNotMatch(result.stdout + result.stderr, /\n\s+at |Error:/, 'no stack trace');
}

const replaceCard = (dir: string, text: string) => writeFileSync(path.join(dir, 'README.md'), text);

describe('validate on a hostile hf folder', () => {
  before(() => {
    exported = path.join(tempDir('traces-hostile-hf-'), 'base');
    const result = runCli(['export', SAMPLES, '--format', 'hf', '--out', exported]);
    assert.equal(result.status, 0, result.stderr);
    assert.equal(validated(exported).status, 0);
  });

  it('a card with more than 100 YAML aliases, or nested past the stack', () => {
    refusedInOneLine(
      folder((dir) => replaceCard(dir, `---\nx: &a [1, 2]\n${Array.from({ length: 150 }, (_, i) => `y${i}: *a`).join('\n')}\n---\nbody\n`)),
      /README\.md has front matter that cannot be read safely: .*100 YAML aliases/,
    );
    refusedInOneLine(folder((dir) => replaceCard(dir, `---\nx: ${'['.repeat(20000)}${']'.repeat(20000)}\n---\n`)), /README\.md has front matter/);
  });

  it('front matter that is a YAML list or a scalar is refused, as the Hub refuses it', () => {
    refusedInOneLine(folder((dir) => replaceCard(dir, '---\n- a\n- b\n---\nbody\n')), /front matter that is a YAML list, not a mapping/);
    refusedInOneLine(folder((dir) => replaceCard(dir, '---\njust words\n---\nbody\n')), /front matter that is a YAML scalar, not a mapping/);
    refusedInOneLine(folder((dir) => replaceCard(dir, '---\n42\n---\n')), /front matter that is a YAML scalar/);
  });

  it('a card larger than any card is named by its size, not read', () => {
    refusedInOneLine(
      folder((dir) => {
        const card = path.join(dir, 'README.md');
        writeFileSync(card, readFileSync(card, 'utf8'));
        // Sparse: 600 MB that take no room.
        truncateSync(card, 600 * 1000 * 1000);
      }),
      /README\.md is 600\.0 MB, more than the .* read of such a file/,
    );
  });

  it('a FIFO as README.md or dataset_info.json, README.md linked to /dev/zero: named, never waited on', { skip: process.platform === 'win32' }, () => {
    const fifo = (file: string) => (dir: string) => {
      rmSync(path.join(dir, file));
      assert.equal(spawnSync('mkfifo', [path.join(dir, file)]).status, 0);
    };
    refusedInOneLine(folder(fifo('README.md')), /README\.md is a FIFO \(named pipe\), not a regular file/);
    refusedInOneLine(folder(fifo('dataset_info.json')), /dataset_info\.json is a FIFO \(named pipe\), not a regular file/);
    refusedInOneLine(
      folder((dir) => {
        rmSync(path.join(dir, 'README.md'));
        symlinkSync('/dev/zero', path.join(dir, 'README.md'));
      }),
      /README\.md is a device, not a regular file/,
    );
  });

  it('a data_files glob that backtracks in a regular expression (data/*a*a…*b) against a long name of a’s', () => {
    const glob = `data/${'*a'.repeat(40)}*b`;
    refusedInOneLine(
      folder((dir) => {
        const card = path.join(dir, 'README.md');
        writeFileSync(card, readFileSync(card, 'utf8').replace('"data/train-00000-of-00001.parquet"', JSON.stringify(glob)));
        mkdirSync(path.join(dir, 'data'), { recursive: true });
        writeFileSync(path.join(dir, 'data', 'a'.repeat(200)), '');
      }),
      /split train's data_files \(data\/\*a\*a.*\) match no file/,
    );
  });
});

describe('globs are matched as Python’s glob matches them, without backtracking', () => {
  it('paths: * ? [..] [!..] within a name, ** for any folders', () => {
    const cases: [string, string, boolean][] = [
      ['data/*.parquet', 'data/train-0.parquet', true],
      ['data/*.parquet', 'data/x/train.parquet', false],
      ['data/**', 'data/x/y.parquet', true],
      ['data/**/*.jsonl', 'data/a.jsonl', true],
      ['data/**/*.jsonl', 'data/a/b/c.jsonl', true],
      ['data/train-[0-9][0-9][0-9][0-9][0-9]-of-[0-9][0-9][0-9][0-9][0-9]*.*', 'data/train-00000-of-00001.parquet', true],
      ['data/[!t]*', 'data/train.jsonl', false],
      ['data/[!t]*', 'data/valid.jsonl', true],
      ['data/?.jsonl', 'data/ab.jsonl', false],
      [`data/${'*a'.repeat(40)}*b`, `data/${'a'.repeat(5000)}`, false],
      [`data/${'*a'.repeat(40)}*b`, `data/${'a'.repeat(50)}b`, true],
    ];
    for (const [glob, name, expected] of cases) assert.equal(pathGlob(glob, 'data_files').test(name), expected, `${glob} on ${name.slice(0, 60)}`);
  });

  it('names: * crosses /, an invalid class is refused with the flag', () => {
    assert.equal(nameGlob('*mini', '--model').test('openai/gpt-4o-mini'), true);
    assert.equal(nameGlob('openai/*', '--model').test('anthropic/claude'), false);
    assert.equal(nameGlob(`${'*a'.repeat(40)}*b`, '--program').test('a'.repeat(5000)), false);
    assert.throws(() => nameGlob('[z-a]', '--model'), /--model "\[z-a\]": not a valid pattern/);
  });
});
