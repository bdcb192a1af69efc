/**
 * The prebuilt rank tables (tools/token-ranks.mjs, read by src/targets/token-ranks.ts): the
 * same vocabulary as gpt-tokenizer's own modules, and never used when they might not be.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { serialize } from 'node:v8';
import { prebuiltTablePath, rankModule, readPrebuiltRanks, type RankTable } from '../src/targets/token-ranks.js';
import { REPO, tempDir } from './helpers.js';

const ENCODINGS = ['o200k_base', 'cl100k_base'];

async function moduleRanks(encoding: string): Promise<RankTable> {
  return ((await import(rankModule(encoding))) as { default: RankTable }).default;
}

describe('prebuilt token rank tables', () => {
  for (const encoding of ENCODINGS) {
    it(`${encoding}: the build wrote the module's table exactly, and it is the one read`, async () => {
      const prebuilt = readPrebuiltRanks(encoding);
      assert.ok(prebuilt !== null, `no usable ${prebuiltTablePath(encoding)}: the build writes it (npm run build)`);
      const expected = await moduleRanks(encoding);
      assert.equal(prebuilt.length, expected.length);
      // Every rank, strings and byte arrays alike: one wrong entry would shift counts.
      assert.deepEqual(prebuilt, expected);
    });
  }

  it('ignores a table made from another module, a damaged one and a missing one', () => {
    const dir = tempDir();
    const real = readFileSync(prebuiltTablePath('o200k_base'));
    const other = path.join(dir, 'other.v8');
    writeFileSync(other, serialize({ source: '0'.repeat(64), ranks: ['a', 'b'] }));
    assert.equal(readPrebuiltRanks('o200k_base', other), null, 'made from another module');
    const damaged = path.join(dir, 'damaged.v8');
    writeFileSync(damaged, real.subarray(0, real.length >> 1));
    assert.equal(readPrebuiltRanks('o200k_base', damaged), null, 'cut short');
    const shapeless = path.join(dir, 'shapeless.v8');
    writeFileSync(shapeless, serialize([1, 2, 3]));
    assert.equal(readPrebuiltRanks('o200k_base', shapeless), null, 'not a table');
    assert.equal(readPrebuiltRanks('o200k_base', path.join(dir, 'missing.v8')), null, 'missing');
  });

  it('the build tool writes both tables, leaves a current one alone and mends a damaged one', () => {
    const folder = tempDir();
    const tool = (): void => {
      const result = spawnSync(process.execPath, [path.join(REPO, 'tools', 'token-ranks.mjs'), folder], { encoding: 'utf8' });
      assert.equal(result.status, 0, result.stderr);
    };
    tool();
    const tables = ENCODINGS.map((encoding) => path.join(folder, `${encoding}.v8`));
    for (const [i, table] of tables.entries()) assert.ok(readFileSync(table).equals(readFileSync(prebuiltTablePath(ENCODINGS[i]))), table);
    const written = tables.map((table) => statSync(table).mtimeMs);
    writeFileSync(tables[1], readFileSync(tables[1]).subarray(0, 100));
    tool();
    assert.equal(statSync(tables[0]).mtimeMs, written[0], 'a current table was written again');
    assert.ok(readPrebuiltRanks(ENCODINGS[1], tables[1]) !== null, 'the damaged table was not mended');
    assert.deepEqual(readdirSync(folder).sort(), ENCODINGS.map((e) => `${e}.v8`).sort(), 'no temporary file is left');
  });
});
