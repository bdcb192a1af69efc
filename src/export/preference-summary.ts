/** The summary line of a preference export: the pairs each signal gave, written and found. */
import { formatCount } from '../format.js';
import { compareText } from '../order.js';

/** `pairs written by signal: empty 5, score 3 of 4 found (8 in all)`. */
export function pairsWrittenLine(pairs: { found: Record<string, number>; written: Record<string, number> }): string {
  const parts = Object.entries(pairs.found)
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1] || compareText(a[0], b[0]))
    .map(([signal, n]) => `${signal} ${formatCount(pairs.written[signal] ?? 0)}${(pairs.written[signal] ?? 0) !== n ? ` of ${formatCount(n)} found` : ''}`);
  const total = Object.values(pairs.written).reduce((a, b) => a + b, 0);
  return `pairs written by signal: ${parts.length === 0 ? 'none found' : parts.join(', ')} (${formatCount(total)} in all)`;
}
