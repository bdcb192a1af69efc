import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { addToList, appendAll } from '../src/lists.js';

describe('lists', () => {
  it('appendAll takes a share-sized result that push(...items) cannot (300,000 mismatches or findings)', () => {
    const items = Array.from({ length: 300_000 }, (_, i) => i);
    assert.throws(() => [].push(...(items as never[])), RangeError);
    const target = [-1];
    appendAll(target, items);
    assert.equal(target.length, 300_001);
    assert.equal(target[0], -1);
    assert.equal(target[300_000], 299_999);
  });

  it('addToList starts a list per key and appends in order', () => {
    const lists = new Map<string, number[]>();
    for (const [key, value] of [['a', 1], ['b', 2], ['a', 3]] as const) addToList(lists, key, value);
    assert.deepEqual([...lists], [['a', [1, 3]], ['b', [2]]]);
  });
});
