/**
 * The V8 settings bin/traces.js applies (src/v8-tuning.ts): which flags, that a user's own
 * value wins, and that the heap's growth is bounded in a process that runs with them.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { tuningFlags } from '../src/v8-tuning.js';

const TUNING = new URL('../src/v8-tuning.js', import.meta.url).href;

/**
 * About 60 MB live (40 MB held throughout, a ring of the last 64 batches of small objects),
 * then 3,000 batches that each outlive a scavenge or two before they die, as a share's
 * objects do: what the old generation grew to at most, and what it holds once collected.
 */
const CHURN = `
import v8 from 'node:v8';
const oldSpace = (field) => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'old_space')[field];
const held = [];
for (let i = 0; i < 400; i++) held.push(Array.from({ length: 12500 }, (_, j) => j + i));
const ring = new Array(64).fill(null);
let largest = 0;
for (let batch = 0; batch < 3000; batch++) {
  ring[batch % 64] = Array.from({ length: 12500 }, (_, j) => ({ j }));
  if (batch % 25 === 0) largest = Math.max(largest, oldSpace('space_size'));
}
globalThis.gc();
process.stdout.write(JSON.stringify({ largest, live: oldSpace('space_used_size'), kept: held.length + ring.length }));
`;

function churn(nodeFlags: string[]): { largest: number; live: number } {
  const child = spawnSync(process.execPath, [...nodeFlags, '--expose-gc', '--input-type=module', '-e', CHURN], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } });
  assert.equal(child.status, 0, child.stderr);
  return JSON.parse(child.stdout) as { largest: number; live: number };
}

describe('V8 tuning', () => {
  it('sets the inlining budget and the heap growth unless node was given them', () => {
    assert.deepEqual(tuningFlags([], undefined), ['--max-inlined-bytecode-size-cumulative=200', '--heap-growing-percent=100']);
    assert.deepEqual(tuningFlags(['--heap-growing-percent=30'], undefined), ['--max-inlined-bytecode-size-cumulative=200']);
    assert.deepEqual(tuningFlags(['--heap_growing_percent', '30'], undefined), ['--max-inlined-bytecode-size-cumulative=200']);
    assert.deepEqual(tuningFlags([], '--max-old-space-size=4096 --max_inlined_bytecode_size_cumulative=920'), ['--heap-growing-percent=100']);
    // A flag that only starts like ours is another flag.
    assert.deepEqual(tuningFlags(['--heap-growing-percentage=1'], undefined), ['--max-inlined-bytecode-size-cumulative=200', '--heap-growing-percent=100']);
  });

  it('keeps the old generation within 3 times what it holds live, where V8 alone let it grow to several times', () => {
    const tuned = churn(['--import', TUNING]);
    assert.ok(tuned.largest <= 3 * tuned.live, `old space grew to ${tuned.largest >> 20} MB for ${tuned.live >> 20} MB live`);
    // What the setting changes: V8's own factor, on the same work, lets it grow further.
    const untuned = churn([]);
    assert.ok(untuned.largest > tuned.largest, `untuned ${untuned.largest >> 20} MB, tuned ${tuned.largest >> 20} MB`);
  });
});
