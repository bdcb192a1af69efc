/**
 * Numbers in drop reasons, rounded for a person: `cost $0.00298 > --max-cost 0.002`, not
 * `cost 0.0029790000000000003`. Rounding must not make the reason read false, so a value
 * close to its limit keeps as many digits as it takes to stay on its side of it.
 */

/** `value` with 3 significant digits, or more while the rounded value would no longer exceed (or fall below) `limit`. */
export function roundAgainst(value: number, limit: number): string {
  const above = value > limit;
  for (let digits = 3; digits < 17; digits++) {
    const rounded = Number(value.toPrecision(digits));
    if (rounded > limit === above && rounded !== limit) return String(rounded);
  }
  return String(value);
}

/** `$0.00298` for a cost over `limit` dollars. */
export function costOver(cost: number, limit: number): string {
  return `$${roundAgainst(cost, limit)}`;
}

/** `2.26s` for a duration over `limit` seconds. */
export function secondsOver(seconds: number, limit: number): string {
  return `${roundAgainst(seconds, limit)}s`;
}
