/**
 * `stats` on a big tree counts its distinct ok keys a partition at a time, from rows set aside
 * on disk, so that its memory does not grow with the keys: the counts must be the very ones
 * the table of every key gives, duplicates booked under the same groups, whether the records
 * come one by one or as the shares of worker threads.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import type { Expected } from '../bench/generate.js';
import { StatsCollector } from '../src/stats/collect.js';
import { discover } from '../src/sources/discover.js';
import { readFileRange } from '../src/sources/read.js';
import { fileSizes, planShares } from '../src/parallel/units.js';
import { statsShare } from '../src/stats/share.js';
import { FIXTURES, SAMPLES, generatedTree } from './helpers.js';

/** A size that makes the tree-wide count partitioned, whatever the tree really holds. */
const BIG_TREE_BYTES = 1 << 30;

async function collectDirect(roots: string[], bytes: number): Promise<Record<string, unknown>> {
  const { files } = await discover(roots);
  const stats = new StatsCollector({ bytes });
  for (const file of files) {
    for await (const batch of readFileRange(file)) {
      stats.bytes += batch.bytes;
      for (const record of batch.records) stats.addRecord(record);
      for (const damaged of batch.damaged) stats.addDamaged(damaged);
    }
  }
  stats.finish();
  return stats.toJSON();
}

/** As the command does on threads: shares of byte ranges, merged in file order. */
async function collectInShares(roots: string[], bytes: number, shareBytes: number): Promise<Record<string, unknown>> {
  const { files } = await discover(roots);
  const stats = new StatsCollector({ bytes });
  for (const share of planShares(fileSizes(files), 2, 4, shareBytes)) stats.merge(await statsShare({ files, share }));
  stats.finish();
  return stats.toJSON();
}

/** This process's run folders (other test files share the temp folder, and make their own). */
function spillFolders(): string[] {
  return readdirSync(tmpdir()).filter((name) => name.includes(`-${process.pid}-`));
}

describe('stats counts distinct keys by partition on big trees', () => {
  let generated = '';
  let expected: Expected;

  before(() => {
    ({ tree: generated, expected } = generatedTree({ mb: 3, seed: 23, firstBigImageMb: 1, bigImageEveryMb: 2, plantNearDuplicates: true }));
  });

  it('gives the counts of one table of every key on the generated tree, and the generator\'s', async () => {
    const inMemory = await collectDirect([generated], 0);
    const partitioned = await collectDirect([generated], BIG_TREE_BYTES);
    assert.deepEqual(partitioned, inMemory);
    assert.equal(partitioned.unique_ok_keys, expected.unique_ok_keys);
    assert.equal(partitioned.duplicate_ok_records, expected.duplicate_ok_records);
  });

  for (const [name, roots] of [
    ['the samples', [SAMPLES]],
    ['the genuine Recorder trees', [path.join(FIXTURES, 'genuine', 'bare-exponent', 'tree'), path.join(FIXTURES, 'genuine', 'plus-exponent', 'tree')]],
  ] as const) {
    it(`books every duplicate under the same groups on ${name}, one by one and in shares`, async () => {
      const inMemory = await collectDirect([...roots], 0);
      assert.ok((inMemory.duplicate_ok_records as number) > 0, 'the tree has duplicates to book');
      assert.deepEqual(await collectDirect([...roots], BIG_TREE_BYTES), inMemory);
      for (const shareBytes of [4096, 65536]) {
        assert.deepEqual(await collectInShares([...roots], BIG_TREE_BYTES, shareBytes), inMemory, `shares of ${shareBytes} bytes`);
      }
    });
  }

  it('leaves no partition file behind', async () => {
    const before = spillFolders();
    await collectDirect([generated], BIG_TREE_BYTES);
    assert.deepEqual(spillFolders(), before);
  });
});
