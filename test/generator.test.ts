/**
 * The benchmark generator (bench/generate.ts) must write what Synalinks writes: orjson's exact
 * bytes and genuine hashes. Python + orjson, when available, re-checks every record.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expectedPath, generate, type Expected } from '../bench/generate.js';
import { dumps, f, formatFloat } from '../bench/json.js';

const PROJECT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const CHECKER = path.join(PROJECT, 'bench', 'check_tree.py');

function treeDigest(root: string): string {
  const hash = createHash('sha256');
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const full = path.join(dir, name);
      if (statSync(full).isDirectory()) walk(full);
      else hash.update(path.relative(root, full) + '\0').update(readFileSync(full));
    }
  };
  walk(root);
  return hash.digest('hex');
}

function pythonHasOrjson(): boolean {
  const r = spawnSync('python3', ['-c', 'import orjson'], { stdio: 'ignore' });
  return r.status === 0;
}

test('floats are written the way orjson writes them', () => {
  const cases: [number, string][] = [
    [1, '1.0'],
    [153133, '153133.0'],
    [0, '0.0'],
    [-0, '-0.0'],
    [0.1, '0.1'],
    [1783521049.555119, '1783521049.555119'],
    [0.00010544999999999999, '0.00010544999999999999'],
    [1.05e-5, '0.0000105'],
    [1e-5, '0.00001'],
    [1e-6, '1e-6'],
    [2.5e-6, '2.5e-6'],
    [1e-7, '1e-7'],
    [1e15, '1000000000000000.0'],
    [9999999999999998, '9999999999999998.0'],
    [1e16, '1e16'],
    [1.7976931348623157e308, '1.7976931348623157e308'],
    [5e-324, '5e-324'],
    [NaN, 'null'],
  ];
  for (const [x, text] of cases) assert.equal(formatFloat(x), text, String(x));
  assert.equal(dumps({ b: 1, a: [f(2), 'é"\n😀', null, true] }), '{"b":1,"a":[2.0,"é\\"\\n😀",null,true]}');
});

test('generated tree: counts, determinism, and Python recomputes every hash', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'traces-gen-'));
  try {
    const a = path.join(dir, 'a');
    const b = path.join(dir, 'b');
    const options = { mb: 2.5, seed: 7, firstBigImageMb: 1, bigImageEveryMb: 40 };
    const expected = generate({ out: a, ...options });
    generate({ out: b, ...options });

    const onDisk = JSON.parse(readFileSync(expectedPath(a), 'utf8')) as Expected;
    assert.equal(onDisk.records, expected.records);
    assert.ok(expected.trace_bytes >= 2.5 * 1024 * 1024);
    assert.equal(expected.records, expected.ok + expected.exception + expected.no_output);
    assert.ok(expected.ok > 100, `ok ${expected.ok}`);
    assert.ok(expected.exception > 0 && expected.no_output > 0);
    assert.ok(expected.damaged_lines >= 2, 'a truncated line and a garbage line');
    assert.ok(expected.damaged.some((d) => d.kind === 'truncated'));
    assert.ok(expected.unique_ok_keys <= expected.ok);
    assert.ok(Object.keys(expected.synalinks_versions).length === 2, 'two synalinks versions');
    assert.ok(expected.largest_line_bytes > 1_000_000, 'one record with a 1 MB+ image');
    assert.ok(expected.skipped_paths.includes('synalinks.json'));
    assert.equal(treeDigest(a), treeDigest(b), 'same seed, same bytes');

    if (!pythonHasOrjson()) {
      t.skip('python3 with orjson not available: hashes not cross-checked');
      return;
    }
    const r = spawnSync('python3', [CHECKER, a], { encoding: 'utf8', maxBuffer: 1 << 24 });
    assert.equal(r.stderr, '');
    const report = JSON.parse(r.stdout) as { records: number; problem_count: number; problems: string[] };
    assert.deepEqual(report.problems, []);
    assert.equal(report.problem_count, 0);
    assert.equal(report.records, expected.records);
    assert.equal(r.status, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
