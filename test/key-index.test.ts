import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { randomUUID } from 'node:crypto';
import { uuidText, uuidWords } from '../src/uuid-words.js';
import { KeyIndex } from '../src/pipeline/key-index.js';
import { foldHex, foldHexBytes } from '../src/canonical/fold-hex.js';
import { seededRandom } from './helpers.js';

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

describe('call_ids as words', () => {
  const reference = /^([0-9a-f]{8})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{12})$/;

  it('packs lowercase uuids into their 16 bytes and back, and nothing else', () => {
    const words = new Uint32Array(6);
    const ids = [
      randomUUID(),
      '00000000-0000-0000-0000-000000000000',
      'ffffffff-ffff-ffff-ffff-ffffffffffff',
      '6af2769b-822d-46ac-868f-fba60d0532e4',
      '6AF2769B-822D-46AC-868F-FBA60D0532E4',
      '6af2769b-822d-46ac-868f-fba60d0532e',
      '6af2769b-822d-46ac-868f-fba60d0532e4x',
      '6af2769b8-22d-46ac-868f-fba60d0532e4',
      '6af2769b-822d-46ac-868f-fba60d0532g4',
      '6af2769b_822d_46ac_868f_fba60d0532e4',
      'call-1',
      '',
      // Every bit set, and none: words that are -1 and 0 as int32.
      'ffffffff-ffff-ffff-ffff-ffffffffffff',
      '00000000-0000-0000-0000-000000000000',
      // Characters above 127 whose low 7 bits are a hex digit ('\u00e1' & 0x7f is 'a'), and a wide one.
      '6af2769b-822d-46ac-868f-fba60d0532\u00e1\u00e1',
      '6af2769b-822d-46ac-868f-fba60d0532\u0161\u0130',
    ];
    for (let i = 0; i < 200; i++) ids.push(randomUUID());
    for (const id of ids) {
      words.fill(7);
      const match = reference.exec(id);
      assert.equal(uuidWords(id, words, 2), match !== null, id);
      if (match === null) {
        assert.deepEqual([...words], [7, 7, 7, 7, 7, 7], `${id}: nothing written`);
        continue;
      }
      const hex = match.slice(1).join('');
      assert.deepEqual([...words.subarray(2)], [0, 1, 2, 3].map((k) => parseInt(hex.slice(k * 8, k * 8 + 8), 16)), id);
      assert.equal(uuidText(words, 2), id);
    }
  });
});

describe('recorded hashes folded to key words', () => {
  it('read the same from bytes and from text; a change in any one digit gives another key; a non-hex digit anywhere is refused', () => {
    const random = seededRandom(7);
    const hexOf = () => Array.from({ length: 64 }, () => '0123456789abcdef'[Math.floor(random() * 16)]).join('');
    const fromText = new Uint32Array(4);
    const fromBytes = new Uint32Array(4);
    for (let n = 0; n < 200; n++) {
      const hash = hexOf();
      for (const count of [2, 4] as const) {
        assert.ok(foldHex(hash, count, fromText, 0));
        assert.ok(foldHexBytes(Buffer.from(`"${hash}"`), 1, count, fromBytes, 0));
        assert.deepEqual(fromBytes.subarray(0, count), fromText.subarray(0, count));
        const at = Math.floor(random() * 64);
        const other = `${hash.slice(0, at)}${hash[at] === '0' ? '1' : '0'}${hash.slice(at + 1)}`;
        const changed = new Uint32Array(4);
        assert.ok(foldHex(other, count, changed, 0));
        assert.notDeepEqual(changed.subarray(0, count), fromText.subarray(0, count), `digit ${at}`);
      }
      assert.equal(foldHex(`${hash.slice(0, 63)}g`, 2, fromText, 0), false);
      assert.equal(foldHexBytes(Buffer.from(`${hash.slice(0, 5)}-${hash.slice(6)}`), 0, 2, fromBytes, 0), false);
      assert.equal(foldHex(hash.slice(1), 2, fromText, 0), false);
    }
  });
});
