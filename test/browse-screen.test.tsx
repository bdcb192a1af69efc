/** How the browser reaches the terminal: the row-diffing stream under ink, and the pre-paint. */
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cleanup, render } from 'ink-testing-library';
import { App } from '../src/ui/App.js';
import { IndexStore } from '../src/ui/index-store.js';
import { firstBatch, paintUntilLoaded } from '../src/ui/launch.js';
import { prepaint } from '../src/ui/prepaint.js';
import { ScreenStream } from '../src/ui/screen-stream.js';
import { SAMPLES, tempDir } from './helpers.js';
import { inAct } from './ink-driver.js';

// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g;

class FakeTerminal extends EventEmitter {
  columns = 40;
  rows = 10;
  isTTY = true;
  writes: string[] = [];
  write(data: string): boolean {
    this.writes.push(data);
    return true;
  }
}

describe('ScreenStream', () => {
  it('writes a whole first frame, then only the rows that changed', () => {
    const term = new FakeTerminal();
    const screen = new ScreenStream(term as unknown as NodeJS.WriteStream);
    screen.write('one\ntwo\nthree\n');
    assert.equal(term.writes[0], '\x1b[1;1H\x1b[2Kone\x1b[2;1H\x1b[2Ktwo\x1b[3;1H\x1b[2Kthree\x1b[4;1H');
    // ink erases the previous frame before each new one; only row 2 differs.
    screen.write('\x1b[2K\x1b[1A\x1b[2K\x1b[1A\x1b[2K\x1b[1A\x1b[2K\x1b[Gone\nTWO\nthree\n');
    assert.equal(term.writes[1], '\x1b[2;1H\x1b[2KTWO\x1b[4;1H');
    // A shorter frame clears the rows it no longer uses.
    screen.write('\x1b[2K\x1b[1A\x1b[2K\x1b[Gone\n');
    assert.equal(term.writes[2], '\x1b[2;1H\x1b[2K\x1b[3;1H\x1b[2K\x1b[2;1H');
  });

  it('passes control sequences through, treats a bare erase as clearing, forwards resizes', () => {
    const term = new FakeTerminal();
    const screen = new ScreenStream(term as unknown as NodeJS.WriteStream);
    screen.write('\x1b[?2026h');
    assert.equal(term.writes[0], '\x1b[?2026h');
    screen.write('a\nb\n');
    screen.write('\x1b[2K\x1b[1A\x1b[2K\x1b[1A\x1b[2K\x1b[G');
    assert.equal(term.writes[2], '\x1b[1;1H\x1b[2K\x1b[2;1H\x1b[2K\x1b[1;1H');
    screen.invalidate();
    screen.write('a\n');
    assert.equal(term.writes[3], '\x1b[1;1H\x1b[2Ka\x1b[2;1H');
    let resized = 0;
    screen.on('resize', () => resized++);
    term.emit('resize');
    assert.equal(resized, 1);
    assert.equal(screen.columns, 40);
    screen.detach();
  });
});

describe('prepaint', () => {
  let store: IndexStore;
  before(async () => {
    store = await IndexStore.open([SAMPLES]);
    await store.whenDone();
  });
  after(() => {
    cleanup();
    store.close();
  });

  it('draws the same first screen as the ink app, before ink is loaded', async () => {
    for (const [width, height] of [
      [100, 30],
      [80, 24],
    ]) {
      const painted = prepaint(store, width, height, 'samples/synalinks')
        .replace(/\r/g, '')
        .replace(ANSI, '')
        .split('\n')
        .map((line) => line.trimEnd());
      let ui: ReturnType<typeof render> | undefined;
      // act() returns once the first frame (and its effects) are committed.
      await inAct(() => {
        ui = render(<App store={store} roots="samples/synalinks" width={width} height={height - 1} />);
      });
      if (ui === undefined) throw new Error('not rendered');
      const frame = (ui.lastFrame() ?? '')
        .replace(ANSI, '')
        .split('\n')
        .map((line) => line.trimEnd());
      assert.deepEqual(painted, frame, `${width}x${height}`);
      ui.unmount();
    }
  });
});

describe('the first screen while ink loads', () => {
  it('follows indexing: a small tree shows whole, not a frozen indexing bar', async () => {
    // A 7 KB tree in two files: the first batch comes before the tree is whole.
    const root = tempDir('traces-prepaint-');
    const lines = readFileSync(path.join(SAMPLES, 'my_program/generator/generator_20260707-101530.jsonl'), 'utf8').split('\n').filter((l) => l !== '');
    for (const [k, part] of [lines.slice(0, 3), lines.slice(3)].entries()) {
      mkdirSync(path.join(root, 'p', `m${k}`), { recursive: true });
      writeFileSync(path.join(root, 'p', `m${k}`, `m${k}_20260707-10153${k}.jsonl`), `${part.join('\n')}\n`);
    }
    const store = await IndexStore.open([root]);
    try {
      await firstBatch(store);
      const term = new FakeTerminal();
      term.columns = 100;
      term.rows = 20;
      // ink never loads here: the pre-paint alone must end on the whole tree.
      const stop = paintUntilLoaded(store, term as unknown as NodeJS.WriteStream, 'small', () => false);
      await store.whenDone();
      stop();
      const last = term.writes.at(-1)!.replace(ANSI, '');
      assert.match(last, new RegExp(`${lines.length} records {2}2 files, [\\d.]+ KB`), last);
      assert.doesNotMatch(last, /indexing/);
    } finally {
      store.close();
    }
  });
});
