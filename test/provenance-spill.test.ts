/**
 * Provenance (src/export/provenance.ts) keeps the written rows and the merges on disk and joins
 * them there when examples.jsonl is written, one partition in memory at a time. Its rows must
 * be exactly those of the plain in-memory graph it replaced (each kept call_id's merges, followed
 * depth first from the last, through chains, each loser once), over many partitions, uuid and
 * klieo call_ids, chains, loops and call_ids written twice; and what it holds in memory must not
 * grow with the merges or the rows.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { EXAMPLES_FILE, Provenance } from '../src/export/provenance.js';
import { OutputDir, type OutputFile } from '../src/output/output-dir.js';
import { RUN_TEMP_PREFIX } from '../src/errors.js';
import { bytesHeld, seededRandom, tempDir } from './helpers.js';

/** The graph as export held it in memory before: kept call_id → its losers in the order merged. */
class ReferenceMerges {
  private readonly losers = new Map<string, string[]>();

  merged(kept: string, loser: string): void {
    const list = this.losers.get(kept);
    if (list === undefined) this.losers.set(kept, [loser]);
    else list.push(loser);
  }

  /** What gave way to `callId`, through chains: depth first from the last merge, each call_id once, then reversed. */
  mergedList(callId: string): string[] {
    const out: string[] = [];
    const seen = new Set([callId]);
    const visit = (id: string): void => {
      const list = this.losers.get(id) ?? [];
      for (let i = list.length - 1; i >= 0; i--) {
        const loser = list[i];
        if (seen.has(loser)) continue;
        seen.add(loser);
        out.push(loser);
        visit(loser);
      }
    };
    visit(callId);
    return out.reverse();
  }
}

function uuidOf(random: () => number): string {
  const hex = Array.from({ length: 32 }, () => Math.floor(random() * 16).toString(16)).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A klieo call_id (`<run id>:<step>`), now and then with text JSON escapes or UTF-8 of several bytes. */
function klieoOf(random: () => number, n: number, odd = true): string {
  const run = `01J9Z8${Math.floor(random() * 36 ** 4).toString(36).toUpperCase().padStart(4, '0')}`;
  // Past the text buffer of a spill (16 KB) now and then.
  const text = !odd ? '' : n % 11 === 0 ? ' "é\\\n' : n % 53 === 0 ? 'ü'.repeat(9000) : n % 59 === 0 ? '\ud800 lone' : '';
  return `${run}${text}:${n % 17}`;
}

interface Scenario {
  written: { file: number; line: number; callId: string }[];
  merges: [kept: string, loser: string][];
}

/**
 * Rows and merges shaped like an export's, then worse: curation's duplicates of kept records,
 * duplicate examples whose losers had duplicates of their own (chains several deep), merges
 * into records never written, loops back to a winner, losers met twice, and call_ids written twice.
 */
function scenario(seed: number, rows: number, merges: number): Scenario {
  const random = seededRandom(seed);
  let n = 0;
  const freshId = (): string => (random() < 0.35 ? klieoOf(random, n++) : (n++, uuidOf(random)));
  const written: Scenario['written'] = [];
  const ids: string[] = [];
  for (let i = 0; i < rows; i++) {
    const callId = i > 0 && random() < 0.02 ? ids[Math.floor(random() * ids.length)] : freshId();
    ids.push(callId);
    written.push({ file: i % 3, line: i + 1, callId });
  }
  const all = [...ids];
  const list: Scenario['merges'] = [];
  for (let m = 0; m < merges; m++) {
    const r = random();
    // Most merges are into a written record, many into a loser (a chain), a few into records never written.
    const pick = (from: string[]): string => (from.length === 0 ? freshId() : from[Math.floor(random() * from.length)]);
    const kept = r < 0.5 ? pick(ids) : r < 0.95 ? pick(all) : freshId();
    const loser = random() < 0.05 ? pick(all) : freshId();
    all.push(loser);
    list.push([kept, loser]);
  }
  return { written, merges: list };
}

function expectedRows(s: Scenario, names: string[]): string {
  const reference = new ReferenceMerges();
  for (const [kept, loser] of s.merges) reference.merged(kept, loser);
  return s.written.map((w) => `${JSON.stringify({ file: names[w.file], line: w.line, call_id: w.callId, merged: reference.mergedList(w.callId) })}\n`).join('');
}

/** examples.jsonl as Provenance writes it for the scenario, with `partitionRows` rows a partition of its join. */
function writtenRows(s: Scenario, partitionRows?: number): { text: string; names: string[] } {
  const dir = path.join(tempDir(), 'out');
  const output = OutputDir.open(dir, { force: false, roots: [] });
  const names = ['training.jsonl', 'validation.jsonl', path.join('mod', 'training.jsonl')];
  const files: OutputFile[] = names.map((name) => output.create(name));
  const provenance = partitionRows === undefined ? new Provenance() : new Provenance(partitionRows);
  // Merges come before and among the rows, as curation's and the export's do.
  const early = Math.floor(s.merges.length / 2);
  s.merges.slice(0, early).forEach(([kept, loser]) => provenance.merged(kept, loser));
  s.written.forEach((w, i) => {
    provenance.written(files[w.file], w.line, w.callId);
    const at = early + Math.floor(((i + 1) * (s.merges.length - early)) / s.written.length);
    const from = early + Math.floor((i * (s.merges.length - early)) / s.written.length);
    s.merges.slice(from, at).forEach(([kept, loser]) => provenance.merged(kept, loser));
  });
  provenance.write(output);
  output.commit();
  return { text: readFileSync(path.join(dir, EXAMPLES_FILE), 'utf8'), names: names.map((name) => name.split(path.sep).join('/')) };
}

/** This process's run folders in the temp folder. */
function runFolders(): string[] {
  return readdirSync(tmpdir()).filter((entry) => entry.startsWith(`${RUN_TEMP_PREFIX}${process.pid}-`));
}

describe('provenance: merges joined to the written rows on disk', () => {
  it('gives the rows of the in-memory graph over 4,000 rows and 9,000 merges with chains, in many partitions', () => {
    const s = scenario(29, 4_000, 9_000);
    const reference = new ReferenceMerges();
    for (const [kept, loser] of s.merges) reference.merged(kept, loser);
    // The scenario has what the join must get right: chains several deep, loops, rows sharing a call_id.
    const depths = s.written.map((w) => reference.mergedList(w.callId).length);
    assert.ok(Math.max(...depths) > 20, `longest merged list ${Math.max(...depths)}`);
    assert.ok(new Set(s.written.map((w) => w.callId)).size < s.written.length);
    for (const partitionRows of [40, 333]) {
      const { text, names } = writtenRows(s, partitionRows);
      assert.equal(text, expectedRows(s, names), `${partitionRows} rows a partition`);
    }
  });

  it('gives the same rows with one partition, with more merges than rows, and with no merges', () => {
    for (const [seed, rows, merges, partitionRows] of [
      [1, 500, 800, undefined],
      [2, 50, 3_000, 64],
      [3, 700, 0, 16],
      [4, 0, 200, 8],
    ] as const) {
      const s = scenario(seed, rows, merges);
      const { text, names } = writtenRows(s, partitionRows);
      assert.equal(text, expectedRows(s, names), `seed ${seed}`);
    }
  });

  it('leaves no run folder behind, written or given up', () => {
    const before = runFolders().length;
    const s = scenario(5, 300, 600);
    writtenRows(s, 32);
    assert.equal(runFolders().length, before);
    const abandoned = new Provenance(32);
    abandoned.merged(s.merges[0][0], s.merges[0][1]);
    assert.equal(runFolders().length, before + 1);
    abandoned.dispose();
    assert.equal(runFolders().length, before);
  });

  it('holds no more memory after 300,000 merges and 100,000 rows than after a few', () => {
    const held = bytesHeld;
    const dir = path.join(tempDir(), 'out');
    const output = OutputDir.open(dir, { force: false, roots: [] });
    const file = output.create('training.jsonl');
    const random = seededRandom(7);
    const provenance = new Provenance();
    try {
      let n = 0;
      const step = (count: number): void => {
        for (let i = 0; i < count; i++, n++) {
          // Half the records are klieo's (ids that are not uuids), kept whole by the graph in memory.
          const kept = n % 2 === 0 ? uuidOf(random) : klieoOf(random, n, false);
          provenance.written(file, n + 1, kept);
          provenance.merged(kept, n % 3 === 0 ? `${kept}:copy` : uuidOf(random));
          provenance.merged(kept, uuidOf(random));
          provenance.merged(kept, klieoOf(random, n + 1, false));
        }
      };
      step(2_000);
      const early = held();
      step(100_000);
      const late = held();
      // The graph in memory held about 60 bytes a merge and more for each id that is not a uuid: 20 MB or more here.
      assert.ok(late - early < 2 * 1024 * 1024, `held ${((late - early) / 1024 / 1024).toFixed(1)} MB more after 300,000 merges`);
    } finally {
      provenance.dispose();
      output.abort();
    }
  });
});
