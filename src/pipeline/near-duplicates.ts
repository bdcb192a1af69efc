/**
 * The near-duplicate stage: LSH bucketing and clustering over the records that survive exact
 * dedupe and then trajectory collapse (the last stage: curate.ts says why).
 *
 * Bucketing: every (band, band hash) of every group goes into one array of 64-bit entries,
 * band key high and group low, sorted natively: groups sharing a band hash end up side by
 * side, 32 bytes a group, no hash table. Clustering: within a bucket, in --keep order (an
 * ok record first, then by timestamp, ties in file order), each group is verified against
 * the earlier ones by estimated similarity; a pair at or above the threshold is joined by
 * union-find, whose root is the cluster's first group in --keep order: the one kept.
 * Signatures and their parameters: minhash.ts.
 */
import type { KeepRule } from './dedupe.js';
import { BANDS, estimatedSimilarity, SIGNATURE_WORDS } from './minhash.js';

/** Earlier groups a group is verified against in one bucket: templated texts can fill a bucket. */
const MAX_CANDIDATES_PER_BUCKET = 32;

/** Signatures by group in fixed chunks: memory follows the groups, with no doubling slack. */
export class SignatureStore {
  static readonly CHUNK_ROWS = 4096;
  private readonly chunks: Uint32Array[] = [];

  set(group: number, signature: Uint32Array | null): void {
    const chunk = Math.floor(group / SignatureStore.CHUNK_ROWS);
    while (this.chunks.length <= chunk) this.chunks.push(new Uint32Array(SignatureStore.CHUNK_ROWS * SIGNATURE_WORDS));
    const at = (group % SignatureStore.CHUNK_ROWS) * SIGNATURE_WORDS;
    if (signature === null) this.chunks[chunk].fill(0, at, at + SIGNATURE_WORDS);
    else this.chunks[chunk].set(signature, at);
  }

  /** The chunk holding `group`'s signature, and its offset there. */
  locate(group: number): [Uint32Array, number] {
    const chunk = this.chunks[Math.floor(group / SignatureStore.CHUNK_ROWS)];
    return [chunk, (group % SignatureStore.CHUNK_ROWS) * SIGNATURE_WORDS];
  }

  has(group: number): boolean {
    const [chunk, at] = this.locate(group);
    for (let w = 0; w < SIGNATURE_WORDS; w++) if (chunk[at + w] !== 0) return true;
    return false;
  }

  similarity(a: number, b: number): number {
    const [ca, oa] = this.locate(a);
    const [cb, ob] = this.locate(b);
    return estimatedSimilarity(ca, oa + BANDS, cb, ob + BANDS);
  }

  get byteSize(): number {
    return this.chunks.reduce((n, c) => n + c.byteLength, 0);
  }
}

interface GroupFacts {
  groups: number;
  timestamps: { data: Float64Array };
  /** Each group's `standingOf` (dedupe.ts): the higher is kept first, as within a key. */
  standings: { data: Uint8Array };
}

export interface NearDuplicates {
  /** The group kept for `group` (the first of its cluster in --keep order), or -1 when it is kept itself. */
  keptFor(group: number): number;
  /** Estimated Jaccard similarity of a near-duplicate to the group kept for it, two decimals. */
  similarity(group: number): number;
  /** Bytes held while clustering, for the benchmark. */
  byteSize: number;
}

function mix(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

export function nearDuplicateClusters(signatures: SignatureStore, facts: GroupFacts, keep: KeepRule, threshold: number): NearDuplicates {
  const n = facts.groups;
  // Rank in --keep order: lower is kept first.
  const rank = new Int32Array(n);
  {
    const order = new Int32Array(n);
    for (let g = 0; g < n; g++) order[g] = g;
    const ts = facts.timestamps.data;
    const standing = facts.standings.data;
    order.sort((a, b) => {
      if (standing[a] !== standing[b]) return standing[b] - standing[a];
      if (ts[a] !== ts[b]) return keep === 'first' ? ts[a] - ts[b] : ts[b] - ts[a];
      return keep === 'first' ? a - b : b - a;
    });
    for (let i = 0; i < n; i++) rank[order[i]] = i;
  }
  let signed = 0;
  for (let g = 0; g < n; g++) if (signatures.has(g)) signed++;
  const entries = new BigUint64Array(signed * BANDS);
  const words = new Uint32Array(entries.buffer);
  let e = 0;
  for (let g = 0; g < n; g++) {
    if (!signatures.has(g)) continue;
    const [chunk, at] = signatures.locate(g);
    for (let band = 0; band < BANDS; band++) {
      // Little-endian halves of one 64-bit entry: the group low, the band's key high.
      words[2 * e] = g;
      words[2 * e + 1] = mix(chunk[at + band] ^ Math.imul(band + 1, 0x9e3779b1));
      e++;
    }
  }
  entries.sort();
  const parent = new Int32Array(n).fill(-1);
  const find = (g: number): number => {
    let root = g;
    while (parent[root] !== -1) root = parent[root];
    while (parent[g] !== -1 && parent[g] !== root) {
      const next = parent[g];
      parent[g] = root;
      g = next;
    }
    return root;
  };
  const bucket: number[] = [];
  for (let start = 0; start < e; ) {
    let end = start + 1;
    while (end < e && words[2 * end + 1] === words[2 * start + 1]) end++;
    if (end - start > 1) {
      bucket.length = 0;
      for (let i = start; i < end; i++) bucket.push(words[2 * i]);
      bucket.sort((a, b) => rank[a] - rank[b]);
      for (let i = 1; i < bucket.length; i++) {
        for (let j = Math.max(0, i - MAX_CANDIDATES_PER_BUCKET); j < i; j++) {
          const a = find(bucket[j]);
          const b = find(bucket[i]);
          if (a === b) continue;
          if (signatures.similarity(bucket[j], bucket[i]) < threshold) continue;
          if (rank[a] < rank[b]) parent[b] = a;
          else parent[a] = b;
        }
      }
    }
    start = end;
  }
  const byteSize = rank.byteLength + parent.byteLength + entries.byteLength;
  return {
    keptFor: (group) => {
      const root = find(group);
      return root === group ? -1 : root;
    },
    similarity: (group) => Math.floor(signatures.similarity(group, find(group)) * 100) / 100,
    byteSize,
  };
}
