/**
 * The curation plan's per-key state on disk, partitioned by key hash (issue 29): winners
 * resolved one partition at a time, duplicates reported in the order they lost, collapse as a
 * join of winners' conversation digests against prefix digests. Checked against a plain
 * in-memory resolution written here, with one partition and with many.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Candidate } from '../src/pipeline/candidate.js';
import { Curation, type CurationOptions, type Drop } from '../src/pipeline/curate.js';
import type { KeepRule } from '../src/pipeline/dedupe.js';
import type { Selection } from '../src/pipeline/selection.js';
import type { TraceFile } from '../src/sources/discover.js';
import { seededRandom } from './helpers.js';

const FILES: TraceFile[] = ['a', 'b', 'c'].map((name) => ({ path: `/tree/p/m/${name}.jsonl`, display: `p/m/${name}.jsonl`, root: '/tree', source: 'synalinks', size: 1000 }));

function options(keep: KeepRule, trajectories: 'all' | 'last', dedupe = true): CurationOptions {
  return { selection: {} as Selection, dedupe, key: 'inputs,config', keep, trajectories, exclude: null, seen: null };
}

function callIdOf(n: number): string {
  const hex = n.toString(16).padStart(12, '0');
  // One in 7 is no uuid: those go to the side table.
  return n % 7 === 3 ? `call-${n}` : `00000000-0000-4000-8000-${hex}`;
}

interface Made {
  callId: string;
  fileIndex: number;
  line: number;
  key: number;
  ok: boolean;
  timestamp: number;
  trajectory: Candidate['trajectory'];
}

function candidate(made: Made): Candidate {
  return {
    callId: made.callId,
    line: made.line,
    offset: made.line * 100,
    fileIndex: made.fileIndex,
    status: made.ok ? 'ok' : 'exception',
    timestamp: made.timestamp,
    moduleId: 0,
    moduleName: '',
    verdict: null,
    flags: null,
    key: Uint32Array.of(made.key, made.key ^ 0x5bd1e995, 7, made.key * 31),
    trajectory: made.trajectory,
    toolCalls: null,
    signature: null,
  };
}

/** Records in file order: keys repeat, statuses and timestamps (with ties) vary. */
function records(count: number, keys: number, seed: number): Made[] {
  const random = seededRandom(seed);
  const made: Made[] = [];
  for (let i = 0; i < count; i++) {
    const fileIndex = Math.min(2, Math.floor((i * 3) / count));
    made.push({ callId: callIdOf(i), fileIndex, line: i + 1, key: Math.floor(random() * keys), ok: random() < 0.7, timestamp: Math.floor(random() * 5), trajectory: null });
  }
  return made;
}

function run(made: Made[], curationOptions: CurationOptions, partitions: number): { drops: Drop[]; plan: ReturnType<Curation['finish']>; keptLines: [number, number[]][] } {
  const drops: Drop[] = [];
  const curation = new Curation(FILES, curationOptions, (drop) => drops.push(drop), null, null, partitions);
  for (const m of made) curation.addCandidate(candidate(m));
  const plan = curation.finish();
  const keptLines = [...plan.keptLines].map(([file, lines]): [number, number[]] => [file, [...lines]]);
  plan.keptFile.dispose();
  return { drops, plan, keptLines };
}

/** Dedupe as the rule says, in memory: the winner by key, each arrival's loss in order, named by its final winner. */
function reference(made: Made[], keep: KeepRule): { drops: Drop[]; kept: Made[] } {
  const winners = new Map<number, Made>();
  const losses: { loser: Made; key: number }[] = [];
  for (const m of made) {
    const winner = winners.get(m.key);
    if (winner === undefined) {
      winners.set(m.key, m);
      continue;
    }
    const beats = m.ok !== winner.ok ? m.ok : keep === 'first' ? m.timestamp < winner.timestamp : m.timestamp >= winner.timestamp;
    losses.push({ loser: beats ? winner : m, key: m.key });
    if (beats) winners.set(m.key, m);
  }
  const drops = losses.map(({ loser, key }) => ({ call_id: loser.callId, file: FILES[loser.fileIndex].display, line: loser.line, reason: 'duplicate', kept: winners.get(key)!.callId }));
  return { drops, kept: [...winners.values()] };
}

function byFile(kept: Made[]): [number, number[]][] {
  const files = new Map<number, number[]>();
  for (const m of kept) files.set(m.fileIndex, [...(files.get(m.fileIndex) ?? []), m.line]);
  return [...files].sort((a, b) => a[0] - b[0]).map(([file, lines]) => [file, lines.sort((a, b) => a - b)]);
}

describe('the partitioned plan', () => {
  for (const keep of ['first', 'last'] as const) {
    it(`keeps the winners and lists the duplicates of a plain resolution, in the order they lost (--keep ${keep}; 1 and 16 partitions)`, () => {
      const made = records(3000, 700, keep === 'first' ? 5 : 6);
      const want = reference(made, keep);
      for (const partitions of [1, 16]) {
        const { drops, plan, keptLines } = run(made, options(keep, 'all'), partitions);
        assert.deepEqual(drops, want.drops, `${partitions} partitions`);
        assert.deepEqual(keptLines, byFile(want.kept));
        assert.equal(plan.kept, want.kept.length);
        assert.equal(plan.uniqueKeys, want.kept.length);
        assert.equal(plan.dropped.duplicate, want.drops.length);
        assert.equal(plan.keptKeys.size, want.kept.length);
        plan.keptKeys.dispose();
      }
    });
  }

  it('without dedupe keeps every record, and its kept keys are the distinct keys', () => {
    const made = records(2000, 300, 9);
    const { drops, plan } = run(made, options('first', 'all', false), 16);
    assert.deepEqual(drops, []);
    assert.equal(plan.kept, made.length);
    const keys = new Set<string>();
    for (const block of plan.keptKeys.keyBlocks()) for (let at = 0; at < block.length; at += 16) keys.add(Buffer.from(block.subarray(at, at + 16)).toString('hex'));
    // keys.bin holds each word big-endian.
    const want = new Set(made.map((m) => [...candidate(m).key!].map((word) => word.toString(16).padStart(8, '0')).join('')));
    assert.deepEqual(keys, want);
  });

  it('holds one partition of the keys at a time, not the tree', () => {
    const keys = 60_000;
    const made: Made[] = [];
    for (let i = 0; i < keys; i++) made.push({ callId: callIdOf(i), fileIndex: 0, line: i + 1, key: i, ok: true, timestamp: 0, trajectory: null });
    const { plan } = run(made, options('first', 'all'), 64);
    assert.equal(plan.uniqueKeys, keys);
    // A key in memory (index slot, winner's columns) is 60 bytes or more: all of them would be 3.6 MB.
    assert.ok(plan.indexBytes < keys * 4, `index bytes ${plan.indexBytes} for ${keys} keys`);
    plan.keptKeys.dispose();
  });

  it('holds the keys of a partition, not its rows, when records share a few keys (with dedupe or without)', () => {
    const rows = 100_000;
    const made: Made[] = [];
    for (let i = 0; i < rows; i++) made.push({ callId: callIdOf(i), fileIndex: 0, line: i + 1, key: i % 3, ok: true, timestamp: 0, trajectory: null });
    for (const dedupe of [true, false]) {
      const { plan } = run(made, options('first', 'all', dedupe), 8);
      assert.equal(plan.kept, dedupe ? 3 : rows);
      assert.equal(plan.keptKeys.size, 3);
      assert.ok(plan.indexBytes < rows * 4, `index bytes ${plan.indexBytes} for ${rows} rows (dedupe: ${dedupe})`);
      plan.keptKeys.dispose();
    }
  });

  it('collapses each run to its last step, listing the steps in file order with the step that holds them', () => {
    // Runs of 4 steps: step k's conversation is the prefix of step k+1's inputs. Steps are interleaved across runs.
    const random = seededRandom(21);
    const steps: { run: number; step: number }[] = [];
    for (let r = 0; r < 300; r++) for (let k = 1; k <= 4; k++) steps.push({ run: r, step: k });
    steps.sort(() => random() - 0.5);
    const digest = (r: number, k: number): number[] => [r + 1, k, 0x9e3779b1, (r * 4 + k) ^ 0x7f4a7c15];
    const made: Made[] = steps.map(({ run: r, step: k }, i) => {
      const prefixes: number[] = [];
      for (let j = 1; j < k; j++) prefixes.push(...digest(r, j));
      return {
        callId: callIdOf(100_000 + r * 10 + k),
        fileIndex: 0,
        line: i + 1,
        key: r * 10 + k,
        ok: true,
        timestamp: 0,
        trajectory: { conversation: digest(r, k), inputs: k * 2, prefixes },
      };
    });
    for (const partitions of [1, 16]) {
      const { drops, plan } = run(made, options('first', 'last'), partitions);
      const want = made
        .filter((m) => m.key % 10 !== 4)
        .map((m) => ({ call_id: m.callId, file: FILES[0].display, line: m.line, reason: 'prefix', kept: callIdOf(100_000 + Math.floor(m.key / 10) * 10 + 4) }));
      assert.deepEqual(drops, want, `${partitions} partitions`);
      assert.equal(plan.kept, 300);
      // A step given way to its longer run was handled: its key is kept for --against.
      assert.equal(plan.keptKeys.size, 1200);
      plan.keptKeys.dispose();
    }
  });
});
