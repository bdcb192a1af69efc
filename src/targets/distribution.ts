/** Summary statistics of a list of counts, as `traces validate` prints them. */

export interface Distribution {
  count: number;
  min: number;
  median: number;
  p95: number;
  max: number;
  total: number;
}

/**
 * Counts by value: token counts repeat (one per example, a few thousand distinct lengths), so
 * this holds one entry per distinct count, not one number per example, and the median and p95
 * still come out exact.
 */
export class CountHistogram {
  private readonly counts = new Map<number, number>();
  count = 0;

  add(value: number): void {
    this.counts.set(value, (this.counts.get(value) ?? 0) + 1);
    this.count++;
  }

  /** All zeros when empty, so reports need no special case. */
  summary(): Distribution {
    if (this.count === 0) return { count: 0, min: 0, median: 0, p95: 0, max: 0, total: 0 };
    const values = Float64Array.from(this.counts.keys()).sort();
    const runs = Float64Array.from(values, (v) => this.counts.get(v)!);
    let total = 0;
    for (let i = 0; i < values.length; i++) total += values[i] * runs[i];
    /** The value at rank `rank` (0-based) of the sorted list. */
    const at = (rank: number): number => {
      let seen = 0;
      for (let i = 0; i < values.length; i++) {
        seen += runs[i];
        if (rank < seen) return values[i];
      }
      return values[values.length - 1];
    };
    return { count: this.count, min: values[0], median: quantile(at, this.count, 0.5), p95: quantile(at, this.count, 0.95), max: values[values.length - 1], total };
  }
}

export function summarize(values: readonly number[]): Distribution {
  const histogram = new CountHistogram();
  for (const v of values) histogram.add(v);
  return histogram.summary();
}

/** Linear interpolation between closest ranks: numpy's default, which the OpenAI cookbook's numbers use. */
function quantile(at: (rank: number) => number, count: number, q: number): number {
  const pos = (count - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  const low = at(lo);
  // Rounded to a tenth: token counts are whole, the interpolation's float noise is not news.
  return Math.round((low + (at(hi) - low) * (pos - lo)) * 10) / 10;
}
