/**
 * What a person must see at the usual terminal sizes (80x24 first, the default; 60x20; 200x50):
 * the footer's way to every key and out (`? keys`, `q quit`) in the tree, records and record
 * views, the ok count on every tree row, no status glyph without its number, help lines whole,
 * and the runs view's columns under their titles. The same checks run in a real terminal in
 * tmux-browse.test.ts; here they cover every view at every size cheaply.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { cleanup, render } from 'ink-testing-library';
import { App } from '../src/ui/App.js';
import { IndexStore } from '../src/ui/index-store.js';
import { SAMPLES, tempDir } from './helpers.js';
import { driver, KEYS } from './ink-driver.js';
import { assertFits, assertTreeBadges, footer, helpTexts, missingHelp, SIZES } from './screen-checks.js';

const stores: IndexStore[] = [];
afterEach(() => {
  cleanup();
  for (const store of stores.splice(0)) store.close();
});

async function start(width: number, height: number) {
  const store = await IndexStore.open([SAMPLES]);
  stores.push(store);
  await store.whenDone();
  const ui = render(
    <App store={store} roots="samples/synalinks" width={width} height={height} excludePath={`${tempDir('traces-browse-sizes-')}/exclude.txt`} copy={() => undefined} onQuit={() => undefined} />,
  );
  const d = driver(ui);
  await d.waitFor('all records');
  return { store, ...d };
}

describe('browse at 80x24, 60x20 and 200x50', () => {
  for (const { width, height } of SIZES) {
    it(`${width}x${height}: footers show ? keys and q quit; the tree keeps its ok counts`, async () => {
      const { press, frame } = await start(width, height);
      let f = frame();
      assertFits(f, width, 'tree');
      assertTreeBadges(f, 'tree');
      assert.match(footer(f), /j\/k move .*\? keys {2}q quit$/, `tree footer: ${footer(f)}`);
      f = await press(KEYS.enter);
      assert.match(footer(f), /Enter open .*\? keys {2}q quit$/, `records footer: ${footer(f)}`);
      assertTreeBadges(f, 'records');
      f = await press(KEYS.enter);
      assert.match(f, /conversation/);
      assertFits(f, width, 'record');
      assert.match(footer(f), /j\/k scroll .*h back .*\? keys {2}q quit$/, `record footer: ${footer(f)}`);
      f = await press('h', 'r');
      assert.match(footer(f), /Enter open run .*\? keys {2}q quit$/, `runs footer: ${footer(f)}`);
      f = await press('h');
      assert.match(footer(f), /Enter runs .*\? keys {2}q quit$/, `runs tree footer: ${footer(f)}`);
      assertFits(f, width, 'runs');
      if (width >= 200) {
        // Where there is room the footer keeps every key it had.
        assert.match(footer(f), /s stats {2}\? keys/);
      }
    });

    it(`${width}x${height}: ? shows every help line whole, wrapped to the width`, async () => {
      const { press } = await start(width, height);
      let f = await press('?');
      const rows: string[] = [];
      // The panel's rows (below its title, above the message line), a page at a time to the end.
      const panel = (screen: string): string[] => screen.split('\n').slice(2, height - 2);
      let previous = '';
      for (let page = 0; page < 40 && f !== previous; page++) {
        rows.push(...panel(f).filter((row) => !rows.includes(row) || row.trim() === ''));
        previous = f;
        f = await press(KEYS.pageDown);
      }
      assertFits(f, width, 'help');
      for (const row of rows) assert.doesNotMatch(row, /…\s*$/, `a help row cut short: ${row}`);
      assert.deepEqual(missingHelp(rows), [], `help lines missing or cut at ${width} columns:\n${helpTexts(rows)}`);
    });
  }

  it('the runs view aligns its columns under their titles', async () => {
    const { press, waitFor } = await start(200, 50);
    await press('r');
    const f = await waitFor(/runs of all {2}\d+ runs/);
    const lines = f.split('\n').map((line) => line.split('│')[1] ?? '');
    const header = lines.find((line) => line.includes('started'))!;
    const rows = lines.filter((line) => /^ {2}[✓✗∅…] \d\d-\d\d/.test(line));
    assert.ok(rows.length >= 10, f);
    const ends = ['steps', 'tokens', 'cost', 'duration'].map((title) => header.indexOf(title) + title.length);
    const starts = ['started', 'program', 'source', 'modules'].map((title) => header.indexOf(title));
    for (const row of rows) {
      for (const end of ends) assert.ok(row[end - 1] !== ' ' && (row[end] ?? ' ') === ' ', `a right-aligned cell not ending under its title at ${end}:\n${header}\n${row}`);
      for (const at of starts) assert.ok(row[at - 1] === ' ' && row[at] !== ' ', `a cell not starting under its title at ${at}:\n${header}\n${row}`);
    }
  });
});

describe('browse says plainly what a key found', () => {
  it('D on a record without duplicates says it has none, and opens no panel', async () => {
    const { press } = await start(80, 24);
    const f = await press(KEYS.enter, 'D');
    assert.doesNotMatch(f, /duplicate group/);
    assert.match(f, /no duplicates: no other record of this module has the same hashes/);
    assert.doesNotMatch(f, /1 record with the same/);
  });

  it('D on a duplicate at 60 columns shows the whole of what a dedupe keeps', async () => {
    const { press } = await start(60, 20);
    // my_program/generator (7th tree row) holds the sample's duplicate pair.
    let f = await press('j', 'j', 'j', 'j', 'j', 'j', 'j', KEYS.tab);
    const rows = f.split('\n').map((line) => line.split('│')[1] ?? '').filter((cell) => /^[ x][✓✗∅⚠]/.test(cell));
    const dupRow = rows.findIndex((r) => r.includes('≡'));
    assert.ok(dupRow > 0, f);
    for (let i = 0; i < dupRow; i++) await press('j');
    f = await press('D');
    assert.match(f, /duplicate group/);
    const intro = f.split('\n').slice(2, 6).map((l) => l.trim()).join(' ');
    assert.match(intro, /2 records with the same inputs_hash and config_hash in one program\/module; a dedupe keeps the first of the 2 ok records by timestamp \(ties: file path, then line\)/);
    assert.match(f, /keep ✓/);
    assert.match(f, /drop ✓/);
  });

  it('a bad regular expression is reported once, with what is wrong', async () => {
    const { press } = await start(80, 24);
    const f = await press('/', ...'(unclosed', KEYS.enter);
    assert.match(f, /invalid regular expression \/\(unclosed\/: unterminated group/);
    assert.equal(f.match(/regular expression/gi)?.length, 1, f);
  });

  it('after a search with no match, the status says none matches, not n/N', async () => {
    const { press, waitFor } = await start(80, 24);
    await press('/', ...'Paris', KEYS.enter);
    await waitFor(/\/Paris\/: record \d+ of \d+/);
    await press('/', ...'zzqqxx', KEYS.enter);
    await waitFor(/\/zzqqxx\/: no matching record here/);
    const f = await press('j');
    assert.match(f, /\/zzqqxx\/: no record here matches \(25 searched\)/);
    assert.doesNotMatch(f, /Paris/);
    assert.doesNotMatch(f, /n\/N next/);
  });
});
