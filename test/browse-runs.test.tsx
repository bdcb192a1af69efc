/**
 * `traces browse` over a mixed tree (the Synalinks samples, Ask recordings, klieo files):
 * records of every recorder in the tree and the list, and the runs view (`r`).
 */
import assert from 'node:assert/strict';
import { cpSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { cleanup, render } from 'ink-testing-library';
import { App } from '../src/ui/App.js';
import { IndexStore } from '../src/ui/index-store.js';
import { FIXTURES, SAMPLES, tempDir } from './helpers.js';
import { driver, KEYS } from './ink-driver.js';

const expected = JSON.parse(readFileSync(path.join(FIXTURES, 'samples-expected.json'), 'utf8'));


/** Records in the Ask and klieo fixtures. */
const OTHER_RECORDS = 16;

let root = '';
before(() => {
  root = tempDir('traces-browse-runs-');
  cpSync(SAMPLES, root, { recursive: true });
  for (const name of readdirSync(path.join(FIXTURES, 'ask'))) cpSync(path.join(FIXTURES, 'ask', name), path.join(root, name), { recursive: true });
  for (const name of readdirSync(path.join(FIXTURES, 'klieo'))) cpSync(path.join(FIXTURES, 'klieo', name), path.join(root, name));
});

const stores: IndexStore[] = [];
afterEach(() => {
  cleanup();
  for (const store of stores.splice(0)) store.close();
});
after(() => {
  for (const store of stores.splice(0)) store.close();
});

async function start(size = { width: 120, height: 40 }) {
  const store = await IndexStore.open([root], { otherSources: true });
  stores.push(store);
  await store.whenDone();
  const written: { path: string; text: string }[] = [];
  const ui = render(<App store={store} roots={root} width={size.width} height={size.height} excludePath={path.join(root, 'out.txt')} writeFile={(p, text) => written.push({ path: p, text })} onQuit={() => {}} />);
  const { frame, waitFor, press } = driver(ui);
  /** Moves the tree cursor (from the top) to the node with this key. */
  const goTo = async (key: string): Promise<string> => {
    const index = store.tree.findIndex((node) => node.key === key);
    assert.ok(index >= 0, key);
    return press(...Array.from({ length: index }, () => 'j'));
  };
  await waitFor('all records');
  return { ui, store, frame, waitFor, press, goTo, written };
}

/** Rows of the records list (right of the tree's `│`). */
function listRows(frame: string): string[] {
  return frame
    .split('\n')
    .map((line) => line.split('│')[1] ?? '')
    .filter((cell) => /^[ x][✓✗∅⚠]/.test(cell));
}

/** Rows of the runs view. */
function runRows(frame: string): string[] {
  return frame
    .split('\n')
    .map((line) => line.split('│')[1] ?? '')
    .filter((cell) => /^ {2}[✓✗∅…] /.test(cell));
}

describe('browse: Ask and klieo records', () => {
  it('indexes them with the Synalinks records, under their program and module', async () => {
    const { store, frame } = await start();
    assert.equal(store.files.length, expected.trace_files.length);
    assert.equal(store.count, expected.records + expected.damaged_lines + OTHER_RECORDS);
    const f = frame();
    for (const name of ['weather-compare', 'first-agent-1', 'older-format', 'support', 'writer', 'researcher', 'math_agent']) assert.ok(f.includes(name), name);
    assert.match(f, new RegExp(`${expected.records + OTHER_RECORDS} records`));
    // A klieo record's keys, status and duplicates come from the same TraceRecord fields.
    const researcher = store.tree.findIndex((n) => n.key === 'p:researcher');
    assert.equal(store.counts(researcher).exception, 2);
  });

  it('opens a klieo record as a chat, shows its metadata, marks it and writes its call_id', async () => {
    const { store, goTo, press, written } = await start();
    let f = await goTo('p:support');
    assert.match(f, /support\s+2/);
    assert.equal(listRows(f).length, 2);
    f = await press(KEYS.enter, KEYS.down, KEYS.enter);
    assert.match(f, /▍user/);
    assert.match(f, /▍assistant\s+completion/);
    f = await press(KEYS.tab);
    // The file field wraps where the temp folder's path makes it long: read it as one text.
    assert.match(f.replace(/\s*\n\s+/g, ' '), /capture-support\.json \(record 2; klieo file, read whole\)/);
    const entry = store.list(store.tree.findIndex((n) => n.key === 'p:support'), 'all', false)[1];
    const callId = store.record(entry)!.callId;
    assert.ok(f.includes(callId));
    f = await press('x', 'w', KEYS.enter);
    assert.match(f, /wrote 1 call_id/);
    assert.deepEqual(written.at(-1)!.text.split('\n').filter((l) => l !== '' && !l.startsWith('#')), [callId]);
  });

  it('opens an Ask recording call as a chat with its tool calls, and searches it', async () => {
    const { goTo, press, waitFor } = await start();
    await goTo('p:weather-compare');
    let f = await press(KEYS.enter);
    assert.equal(listRows(f).length, 3);
    await press('/', 'w', 'e', 'a', 't', 'h', 'e', 'r', KEYS.enter);
    await waitFor(/\/weather\/: record \d of 3/);
    f = await press(KEYS.enter);
    assert.match(f, /▍user/);
    assert.match(f, /⚙ /);
  });
});

describe('browse: runs view', () => {
  it('lists the two math_agent runs with 4 steps and opens one as a conversation with its tool call', async () => {
    const { goTo, press, waitFor, frame } = await start();
    await goTo('p:math_agent');
    await press('r');
    let f = await waitFor(/runs of math_agent\s+2 runs/);
    const rows = runRows(f);
    assert.equal(rows.length, 2, f);
    for (const row of rows) assert.match(row, /✓ \d\d-\d\d \d\d:\d\d:\d\d\s+4\s.*math_agent/);
    assert.match(f, /r records/);
    f = await press(KEYS.enter, KEYS.enter);
    assert.match(f, /run of math_agent {2}4 steps, ok, synalinks/);
    assert.match(f, /step 4 of 4/);
    assert.match(f, /⚙ multiply/);
    assert.match(f, /▍tool/);
    f = await press('h');
    assert.equal(runRows(f).length, 2, 'back to the runs list');
    f = await press('r');
    assert.equal(listRows(frame()).length, 6 + 2, 'r shows the records again');
  });

  it('f filters the runs by status, as the header says; no two columns share a title', async () => {
    const { store, press, waitFor } = await start({ width: 140, height: 50 });
    await press('r');
    let f = await waitFor(/runs of all\s+\d+ runs/);
    const all = runRows(f).length;
    const byStatus = (status: string): number => store.runs!.filter((run) => run.status === status).length;
    f = await press('f');
    assert.match(f, /\[filter ok\]/);
    assert.match(f, new RegExp(`runs of all\\s+${byStatus('ok')} runs \\(ok\\)`));
    assert.equal(runRows(f).length, byStatus('ok'));
    assert.ok(runRows(f).every((row) => row.startsWith('  ✓')), f);
    f = await press('f');
    assert.equal(runRows(f).length, byStatus('exception'));
    assert.ok(byStatus('exception') > 0 && runRows(f).every((row) => row.startsWith('  ✗')), f);
    f = await press('f', 'f');
    assert.equal(runRows(f).length, all, 'back to all runs');
    const titles = (header: string): string[] => header.trim().split(/\s+/);
    const runsHeader = f.split('\n').find((line) => line.includes('started'))!.split('│')[1];
    assert.equal(new Set(titles(runsHeader)).size, titles(runsHeader).length, runsHeader);
    f = await press('r');
    const recordsHeader = f.split('\n').find((line) => line.includes('first user message'))!.split('│')[1];
    assert.equal(new Set(titles(recordsHeader)).size, titles(recordsHeader).length, recordsHeader);
    assert.match(recordsHeader, /duration/);
  });

  it('lists the runs of every recorder under "all records"', async () => {
    const { store, press, waitFor } = await start({ width: 120, height: 50 });
    await press('r');
    const f = await waitFor(/runs of all\s+\d+ runs/);
    assert.equal(runRows(f).length, store.runs!.length);
    assert.match(f, /weather-compare\s+ask/);
    assert.match(f, /support\s+klieo/);
    const help = await press('?');
    assert.match(help, /r\s+runs view/);
  });
});
