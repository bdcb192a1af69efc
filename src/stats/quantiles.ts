/**
 * Quantiles in constant memory: a log-bucketed histogram with 1% relative accuracy
 * (the DDSketch idea). Mergeable, so per-file or per-worker sketches combine exactly.
 * Up to EXACT_LIMIT values are also kept as they are, so small sets get exact quantiles
 * (`approximate` is false); reports mark a figure from the histogram as estimated.
 */
const GAMMA = 1.02;
const LOG_GAMMA = Math.log(GAMMA);
/** Values kept exactly before quantiles come from the histogram alone (32 KB per sketch). */
const EXACT_LIMIT = 4096;

/**
 * The histogram bucket of a positive finite value. A record's duration goes into the sketch of
 * every group it counts in: its bucket is worked out once (see `RecordFacts.durationBucket`).
 */
export function bucketOf(value: number): number {
  return Math.ceil(Math.log(value) / LOG_GAMMA);
}

export class QuantileSketch {
  private readonly buckets = new Map<number, number>();
  private zeros = 0;
  /** Every value added, while there are at most EXACT_LIMIT; null after. */
  private values: number[] | null = [];
  count = 0;
  min = Infinity;
  max = -Infinity;

  /** Adds `value`; `bucket`, when given, must be `bucketOf(value)`. */
  add(value: number, bucket?: number): void {
    if (!Number.isFinite(value) || value < 0) return;
    this.count++;
    const values = this.values;
    if (values !== null) {
      if (values.length < EXACT_LIMIT) values.push(value);
      else this.values = null;
    }
    if (value < this.min) this.min = value;
    if (value > this.max) this.max = value;
    if (value === 0) {
      this.zeros++;
      return;
    }
    const at = bucket ?? bucketOf(value);
    this.buckets.set(at, (this.buckets.get(at) ?? 0) + 1);
  }

  private keep(values: readonly number[] | null): void {
    if (this.values === null) return;
    if (values === null || this.values.length + values.length > EXACT_LIMIT) this.values = null;
    else for (const v of values) this.values.push(v);
  }

  /** True when quantiles come from the histogram (within 1%), false when they are exact. */
  get approximate(): boolean {
    return this.values === null;
  }

  merge(other: QuantileSketch): void {
    this.keep(other.values);
    this.count += other.count;
    this.zeros += other.zeros;
    this.min = Math.min(this.min, other.min);
    this.max = Math.max(this.max, other.max);
    for (const [bucket, n] of other.buckets) this.buckets.set(bucket, (this.buckets.get(bucket) ?? 0) + n);
  }

  /** The value at quantile q (0..1), within 1%, clamped to the exact min and max; null when empty. */
  quantile(q: number): number | null {
    if (this.count === 0) return null;
    const rank = Math.max(1, Math.ceil(q * this.count));
    // Exact: the value of that rank (nearest-rank definition, the histogram's too).
    if (this.values !== null) return [...this.values].sort((a, b) => a - b)[rank - 1];
    let seen = this.zeros;
    if (seen >= rank) return 0;
    const ordered = [...this.buckets.keys()].sort((a, b) => a - b);
    for (const bucket of ordered) {
      seen += this.buckets.get(bucket)!;
      if (seen >= rank) {
        const estimate = (2 * GAMMA ** bucket) / (GAMMA + 1);
        return Math.min(this.max, Math.max(this.min, estimate));
      }
    }
    return this.max;
  }

  toJSON(): { buckets: [number, number][]; zeros: number; count: number; min: number; max: number; values?: number[] | null } {
    return { buckets: [...this.buckets], zeros: this.zeros, count: this.count, min: this.min, max: this.max, values: this.values };
  }

  static fromJSON(data: ReturnType<QuantileSketch['toJSON']>): QuantileSketch {
    const sketch = new QuantileSketch();
    for (const [bucket, n] of data.buckets) sketch.buckets.set(bucket, n);
    sketch.zeros = data.zeros;
    sketch.count = data.count;
    sketch.min = data.min ?? Infinity;
    sketch.max = data.max ?? -Infinity;
    // A snapshot without its values (from before they were kept) gives histogram quantiles.
    sketch.values = data.values === undefined || data.values === null ? null : [...data.values];
    return sketch;
  }
}
