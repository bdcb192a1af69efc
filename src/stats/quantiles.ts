/**
 * Quantiles in constant memory: a log-bucketed histogram with 1% relative accuracy
 * (the DDSketch idea). Mergeable, so per-file or per-worker sketches combine exactly.
 */
const GAMMA = 1.02;
const LOG_GAMMA = Math.log(GAMMA);

export class QuantileSketch {
  private readonly buckets = new Map<number, number>();
  private zeros = 0;
  count = 0;
  min = Infinity;
  max = -Infinity;

  add(value: number): void {
    if (!Number.isFinite(value) || value < 0) return;
    this.count++;
    if (value < this.min) this.min = value;
    if (value > this.max) this.max = value;
    if (value === 0) {
      this.zeros++;
      return;
    }
    const bucket = Math.ceil(Math.log(value) / LOG_GAMMA);
    this.buckets.set(bucket, (this.buckets.get(bucket) ?? 0) + 1);
  }

  merge(other: QuantileSketch): void {
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

  toJSON(): { buckets: [number, number][]; zeros: number; count: number; min: number; max: number } {
    return { buckets: [...this.buckets], zeros: this.zeros, count: this.count, min: this.min, max: this.max };
  }

  static fromJSON(data: ReturnType<QuantileSketch['toJSON']>): QuantileSketch {
    const sketch = new QuantileSketch();
    for (const [bucket, n] of data.buckets) sketch.buckets.set(bucket, n);
    sketch.zeros = data.zeros;
    sketch.count = data.count;
    sketch.min = data.min ?? Infinity;
    sketch.max = data.max ?? -Infinity;
    return sketch;
  }
}
