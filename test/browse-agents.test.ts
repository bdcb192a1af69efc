/** Browsing coding-agent sessions (a file of its own: the index refuses a temporary folder another test's discovery read). */
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { FIXTURES } from './helpers.js';

const HARNESSES = ['claude-code', 'codex', 'pi'] as const;

describe('agent sessions: browse', () => {
  it("the browser's index lists every harness's calls under its program, with previews", async () => {
    const { IndexStore } = await import('../src/ui/index-store.js');
    // The fixture folders are home folders of their own (the index refuses roots holding its temporary folder).
    const store = await IndexStore.open(HARNESSES.map((kind) => path.join(FIXTURES, kind)));
    try {
      await store.whenDone();
      const all = store.counts(0);
      assert.equal(all.records, 19);
      assert.equal(all.exception, 3);
      assert.equal(all.damaged, 0);
      const programs = store.tree.filter((n) => n.key.startsWith('p:')).map((n) => n.key);
      assert.deepEqual(programs.sort(), ['p:claude-code', 'p:codex', 'p:pi']);
      const pi = store.tree.findIndex((n) => n.key === 'p:pi');
      const entries = store.list(pi, 'all', false);
      assert.equal(entries.length, 6);
      assert.match(store.preview(entries[0]), /SCENARIO/);
    } finally {
      store.close();
    }
  });
});
