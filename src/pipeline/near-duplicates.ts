/**
 * The near-duplicate stage: LSH bucketing and clustering over the dedupe groups' winners,
 * after exact dedupe and before collapse. Groups are visited in --keep order (an ok record
 * first, then by timestamp, ties in file order), so the first member of a cluster is the
 * one kept; each later group whose band matches an earlier one and whose estimated
 * similarity reaches the threshold joins that group's cluster (union by first match).
 * Signatures and their parameters: minhash.ts.
 */
import type { KeepRule } from './dedupe.js';
import { BANDS, BandTable, estimatedSimilarity, SIGNATURE_WORDS } from './minhash.js';

/** Candidates checked per band: templated texts can put many groups under one band hash. */
const MAX_CANDIDATES_PER_BAND = 32;

interface GroupFacts {
  groups: number;
  timestamps: { data: Float64Array };
  winnerOk: { data: Int32Array };
}

export interface NearDuplicates {
  /** Per group, the group it gave way to (an earlier member of its cluster), or -1. */
  parents: Int32Array;
  rootOf(group: number): number;
  /** Estimated Jaccard similarity of a near-duplicate to its parent, two decimals. */
  similarity(group: number): number;
  byteSize: number;
}

export function nearDuplicateParents(signatures: Uint32Array, facts: GroupFacts, keep: KeepRule, threshold: number): NearDuplicates {
  const n = facts.groups;
  const order = new Int32Array(n);
  for (let g = 0; g < n; g++) order[g] = g;
  const ts = facts.timestamps.data;
  const ok = facts.winnerOk.data;
  order.sort((a, b) => {
    if (ok[a] !== ok[b]) return ok[b] - ok[a];
    if (ts[a] !== ts[b]) return keep === 'first' ? ts[a] - ts[b] : ts[b] - ts[a];
    return keep === 'first' ? a - b : b - a;
  });
  const parents = new Int32Array(n).fill(-1);
  const table = new BandTable(n * BANDS);
  const SKETCH = BANDS;
  for (const g of order) {
    const base = g * SIGNATURE_WORDS;
    let present = false;
    for (let w = 0; w < SIGNATURE_WORDS && !present; w++) present = signatures[base + w] !== 0;
    if (!present) continue;
    let best = -1;
    let bestSimilarity = 0;
    for (let band = 0; band < BANDS; band++) {
      let visited = 0;
      table.find(band, signatures[base + band], (h) => {
        if (h !== best) {
          const s = estimatedSimilarity(signatures, base + SKETCH, signatures, h * SIGNATURE_WORDS + SKETCH);
          if (s >= threshold && s > bestSimilarity) {
            best = h;
            bestSimilarity = s;
          }
        }
        return ++visited >= MAX_CANDIDATES_PER_BAND;
      });
    }
    if (best !== -1) parents[g] = best;
    for (let band = 0; band < BANDS; band++) table.add(band, signatures[base + band], g);
  }
  const rootOf = (group: number): number => {
    let g = group;
    while (parents[g] !== -1) g = parents[g];
    return g;
  };
  return {
    parents,
    rootOf,
    similarity: (group) =>
      Math.floor(estimatedSimilarity(signatures, group * SIGNATURE_WORDS + SKETCH, signatures, parents[group] * SIGNATURE_WORDS + SKETCH) * 100) / 100,
    byteSize: order.byteLength + parents.byteLength + table.byteSize,
  };
}
