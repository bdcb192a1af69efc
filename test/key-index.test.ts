import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KeyIndex } from '../src/pipeline/key-index.js';

describe('KeyIndex', () => {
  it('stores and finds keys that are not digests (positions, counters) across growth', () => {
    const index = new KeyIndex(16);
    const key = new Uint32Array(4);
    for (let i = 0; i < 50_000; i++) {
      key.set([i % 7, i, 0x7fffffff, 0xffffffff]);
      assert.equal(index.addIfAbsent(key, i), -1);
    }
    assert.equal(index.size, 50_000);
    for (let i = 0; i < 50_000; i += 997) {
      key.set([i % 7, i, 0x7fffffff, 0xffffffff]);
      assert.equal(index.get(key), i);
      assert.equal(index.addIfAbsent(key, -5), i, 'present keys keep their value');
    }
    key.set([1, 50_001, 0x7fffffff, 0xffffffff]);
    assert.equal(index.get(key), -1);
    index.set(key, 9);
    assert.equal(index.get(key), 9);
    assert.equal(index.size, 50_001);
    assert.equal([...index.entries()].length, 50_001);
  });

  it('uses 20 bytes a slot at a load between 35% and 70%: 28 to 58 bytes a key', () => {
    const index = new KeyIndex();
    const key = new Uint32Array(4);
    for (let i = 0; i < 100_000; i++) {
      key.set([i * 2654435761, i, i ^ 0x5bd1e995, 7]);
      index.set(key, i);
    }
    const perKey = index.byteSize / index.size;
    assert.ok(perKey >= 28 && perKey <= 58, `${perKey} bytes a key`);
  });
});

describe('call ids as 4 words', () => {
  it('a lower-case uuid round-trips through its words; any other text is refused and leaves the words alone', async () => {
    const { uuidText, uuidWords } = await import('../src/pipeline/columns.js');
    const { randomUUID } = await import('node:crypto');
    const words = new Uint32Array(8);
    for (let i = 0; i < 2000; i++) {
      const id = randomUUID();
      assert.equal(uuidWords(id, words, 4), true, id);
      assert.equal(uuidText(words, 4), id);
    }
    words.fill(7);
    for (const other of ['', 'run-1:3', '01234567-89ab-cdef-0123-456789ABCDEF', '0123456789ab-cdef-0123-456789abcdef-', '01234567-89ab-cdef-0123-456789abcdeg', '01234567-89ab-cdef-0123-456789abcdé']) {
      assert.equal(uuidWords(other, words), false, other);
    }
    assert.deepEqual([...words], [7, 7, 7, 7, 7, 7, 7, 7]);
  });
});
