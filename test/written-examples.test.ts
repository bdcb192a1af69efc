/**
 * WrittenExamples (src/export/written-examples.ts): export's check for an example identical to
 * one written before keeps one word of each digest in memory and the rest on disk. It must
 * answer exactly as a map of whole digests does, past its write buffer and its growth.
 */
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { WrittenExamples } from '../src/export/written-examples.js';
import { seededRandom } from './helpers.js';

function digestOf(text: string): number[] {
  const d = createHash('sha256').update(text).digest();
  return [d.readUInt32BE(0), d.readUInt32BE(4), d.readUInt32BE(8), d.readUInt32BE(12)];
}

describe('written examples: one word in memory, the digest and call_id on disk', () => {
  it('gives the same answers as a map of whole digests over 60,000 examples with repeats (uuid and other call_ids)', () => {
    const random = seededRandom(29);
    const written = new WrittenExamples();
    const reference = new Map<string, string>();
    let repeats = 0;
    try {
      for (let i = 0; i < 60_000; i++) {
        // One example in ten repeats an earlier line, from a record of its own.
        const line = random() < 0.1 && i > 0 ? `line ${Math.floor(random() * i)}` : `line ${i}`;
        const callId = i % 7 === 0 ? `run-${i}:${i % 5}` : randomUUID();
        const digest = digestOf(line);
        const expected = reference.get(digest.join(',')) ?? null;
        if (expected === null) reference.set(digest.join(','), callId);
        else repeats++;
        assert.equal(written.addOrEarlier(digest, callId), expected, `example ${i}`);
      }
      assert.equal(written.size, reference.size);
      assert.ok(repeats > 4_000, `${repeats} repeats`);
    } finally {
      written.dispose();
    }
  });

  it('digests that share the word kept in memory are told apart by the rest, read from disk', () => {
    const written = new WrittenExamples();
    try {
      const first = randomUUID();
      // 1,000 digests with one first word, then 10,000 others: the shared ones are on disk by then.
      for (let i = 0; i < 1_000; i++) assert.equal(written.addOrEarlier([0xdeadbeef, i, i ^ 0x5555, 7], i === 0 ? first : randomUUID()), null);
      for (let i = 0; i < 10_000; i++) assert.equal(written.addOrEarlier(digestOf(`other ${i}`), randomUUID()), null);
      assert.equal(written.addOrEarlier([0xdeadbeef, 0, 0x5555, 7], randomUUID()), first);
      assert.equal(written.addOrEarlier([0xdeadbeef, 0, 0x5555, 8], randomUUID()), null);
      assert.equal(written.addOrEarlier([0xdeadbeef, 999, 999 ^ 0x5555, 7], randomUUID()) !== null, true);
      assert.equal(written.size, 11_001);
    } finally {
      written.dispose();
    }
  });
});
