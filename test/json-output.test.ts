import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { printJsonArray } from '../src/commands/common.js';

/** What `run` writes to stdout, write by write. */
async function captured(run: () => Promise<void>): Promise<string[]> {
  const chunks: string[] = [];
  const write = process.stdout.write;
  process.stdout.write = ((chunk: string) => {
    chunks.push(chunk);
    return true;
  }) as typeof process.stdout.write;
  try {
    await run();
  } finally {
    process.stdout.write = write;
  }
  return chunks;
}

describe('printJsonArray', () => {
  it('writes what JSON.stringify(items, null, 2) would, in chunks', async () => {
    const items = Array.from({ length: 30_000 }, (_, i) => ({
      id: `run-${i}`,
      text: 'two\nlines and a "quote"',
      calls: i % 3 === 0 ? [] : [{ line: i, nested: {} }],
      cost: i % 2 === 0 ? null : i / 7,
    }));
    const writes = await captured(() => printJsonArray(items, (item) => item));
    assert.equal(writes.join(''), `${JSON.stringify(items, null, 2)}\n`);
    assert.ok(writes.length > 1, 'a 4 MB array goes out in several writes');
  });

  it('an empty array, and items mapped on the way out', async () => {
    assert.deepEqual(await captured(() => printJsonArray([], (x) => x)), ['[]\n']);
    assert.equal((await captured(() => printJsonArray([1, 2], (x) => ({ n: x })))).join(''), `${JSON.stringify([{ n: 1 }, { n: 2 }], null, 2)}\n`);
  });
});
