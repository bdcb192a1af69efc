/**
 * Issue 28, defect 3: `--against` bookkeeping that is damaged (run.json cut short or not an
 * object, keys.bin cut short, emptied or changed) is refused with one line and exit 2, never
 * read as fewer keys (which would export again what was already trained on).
 */
import assert from 'node:assert/strict';
import { cpSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { SAMPLES, runCli, tempDir } from './helpers.js';

describe('--against bookkeeping proves itself whole', () => {
  let made = '';
  let keys = 0;
  before(() => {
    made = path.join(tempDir(), 'first');
    const result = runCli(['dedupe', SAMPLES, '--out', made]);
    assert.equal(result.status, 0, result.stderr);
    keys = (JSON.parse(readFileSync(path.join(made, '_traces', 'run.json'), 'utf8')) as { keys: number }).keys;
  });

  /** A copy of the first output, damaged by `damage` (given its _traces folder). */
  const damagedCopy = (damage: (meta: string) => void): string => {
    const copy = path.join(tempDir(), 'copy');
    cpSync(made, copy, { recursive: true });
    damage(path.join(copy, '_traces'));
    return copy;
  };

  /** A dry run against `against`: its exit code and what it printed. */
  const against = (dir: string) => runCli(['dedupe', SAMPLES, '--against', dir, '--dry-run', '--json']);

  const refusedWithOneLine = (dir: string, pattern: RegExp): void => {
    const result = against(dir);
    assert.equal(result.status, 2, result.stdout + result.stderr);
    const lines = result.stderr.trim().split('\n');
    assert.equal(lines.length, 1, result.stderr);
    assert.match(lines[0], pattern);
    assert.match(lines[0], /run the command that made it again \(with --force\)/);
    assert.doesNotMatch(result.stderr, /at .*\.js:\d+|SyntaxError|TypeError/);
  };

  it('run.json records the count and the sha256 of keys.bin', () => {
    const run = JSON.parse(readFileSync(path.join(made, '_traces', 'run.json'), 'utf8')) as Record<string, unknown>;
    assert.ok(keys > 8, 'enough keys to cut some off');
    assert.equal(statSync(path.join(made, '_traces', 'keys.bin')).size, keys * 16);
    assert.match(String(run.keys_sha256), /^[0-9a-f]{64}$/);
  });

  it('a whole output is read: the second run keeps nothing', () => {
    const result = against(made);
    assert.equal(result.status, 0, result.stderr);
    const summary = JSON.parse(result.stdout) as { kept: number; dropped: { seen: number } };
    assert.equal(summary.kept, 0);
  });

  it('run.json cut short is refused in one line, exit 2', () => {
    const dir = damagedCopy((meta) => truncateSync(path.join(meta, 'run.json'), 20));
    refusedWithOneLine(dir, /run\.json is not JSON/);
  });

  for (const [name, text] of [
    ['null', 'null'],
    ['an array', '[]'],
    ['a number', '40'],
    ['an object without a count', '{"command":"dedupe","key":"inputs,config","keys_version":2}'],
    ['a count that is text', '{"command":"dedupe","key":"inputs,config","keys_version":2,"keys":"40"}'],
  ] as const) {
    it(`run.json holding ${name} is refused in one line, exit 2`, () => {
      const dir = damagedCopy((meta) => writeFileSync(path.join(meta, 'run.json'), text));
      refusedWithOneLine(dir, /run\.json (holds no object|gives no count of keys)/);
    });
  }

  it('keys.bin cut to 8 keys (a multiple of 16 bytes) while run.json gives more is refused', () => {
    const dir = damagedCopy((meta) => truncateSync(path.join(meta, 'keys.bin'), 128));
    refusedWithOneLine(dir, new RegExp(`keys\\.bin holds 128 bytes where _traces/run\\.json says ${keys} keys`));
  });

  it('keys.bin emptied is refused', () => {
    const dir = damagedCopy((meta) => truncateSync(path.join(meta, 'keys.bin'), 0));
    refusedWithOneLine(dir, /keys\.bin holds 0 bytes/);
  });

  it('keys.bin of the right size but other bytes is refused by its checksum', () => {
    const dir = damagedCopy((meta) => {
      const file = path.join(meta, 'keys.bin');
      const bytes = readFileSync(file);
      bytes.fill(0, 0, 16);
      writeFileSync(file, bytes);
    });
    refusedWithOneLine(dir, /keys\.bin is not what was written/);
  });

  it('an output made before the checksum was recorded is read when its count proves keys.bin whole, refused when not', () => {
    const older = damagedCopy((meta) => {
      const file = path.join(meta, 'run.json');
      const run = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
      delete run.keys_sha256;
      writeFileSync(file, JSON.stringify(run));
    });
    const result = against(older);
    assert.equal(result.status, 0, result.stderr);
    assert.equal((JSON.parse(result.stdout) as { kept: number }).kept, 0);
    truncateSync(path.join(older, '_traces', 'keys.bin'), 4096 > keys * 16 ? 16 * Math.floor(keys / 2) : 4096);
    refusedWithOneLine(older, /keys\.bin holds \d+ bytes where/);
  });
});
