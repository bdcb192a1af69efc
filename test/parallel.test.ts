/**
 * Worker threads change nothing: every command that shares its files out among threads gives
 * the same output with one thread as with two workers and this thread taking 256 KB shares
 * (files cut mid-way, shares finishing out of order).
 */
import assert from 'node:assert/strict';
import { cpSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { planKeptShares } from '../src/parallel/units.js';
import { collectGarbage, generatedTree, runCli, SAMPLES, tempDir } from './helpers.js';

const ONE_THREAD = { TRACES_WORKERS: '1' };
const SHARED_OUT = { TRACES_WORKERS: '2', TRACES_SHARE_BYTES: String(256 << 10) };

/** Every file under `dir`, by relative path, with its bytes. */
function snapshot(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) files[path.relative(dir, path.join(entry.parentPath, entry.name))] = readFileSync(path.join(entry.parentPath, entry.name), 'utf8');
  }
  return files;
}

describe('one thread or several', () => {
  let tree = '';

  before(() => {
    tree = generatedTree({ mb: 4, seed: 23, firstBigImageMb: 1, bigImageEveryMb: 2 }).tree;
  });

  it('TRACES_SHARE_BYTES=1 is raised to shares the run can hold (1 KB, a 10,000th of the tree), and prints the same', () => {
    const one = runCli(['stats', tree, '--json'], { env: ONE_THREAD });
    const tiny = runCli(['stats', tree, '--json'], { env: { TRACES_WORKERS: '2', TRACES_SHARE_BYTES: '1' } });
    assert.equal(tiny.status, one.status, tiny.stderr);
    assert.equal(tiny.stdout, one.stdout);
  });

  for (const args of [['stats', '--json'], ['verify', '--json'], ['runs', '--json'], ['scan', '--json']]) {
    it(`${args[0]} prints the same`, () => {
      const one = runCli([args[0]!, tree, ...args.slice(1)], { env: ONE_THREAD });
      const shared = runCli([args[0]!, tree, ...args.slice(1)], { env: SHARED_OUT });
      assert.equal(shared.status, one.status, shared.stderr);
      assert.ok(one.stdout.length > 50, one.stderr);
      assert.equal(shared.stdout, one.stdout);
    });
  }

  for (const args of [['dedupe', '--status', 'ok'], ['export', '--format', 'nemo']]) {
    it(`${args[0]} writes the same files`, () => {
      const outOne = path.join(tempDir(), 'one');
      const outShared = path.join(tempDir(), 'shared');
      const one = runCli([args[0]!, tree, ...args.slice(1), '--out', outOne], { env: ONE_THREAD });
      const shared = runCli([args[0]!, tree, ...args.slice(1), '--out', outShared], { env: SHARED_OUT });
      assert.equal(one.status, 0, one.stderr);
      assert.equal(shared.status, 0, shared.stderr);
      const a = snapshot(outOne);
      const b = snapshot(outShared);
      assert.ok(Object.keys(a).length > 2);
      // The run record and report.json's command line name the output folder; everything else must match byte for byte.
      const withoutOut = (name: string, text: string | undefined) => (name === 'report.json' && text !== undefined ? text.replace(/\n  "arguments": \[[^\]]*\],/, '') : text);
      for (const name of Object.keys(a)) if (!name.endsWith('run.json')) assert.equal(withoutOut(name, b[name]), withoutOut(name, a[name]), name);
      assert.deepEqual(Object.keys(b).sort(), Object.keys(a).sort());
    });
  }

  it('filter of two roots with the same layout writes the same files (two inputs to each output file)', () => {
    const copy = path.join(tempDir(), 'copy');
    cpSync(tree, copy, { recursive: true });
    const outOne = path.join(tempDir(), 'one');
    const outShared = path.join(tempDir(), 'shared');
    const args = ['filter', tree, copy, '--status', 'ok'];
    const one = runCli([...args, '--out', outOne], { env: ONE_THREAD });
    const shared = runCli([...args, '--out', outShared], { env: SHARED_OUT });
    assert.equal(one.status, 0, one.stderr);
    assert.equal(shared.status, 0, shared.stderr);
    const a = snapshot(outOne);
    const b = snapshot(outShared);
    for (const name of Object.keys(a)) if (!name.endsWith('run.json')) assert.equal(b[name], a[name], name);
    assert.deepEqual(Object.keys(b).sort(), Object.keys(a).sort());
    // Each output file holds the kept lines of both roots, one after the other: the copy's are the same.
    const traces = Object.entries(b).filter(([n]) => n.endsWith('.jsonl') && !n.startsWith('_traces'));
    assert.ok(traces.length > 1);
    for (const [name, text] of traces) {
      const half = text.slice(0, text.length / 2);
      assert.ok(half.length > 0 && text === half + half, name);
    }
  });
});

describe('TRACES_WORKERS', () => {
  it('a value that is no whole number is said once and ignored; a huge one is capped at 4 threads a core', async () => {
    const { availableParallelism } = await import('node:os');
    const cap = Math.max(1, availableParallelism()) * 4;
    const expected = runCli(['stats', SAMPLES, '--json']);
    for (const [value, warning] of [
      ['abc', 'traces: TRACES_WORKERS=abc is not a whole number of threads: it is ignored'],
      ['1.5', 'traces: TRACES_WORKERS=1.5 is not a whole number of threads: it is ignored'],
      ['-2', 'traces: TRACES_WORKERS=-2 is not a whole number of threads: it is ignored'],
      ['100000', `traces: TRACES_WORKERS=100000 is more threads than ${cap / 4} cores can use: ${cap} are used`],
    ]) {
      // Shares small enough that every thread gets some: a cap that failed would start 100,000.
      const run = runCli(['stats', SAMPLES, '--json'], { env: { TRACES_WORKERS: value, TRACES_SHARE_BYTES: '2000' } });
      assert.equal(run.status, expected.status, run.stderr);
      assert.equal(run.stdout, expected.stdout);
      assert.equal(run.stderr.split('\n').filter((line) => line.includes('TRACES_WORKERS')).join('\n'), warning);
    }
  });
});

describe('starting the workers before the files are found', () => {
  it('probes the paths on the command line for enough bytes, stopping early', async () => {
    const { namesAtLeast } = await import('../src/parallel/size-probe.js');
    const { mkdirSync, writeFileSync } = await import('node:fs');
    const root = tempDir();
    mkdirSync(path.join(root, 'p', 'm'), { recursive: true });
    writeFileSync(path.join(root, 'p', 'm', 'a.jsonl'), Buffer.alloc(3000));
    writeFileSync(path.join(root, 'p', 'b.jsonl'), Buffer.alloc(2000));
    assert.equal(namesAtLeast([root], 5000), true);
    assert.equal(namesAtLeast([root], 5001), false);
    assert.equal(namesAtLeast([path.join(root, 'p', 'm', 'a.jsonl'), 'nemo', path.join(root, 'missing')], 3000), true);
    assert.equal(namesAtLeast(['nemo', path.join(root, 'missing')], 1), false);
    // A tree with more entries than it may visit counts as big: probing must stay cheap.
    assert.equal(namesAtLeast([root], 1 << 30, 3), true);
  });
});

describe('results in order, this thread reading only while it would wait', () => {
  /** A lane whose payloads finish when the test says so. */
  function controlledLane() {
    const calls: { payload: unknown; finish: (value: string) => void }[] = [];
    let arrived: (() => void) | null = null;
    const lane = {
      /** Once set, payloads finish as soon as they arrive. */
      finishAtOnce: false,
      run: (payload: unknown) =>
        new Promise<string>((resolve) => {
          if (lane.finishAtOnce) return resolve(`remote ${payload}`);
          calls.push({ payload, finish: resolve });
          arrived?.();
        }),
      nextCall: async () => {
        while (calls.length === 0) await new Promise<void>((resolve) => (arrived = resolve));
        return calls.shift()!;
      },
    };
    return lane;
  }

  it('ends when the other lanes took the last payloads while this thread had results to consume', async () => {
    const { inOrder } = await import('../src/parallel/pool.js');
    const remote = controlledLane();
    const localDone: number[] = [];
    const local = async (payload: unknown) => {
      localDone.push(payload as number);
      return `local ${payload}`;
    };
    const results = inOrder([0, 1, 2, 3], [remote.run], local);
    // This thread takes payload 0 and the other lane payload 1; result 0 is then ready, so this
    // thread's lane waits for the consumer instead of taking payload 2.
    assert.deepEqual(await results.next(), { value: 'local 0', done: false });
    const first = await remote.nextCall();
    assert.equal(first.payload, 1);
    first.finish('remote 1');
    // The other lane takes both remaining payloads: nothing is left for the waiting lane.
    const second = await remote.nextCall();
    second.finish(`remote ${second.payload}`);
    const third = await remote.nextCall();
    third.finish(`remote ${third.payload}`);
    const rest: string[] = [];
    for await (const value of results) rest.push(value);
    assert.deepEqual(rest, ['remote 1', 'remote 2', 'remote 3']);
    assert.deepEqual(localDone, [0]);
  });

  it('has this thread read while the result it waits for is not in', async () => {
    const { inOrder } = await import('../src/parallel/pool.js');
    const remote = controlledLane();
    const local = async (payload: unknown) => `local ${payload}`;
    const results = inOrder([0, 1, 2, 3], [remote.run], local);
    assert.deepEqual(await results.next(), { value: 'local 0', done: false });
    const first = await remote.nextCall();
    // Result 1 is not in: the consumer waits, so this thread's lane takes payload 2.
    const pending = results.next();
    remote.finishAtOnce = true;
    first.finish('remote 1');
    assert.deepEqual(await pending, { value: 'remote 1', done: false });
    const rest: string[] = [];
    for await (const value of results) rest.push(value);
    assert.equal(rest[0], 'local 2');
    assert.match(rest[1], /^(local|remote) 3$/);
    assert.equal(rest.length, 2);
  });

  it("hands the other lanes their next payloads while this thread's own payload runs", async () => {
    const { inOrder } = await import('../src/parallel/pool.js');
    const { letEventLoopRun } = await import('../src/cooperate.js');
    // A worker's answer arrives as an event: it is only seen when this thread's event loop turns.
    const remoteDone: number[] = [];
    const remote = (payload: unknown) =>
      new Promise<string>((resolve) =>
        setImmediate(() => {
          remoteDone.push(payload as number);
          resolve(`remote ${payload}`);
        }),
      );
    // This thread's payload: a long loop over records, as a share's loop is, giving the event loop its turns.
    const local = async (payload: unknown) => {
      let spin = 0;
      for (let record = 0; remoteDone.length < 3 && record < 1e9; record++) {
        spin = (spin + record) | 0;
        if (record % 1024 === 0) await letEventLoopRun();
      }
      remoteDoneMeanwhile ??= remoteDone.length;
      return `local ${payload}`;
    };
    let remoteDoneMeanwhile: number | undefined;
    const results: string[] = [];
    for await (const value of inOrder([0, 1, 2, 3, 4, 5], [remote], local)) results.push(value);
    // The other lane finished three payloads while payload 0 ran here: it was not left waiting.
    assert.equal(remoteDoneMeanwhile, 3);
    assert.deepEqual(results.slice(0, 4), ['local 0', 'remote 1', 'remote 2', 'remote 3']);
    assert.equal(results.length, 6);
  });
});

describe('a run stopped before its end', () => {
  it('starts no payload once its consumer stops early, in any lane', async () => {
    const { inOrder } = await import('../src/parallel/pool.js');
    const started: string[] = [];
    const remote = async (payload: unknown) => {
      started.push(`remote ${payload}`);
      return `remote ${payload}`;
    };
    const local = async (payload: unknown) => {
      started.push(`local ${payload}`);
      return `local ${payload}`;
    };
    const payloads = Array.from({ length: 40 }, (_, i) => i);
    for await (const value of inOrder(payloads, [remote], local)) {
      if (value === 'local 0') break;
    }
    const seen = started.length;
    // Give every lane its chances to take more.
    for (let i = 0; i < 20; i++) await new Promise<void>((resolve) => setImmediate(resolve));
    assert.equal(started.length, seen, started.join(', '));
    assert.ok(seen < payloads.length, started.join(', '));
  });

  it('an abort rejects the result awaited, and a payload this thread took but had not begun never runs', async () => {
    const { inOrder } = await import('../src/parallel/pool.js');
    const started: string[] = [];
    const remoteCalls: (() => void)[] = [];
    const remote = (payload: unknown) =>
      new Promise<string>((resolve) => {
        started.push(`remote ${payload}`);
        remoteCalls.push(() => resolve(`remote ${payload}`));
      });
    const local = async (payload: unknown) => {
      started.push(`local ${payload}`);
      return `local ${payload}`;
    };
    const controller = new AbortController();
    const results = inOrder([0, 1, 2, 3, 4, 5], [remote], local, controller.signal);
    // Started now and read later (export starts its examples while it reports its last drops):
    // this thread's lane has taken payload 0 but runs nothing until its thread is free.
    const first = results.next();
    assert.deepEqual(started, ['remote 1']);
    controller.abort(new Error('stopped by the test'));
    await assert.rejects(first, /stopped by the test/);
    for (const finish of remoteCalls.splice(0)) finish();
    for (let i = 0; i < 20; i++) await new Promise<void>((resolve) => setImmediate(resolve));
    assert.deepEqual(started, ['remote 1'], 'nothing started after the abort');
    assert.deepEqual(await results.next(), { value: undefined, done: true });
  });
});

describe('results handed over are not held', () => {
  it('a run given an abort signal that never fires frees each result once consumed', async () => {
    const { inOrder } = await import('../src/parallel/pool.js');
    const gc = collectGarbage();
    const consumed: WeakRef<object>[] = [];
    const payloads = Array.from({ length: 40 }, (_, i) => i);
    const lane = async (payload: unknown) => ({ payload, bytes: new Uint8Array(1 << 16) });
    const controller = new AbortController();
    for await (const result of inOrder(payloads, [lane, lane], lane, controller.signal)) consumed.push(new WeakRef(result));
    // WeakRef targets stay alive until the current job ends.
    await new Promise<void>((resolve) => setImmediate(resolve));
    gc();
    const alive = consumed.filter((ref) => ref.deref() !== undefined).length;
    // The controller lives on (as a caller's does): before, each race against its never-settling
    // promise held its result (40 of 40). The last may stay reachable from the finished loop, with or without a signal.
    assert.ok(alive <= 1, `${alive} of ${payloads.length} results still held; signal ${controller.signal.aborted}`);
  });
});

describe('payloads made as they are taken', () => {
  it('makes each payload when a lane takes it, in item order, a few ahead of the consumer and not all at once', async () => {
    const { inOrder } = await import('../src/parallel/pool.js');
    const made: number[] = [];
    const payloadOf = (item: unknown) => {
      made.push(item as number);
      return { item, lines: new Int32Array(16) };
    };
    const lane = async (payload: unknown) => (payload as { item: number }).item;
    const items = Array.from({ length: 200 }, (_, i) => i);
    const results: number[] = [];
    let mostAhead = 0;
    for await (const value of inOrder(items, [lane, lane], lane, undefined, payloadOf)) {
      results.push(value as number);
      mostAhead = Math.max(mostAhead, made.length - results.length);
    }
    assert.deepEqual(results, items);
    // Made in the order taken: a payload may number a file (index parts).
    assert.deepEqual(made, items);
    // Three lanes run at most 4 each ahead of the consumer: made up front, all 200 were held before the first result.
    assert.ok(mostAhead <= 12, `${mostAhead} payloads made ahead of the consumer`);
  });
});

describe("export's projection shares, cut by kept records", () => {
  // Four files: kept lines every 1,000 bytes in the first, none in the second, a rebuilt
  // recording (Ask or klieo: never cut) with 700 kept, and a short one with 3.
  const sizes = [5_000_000, 2_000_000, 900_000, 10_000];
  const offsetsOf = (count: number, step: number) => Float64Array.from({ length: count }, (_, i) => 17 + i * step);
  const keptOffsets = new Map<number, Float64Array>([
    [0, offsetsOf(4_900, 1_000)],
    [2, new Float64Array(700)],
    [3, offsetsOf(3, 2_000)],
  ]);
  const cuttable = (fileIndex: number) => fileIndex !== 2;

  it('hands every kept line to exactly one share, in order, at most the asked number per share', () => {
    const shares = planKeptShares(sizes, keptOffsets, cuttable, 2, 1024);
    const seen = new Map<number, number[]>();
    const perShare: number[] = [];
    for (const share of shares) {
      let records = 0;
      for (const range of share.ranges) {
        const offsets = keptOffsets.get(range.fileIndex) ?? new Float64Array(0);
        // As export selects them: the kept lines that start inside the range (a rebuilt recording's all sit at 0).
        const inside = [...offsets.keys()].filter((i) => offsets[i] >= range.start && offsets[i] < range.end);
        records += inside.length;
        seen.set(range.fileIndex, [...(seen.get(range.fileIndex) ?? []), ...inside]);
      }
      perShare.push(records);
    }
    for (const [fileIndex, offsets] of keptOffsets) assert.deepEqual(seen.get(fileIndex), [...offsets.keys()], `file ${fileIndex}`);
    // Only the uncut recording (700 kept) can push a share past the 1,024 asked for.
    assert.ok(perShare.every((n) => n <= 1024 + 700), perShare.join(' '));
    assert.ok(perShare.filter((n) => n > 1024).length <= 1, perShare.join(' '));
    assert.ok(perShare.length >= Math.ceil(5_603 / 1024), perShare.join(' '));
    // Smaller towards the end, so the threads finish together.
    assert.ok(perShare[perShare.length - 2] < 1024, perShare.join(' '));
  });

  it('covers every byte of every file once, cutting only where allowed', () => {
    const shares = planKeptShares(sizes, keptOffsets, cuttable, 2, 300);
    const ranges = shares.flatMap((share) => share.ranges);
    for (const fileIndex of sizes.keys()) {
      const mine = ranges.filter((r) => r.fileIndex === fileIndex);
      assert.equal(mine[0].start, 0, `file ${fileIndex} starts at 0`);
      assert.equal(mine[mine.length - 1].end, Infinity, `file ${fileIndex} runs to its end`);
      for (let i = 1; i < mine.length; i++) assert.equal(mine[i].start, mine[i - 1].end, `file ${fileIndex} is contiguous`);
      if (!cuttable(fileIndex) || !keptOffsets.has(fileIndex)) assert.equal(mine.length, 1, `file ${fileIndex} is not cut`);
      // A cut falls on a kept line's start: that line goes whole to the next share.
      for (const range of mine.slice(1)) assert.ok(keptOffsets.get(fileIndex)!.includes(range.start));
    }
    assert.equal(
      shares.reduce((sum, share) => sum + share.bytes, 0),
      sizes.reduce((a, b) => a + b, 0),
      'the shares account for every byte (progress)',
    );
  });

  it('gives one share to a tree with nothing kept', () => {
    const shares = planKeptShares([100, 200], new Map(), () => true, 2, 1024);
    assert.equal(shares.length, 1);
    assert.deepEqual(
      shares[0].ranges.map((r) => [r.fileIndex, r.start, r.end]),
      [
        [0, 0, Infinity],
        [1, 0, Infinity],
      ],
    );
  });
});
