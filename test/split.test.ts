import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { canonicalValueText } from '../src/canonical/canonical.js';
import { assignSplit, groupFraction, groupKey } from '../src/pipeline/split.js';
import type { Message } from '../src/record.js';

const chat = (user: unknown): Message[] => [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: user },
  { role: 'assistant', content: 'ok' },
];

describe('groupKey', () => {
  it('is the first user message, whatever the program', () => {
    assert.equal(groupKey('prog', chat('Hi')), 'user\u0000Hi');
    // Two programs sent the same first message: one group, or it could straddle the split.
    assert.equal(groupKey('prog', chat('Hi')), groupKey('other', chat('Hi')));
    assert.notEqual(groupKey('prog', chat('Hi')), groupKey('prog', chat('Hello')));
    // Steps of one agent run share the first user message, so they share a group.
    const step1 = chat('Plan a trip');
    const step2 = [...step1, { role: 'tool', content: 'x', tool_call_id: 'a' }, { role: 'user', content: 'more' }];
    assert.equal(groupKey('p', step1), groupKey('p', step2));
  });

  it('uses canonical JSON for non-string content, whatever the key order', () => {
    assert.equal(groupKey('p', chat({ b: 1, a: [1, { d: 2, c: 3 }] })), 'user\u0000{"a":[1,{"c":3,"d":2}],"b":1}');
    assert.equal(groupKey('p', chat({ b: 1, a: 2 })), groupKey('p', chat({ a: 2, b: 1 })));
  });

  it('sorts keys by code point, not UTF-16 unit', () => {
    assert.equal(canonicalValueText({ '😀': 1, '！': 2 }), '{"！":2,"😀":1}');
  });

  it('groups records without a user message by program', () => {
    assert.equal(groupKey('p', [{ role: 'system', content: 's' }, { role: 'assistant', content: 'a' }]), 'program\u0000p');
    // Never the group of a user message that happens to read like a program name.
    assert.notEqual(groupKey('p', [{ role: 'assistant', content: 'a' }]), groupKey('q', chat('p')));
  });
});

describe('assignSplit', () => {
  it('gives the same input the same side', () => {
    for (let i = 0; i < 50; i++) {
      const key = groupKey('prog', chat(`question ${i}`));
      assert.equal(assignSplit(key, 42, 0.3), assignSplit(key, 42, 0.3));
    }
  });

  it('fraction 0 is always training, 1 always validation', () => {
    for (let i = 0; i < 200; i++) {
      assert.equal(assignSplit(`g${i}`, 1, 0), 'training');
      assert.equal(assignSplit(`g${i}`, 1, 1), 'validation');
    }
    assert.throws(() => assignSplit('g', 1, 1.5), RangeError);
    assert.throws(() => assignSplit('g', 1, Number.NaN), RangeError);
  });

  it('roughly matches the fraction over 1,000 groups', () => {
    const n = 1000;
    const validation = Array.from({ length: n }, (_, i) => assignSplit(`group ${i}`, 7, 0.1)).filter((s) => s === 'validation').length;
    // Binomial(1000, 0.1): sd ≈ 9.5; ±4 sd keeps the test deterministic-safe.
    assert.ok(validation > 62 && validation < 138, `${validation} of ${n}`);
  });

  it('a different seed reshuffles; a larger fraction only adds groups', () => {
    const groups = Array.from({ length: 300 }, (_, i) => `g${i}`);
    const a = groups.map((g) => assignSplit(g, 'a', 0.2));
    const b = groups.map((g) => assignSplit(g, 'b', 0.2));
    assert.notDeepEqual(a, b);
    for (const g of groups) {
      if (assignSplit(g, 'a', 0.1) === 'validation') assert.equal(assignSplit(g, 'a', 0.2), 'validation');
    }
  });

  it('fractions lie in [0, 1)', () => {
    for (let i = 0; i < 1000; i++) {
      const f = groupFraction(`g${i}`, 3);
      assert.ok(f >= 0 && f < 1);
    }
  });
});
