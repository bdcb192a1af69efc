import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bucketOf, QuantileSketch } from '../src/stats/quantiles.js';

/** A repeatable spread of durations: sub-second calls, long ones, exact zeros and bucket 0 (just under 1 s). */
function durations(count: number, seed: number): number[] {
  let state = seed >>> 0;
  const next = (): number => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
  return Array.from({ length: count }, (_, i) => (i % 97 === 0 ? 0 : i % 89 === 0 ? 0.995 : Math.exp(next() * 12 - 6)));
}

function nearestRank(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(1, Math.ceil(q * sorted.length)) - 1];
}

const QUANTILES = [0.01, 0.5, 0.95, 0.99, 1];

describe('QuantileSketch', () => {
  it('is exact up to 4,096 values, then within 1% of the nearest-rank value', () => {
    for (const count of [1, 7, 4096, 4097, 60_000]) {
      const values = durations(count, count);
      const sketch = new QuantileSketch();
      for (const v of values) sketch.add(v);
      assert.equal(sketch.count, count);
      assert.equal(sketch.approximate, count > 4096, `${count} values`);
      for (const q of QUANTILES) {
        const exact = nearestRank(values, q);
        const got = sketch.quantile(q)!;
        if (count <= 4096) assert.equal(got, exact, `q ${q} of ${count}`);
        else assert.ok(Math.abs(got - exact) <= 0.0100001 * exact, `q ${q} of ${count}: ${got} against ${exact}`);
      }
    }
  });

  it('gives the same answers whether the bucket comes worked out (as a record in several tallies) or not', () => {
    const values = durations(20_000, 3);
    const plain = new QuantileSketch();
    const given = new QuantileSketch();
    for (const v of values) {
      plain.add(v);
      given.add(v, v > 0 ? bucketOf(v) : undefined);
    }
    assert.deepEqual(given.toJSON(), plain.toJSON());
  });

  it('merged from shares, answers as one sketch over every value, the exact set included', () => {
    for (const [count, cuts] of [
      [3000, [1000, 2000]],
      [5000, [4000]],
      [30_000, [10, 29_000]],
    ] as const) {
      const values = durations(count, 11);
      const whole = new QuantileSketch();
      for (const v of values) whole.add(v);
      const merged = new QuantileSketch();
      const bounds = [0, ...cuts, count];
      for (let i = 0; i + 1 < bounds.length; i++) {
        const share = new QuantileSketch();
        for (const v of values.slice(bounds[i], bounds[i + 1])) share.add(v);
        merged.merge(QuantileSketch.fromJSON(JSON.parse(JSON.stringify(share.toJSON()))));
      }
      assert.equal(merged.approximate, whole.approximate);
      for (const q of QUANTILES) assert.equal(merged.quantile(q), whole.quantile(q), `q ${q} of ${count}`);
    }
  });

  it('ignores what is no duration: negative, NaN, infinite', () => {
    const sketch = new QuantileSketch();
    for (const v of [-1, Number.NaN, Infinity, -Infinity, 2]) sketch.add(v);
    assert.equal(sketch.count, 1);
    assert.equal(sketch.quantile(0.5), 2);
    assert.equal(new QuantileSketch().quantile(0.5), null);
  });
});
