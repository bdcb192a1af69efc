/** Summary statistics of a list of counts, as `traces validate` prints them. */

export interface Distribution {
  count: number;
  min: number;
  median: number;
  p95: number;
  max: number;
  total: number;
}

/** All zeros for an empty list, so reports need no special case. */
export function summarize(values: readonly number[]): Distribution {
  if (values.length === 0) return { count: 0, min: 0, median: 0, p95: 0, max: 0, total: 0 };
  const sorted = Float64Array.from(values).sort();
  let total = 0;
  for (const v of sorted) total += v;
  return {
    count: sorted.length,
    min: sorted[0],
    median: quantile(sorted, 0.5),
    p95: quantile(sorted, 0.95),
    max: sorted[sorted.length - 1],
    total,
  };
}

/** Linear interpolation between closest ranks: numpy's default, which the OpenAI cookbook's numbers use. */
function quantile(sorted: Float64Array, q: number): number {
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  // Rounded to a tenth: token counts are whole, the interpolation's float noise is not news.
  return Math.round((sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo)) * 10) / 10;
}
