/**
 * KeptLinesFile (src/pipeline/kept-lines.ts): what a plan keeps, per file, waits on disk and is
 * read back a file at a time. It must give exactly the sorted lines and offsets the in-memory
 * maps gave, whatever order the files come in, past its write buffer and past 4 GB offsets; and
 * what it holds in memory must not grow with the records kept.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { describe, it } from 'node:test';
import { KeptLinesFile } from '../src/pipeline/kept-lines.js';
import { RUN_TEMP_PREFIX } from '../src/errors.js';
import { bytesHeld, seededRandom } from './helpers.js';

function runFolders(): string[] {
  return readdirSync(tmpdir()).filter((entry) => entry.startsWith(`${RUN_TEMP_PREFIX}${process.pid}-`));
}

describe('kept lines on disk', () => {
  it('gives each file its sorted lines and offsets as the maps did, files in any order, past the buffer and 4 GB', () => {
    const random = seededRandom(12);
    const files = 40;
    // Winners per file: room for each; some files keep none, one keeps more than a write buffer.
    const winners = Array.from({ length: files }, (_, f) => (f % 7 === 3 ? 0 : f === 5 ? 10_000 : 1 + Math.floor(random() * 300)));
    const expected = new Map<number, { lines: number[]; offsets: number[] }>();
    const before = runFolders().length;
    const kept = new KeptLinesFile(winners);
    try {
      // Files mostly in order, then a few met again after others (the rows land in each file's room).
      const order = [...Array(files).keys(), 2, 9, 5, 0];
      const next = new Map<number, number>();
      for (const f of order) {
        const from = next.get(f) ?? 0;
        const to = f === 2 || f === 9 || f === 5 || f === 0 ? (from === 0 ? Math.floor(winners[f] / 2) : winners[f]) : winners[f];
        for (let line = from; line < to; line++) {
          // About two in three winners are kept.
          if (random() < 0.33) continue;
          const offset = f === 11 ? 2 ** 33 + line * 2048 : line * 2048;
          kept.add(f, line + 1, offset);
          const e = expected.get(f) ?? { lines: [], offsets: [] };
          e.lines.push(line + 1);
          e.offsets.push(offset);
          expected.set(f, e);
        }
        next.set(f, to);
      }
      assert.equal(runFolders().length, before + 1);
      assert.equal(kept.kept, [...expected.values()].reduce((n, e) => n + e.lines.length, 0));
      const indexes = [...expected.keys()].sort((a, b) => a - b);
      assert.deepEqual([...kept.lines.keys()], indexes);
      assert.equal(kept.offsets.size, indexes.length);
      for (let f = 0; f < files; f++) {
        assert.equal(kept.lines.has(f), expected.has(f), `file ${f}`);
        const e = expected.get(f);
        assert.deepEqual(kept.lines.get(f) === undefined ? undefined : [...kept.lines.get(f)!], e?.lines, `lines of file ${f}`);
        assert.deepEqual(kept.offsets.get(f) === undefined ? undefined : [...kept.offsets.get(f)!], e?.offsets, `offsets of file ${f}`);
      }
      assert.deepEqual(
        [...kept.offsets].map(([f, offsets]) => [f, offsets.length]),
        indexes.map((f) => [f, expected.get(f)!.lines.length]),
      );
    } finally {
      kept.dispose();
    }
    assert.equal(runFolders().length, before);
  });

  it('holds no more memory after 600,000 kept records than after a few', () => {
    const held = bytesHeld;
    const files = 200;
    const kept = new KeptLinesFile(new Int32Array(files).fill(3_000));
    try {
      let f = 0;
      const add = (records: number): void => {
        for (let i = 0; i < records; i++, f++) kept.add(Math.floor(f / 3_000), (f % 3_000) + 1, (f % 3_000) * 2048);
      };
      add(2_000);
      const early = held();
      add(598_000);
      const late = held();
      // In typed arrays per file, 12 bytes a record: 7 MB here.
      assert.ok(late - early < 1024 * 1024, `held ${((late - early) / 1024 / 1024).toFixed(1)} MB more after 600,000 records`);
      assert.equal(kept.lines.get(150)!.length, 3_000);
    } finally {
      kept.dispose();
    }
  });
});
