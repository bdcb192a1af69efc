/**
 * Worker threads change nothing: every command that shares its files out among threads gives
 * the same output with one thread as with two workers and this thread taking 256 KB shares
 * (files cut mid-way, shares finishing out of order).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { generatedTree, runCli, tempDir } from './helpers.js';

const ONE_THREAD = { TRACES_WORKERS: '1' };
const SHARED_OUT = { TRACES_WORKERS: '2', TRACES_SHARE_BYTES: String(256 << 10) };

/** Every file under `dir`, by relative path, with its bytes. */
function snapshot(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) files[path.relative(dir, path.join(entry.parentPath, entry.name))] = readFileSync(path.join(entry.parentPath, entry.name), 'utf8');
  }
  return files;
}

describe('one thread or several', () => {
  let tree = '';

  before(() => {
    tree = generatedTree({ mb: 4, seed: 23, firstBigImageMb: 1, bigImageEveryMb: 2 }).tree;
  });

  for (const args of [['stats', '--json'], ['verify', '--json'], ['runs', '--json'], ['scan', '--json']]) {
    it(`${args[0]} prints the same`, () => {
      const one = runCli([args[0]!, tree, ...args.slice(1)], { env: ONE_THREAD });
      const shared = runCli([args[0]!, tree, ...args.slice(1)], { env: SHARED_OUT });
      assert.equal(shared.status, one.status, shared.stderr);
      assert.ok(one.stdout.length > 50, one.stderr);
      assert.equal(shared.stdout, one.stdout);
    });
  }

  for (const args of [['dedupe', '--status', 'ok'], ['export', '--format', 'nemo']]) {
    it(`${args[0]} writes the same files`, () => {
      const outOne = path.join(tempDir(), 'one');
      const outShared = path.join(tempDir(), 'shared');
      const one = runCli([args[0]!, tree, ...args.slice(1), '--out', outOne], { env: ONE_THREAD });
      const shared = runCli([args[0]!, tree, ...args.slice(1), '--out', outShared], { env: SHARED_OUT });
      assert.equal(one.status, 0, one.stderr);
      assert.equal(shared.status, 0, shared.stderr);
      const a = snapshot(outOne);
      const b = snapshot(outShared);
      assert.ok(Object.keys(a).length > 2);
      // The run record names the output folder; everything else must match byte for byte.
      for (const name of Object.keys(a)) if (!name.endsWith('run.json')) assert.equal(b[name], a[name], name);
      assert.deepEqual(Object.keys(b).sort(), Object.keys(a).sort());
    });
  }
});

describe('starting the workers before the files are found', () => {
  it('probes the paths on the command line for enough bytes, stopping early', async () => {
    const { namesAtLeast } = await import('../src/parallel/size-probe.js');
    const { mkdirSync, writeFileSync } = await import('node:fs');
    const root = tempDir();
    mkdirSync(path.join(root, 'p', 'm'), { recursive: true });
    writeFileSync(path.join(root, 'p', 'm', 'a.jsonl'), Buffer.alloc(3000));
    writeFileSync(path.join(root, 'p', 'b.jsonl'), Buffer.alloc(2000));
    assert.equal(namesAtLeast([root], 5000), true);
    assert.equal(namesAtLeast([root], 5001), false);
    assert.equal(namesAtLeast([path.join(root, 'p', 'm', 'a.jsonl'), 'nemo', path.join(root, 'missing')], 3000), true);
    assert.equal(namesAtLeast(['nemo', path.join(root, 'missing')], 1), false);
    // A tree with more entries than it may visit counts as big: probing must stay cheap.
    assert.equal(namesAtLeast([root], 1 << 30, 3), true);
  });
});
