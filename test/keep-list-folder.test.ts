/**
 * `--keep-list DIR`: an engine writes one list as a folder of part files (Spark's
 * `part-00000-….parquet` beside `_SUCCESS` and `.crc` files), and the folder is the list: the
 * union of its parts, the engine's bookkeeping files left out. Before, the docs told users to
 * merge the parts with `traces sql "COPY …"`, which sql refuses by design.
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { SAMPLES, runCli, runCliJson, tempDir } from './helpers.js';

interface Summary {
  kept: number;
  keep_list: { listed: number; met: number; not_found: number; malformed: number };
}

describe('a keep-list folder', () => {
  it('is the union of its part files; _SUCCESS and .crc files are no part of it', () => {
    const keep = path.join(tempDir('traces-keep-folder-'), 'keep');
    mkdirSync(keep);
    writeFileSync(path.join(keep, 'part-00000.txt'), '08ad8811-dff0-4419-b934-5695fb1686c2\n');
    writeFileSync(path.join(keep, 'part-00001.txt'), '# the second part\n216f6542-e28a-4881-82f7-1594c83243c0\n');
    writeFileSync(path.join(keep, '_SUCCESS'), '');
    writeFileSync(path.join(keep, '.part-00000.txt.crc'), Buffer.from([0x63, 0x72, 0x63, 0x00, 0xff, 0x01]));
    const summary = runCliJson<Summary>(['dedupe', SAMPLES, '--keep-list', keep, '--dry-run', '--json']);
    assert.equal(summary.kept, 2);
    assert.deepEqual([summary.keep_list.listed, summary.keep_list.met, summary.keep_list.not_found, summary.keep_list.malformed], [2, 2, 0, 0]);
  });

  it("a folder of traces index's Parquet parts keeps what dedupe keeps without a list", () => {
    const work = tempDir('traces-keep-folder-');
    const index = path.join(work, 'index', 'host-07');
    assert.equal(runCli(['index', SAMPLES, '--out', `${index}/`]).status, 0);
    const listed = runCliJson<Summary>(['dedupe', SAMPLES, '--keep-list', index, '--dry-run', '--json']);
    const plain = runCliJson<Summary>(['dedupe', SAMPLES, '--dry-run', '--json']);
    assert.equal(listed.kept, plain.kept);
    assert.equal(listed.keep_list.not_found, 0);
  });

  it('a folder holding no list file is refused, naming it', () => {
    const empty = path.join(tempDir('traces-keep-folder-'), 'empty');
    mkdirSync(empty);
    writeFileSync(path.join(empty, '_SUCCESS'), '');
    const result = runCli(['dedupe', SAMPLES, '--keep-list', empty, '--dry-run']);
    assert.equal(result.status, 2);
    assert.match(result.stderr, /--keep-list .*empty: the folder holds no list file/);
  });
});
