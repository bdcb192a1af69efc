/** `traces browse` rendered with ink-testing-library on the samples, driven by keys. */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, it } from 'node:test';
import { cleanup, render } from 'ink-testing-library';
import { App, type AppProps } from '../src/ui/App.js';
import { IndexStore, type StoreOptions } from '../src/ui/index-store.js';
import { measureFirstRow } from '../src/ui/measure.js';
import { textWidth } from '../src/ui/text.js';
import { realInputs } from '../src/output/output-path.js';
import { FIXTURES, SAMPLES, seededRandom, tempDir } from './helpers.js';
import { driver, KEYS } from './ink-driver.js';

const expected = JSON.parse(readFileSync(path.join(FIXTURES, 'samples-expected.json'), 'utf8'));
const TOOL_FILE = path.join(SAMPLES, 'math_agent/tool_calls_generator_math_agent/tool_calls_generator_math_agent_20260708-163045.jsonl');
const toolRecords = readFileSync(TOOL_FILE, 'utf8')
  .split('\n')
  .filter((l) => l !== '')
  .map((l) => JSON.parse(l) as { call_id: string });


const stores: IndexStore[] = [];
afterEach(() => {
  cleanup();
  for (const store of stores.splice(0)) store.close();
});

async function start(props: Partial<AppProps> = {}, size = { width: 100, height: 30 }, options: StoreOptions = {}) {
  const store = await IndexStore.open([SAMPLES], options);
  stores.push(store);
  await store.whenDone();
  const copies: string[] = [];
  let quits = 0;
  const dir = tempDir('traces-browse-');
  const excludePath = path.join(dir, 'traces-exclude.txt');
  const ui = render(
    <App
      store={store}
      roots="samples/synalinks"
      width={size.width}
      height={size.height}
      excludePath={excludePath}
      copy={(text) => copies.push(text)}
      onQuit={() => quits++}
      {...props}
    />,
  );
  const { frame, waitFor, press, send } = driver(ui);
  const type = async (text: string): Promise<string> => press(...text.split(''));
  await waitFor('all records');
  return { ui, store, frame, waitFor, press, send, type, copies, quits: () => quits, excludePath };
}

/** The rows of the list pane (right of the tree's `│`). */
function listRows(frame: string): string[] {
  return frame
    .split('\n')
    .map((line) => line.split('│')[1] ?? '')
    .filter((cell) => /^[ x][✓✗∅⚠]/.test(cell));
}

describe('browse: navigation', () => {
  it('shows the tree with counts and badges and the list of all records', async () => {
    const { frame } = await start();
    const f = frame();
    for (const name of ['language_model', 'math_agent', 'tool_calls_generator', 'my_program', 'generator_cot']) assert.ok(f.includes(name), name);
    assert.match(f, /my_program\s+12/);
    assert.match(f, /✗1 ∅1 ≡1 ⚠1/);
    assert.match(f, new RegExp(`${expected.records} records`));
    assert.equal(listRows(f).length, expected.records + expected.damaged_lines);
  });

  it('moves into an agent module, opens a record and sees its tool call, then goes back', async () => {
    const { press, frame } = await start();
    let f = await press('j', 'j', 'j', 'j', 'j');
    assert.match(f, /math_agent\/tool_calls_generator_math_agent\s+6/);
    assert.equal(listRows(f).length, 6);
    f = await press(KEYS.enter, KEYS.enter);
    assert.match(f, /conversation/);
    assert.match(f, /▍system/);
    assert.match(f, /system prompt folded/);
    assert.match(f, /⚙ multiply/);
    assert.match(f, /"a": 423,/);
    f = await press(KEYS.enter);
    assert.match(f, /<instructions>/, 'Enter unfolds the system prompt');
    f = await press(KEYS.tab);
    assert.ok(f.includes(toolRecords[0].call_id), 'metadata shows the call_id');
    assert.match(f, /inputs_hash/);
    assert.match(f, /163045\.jsonl:1\b/);
    f = await press('h');
    assert.equal(listRows(f).length, 6);
    f = await press(KEYS.down, KEYS.enter);
    assert.match(f, /result of multiply/, 'the second step holds the tool result');
    f = await press(KEYS.esc, KEYS.esc, 'G');
    assert.match(f, /my_program\/my_program\s+1/);
    f = await press('g');
    assert.match(frame(), /all records/);
  });

  it('pages through a long record and shows the exception in red text', async () => {
    const { press } = await start();
    await press('f', 'f');
    let f = await press(KEYS.tab, KEYS.enter);
    assert.match(f, /✗ exception/);
    f = await press(KEYS.pageDown, 'G', 'g');
    assert.match(f, /rows 1-/);
  });
});

describe('browse: filtering and duplicates', () => {
  it('f cycles all, ok, exception, no_output', async () => {
    const { press } = await start();
    let f = await press('f');
    assert.match(f, /filter ok/);
    assert.equal(listRows(f).length, expected.ok);
    f = await press('f');
    assert.equal(listRows(f).length, expected.exception);
    assert.ok(listRows(f).every((r) => r.includes('✗')));
    f = await press('f');
    assert.equal(listRows(f).length, expected.no_output);
    assert.ok(listRows(f).every((r) => r.includes('∅')));
    f = await press('f');
    assert.equal(listRows(f).length, expected.records + expected.damaged_lines);
  });

  it('d hides the duplicates a dedupe would drop', async () => {
    const { press } = await start();
    let f = await press('d');
    assert.match(f, /dups hidden/);
    assert.equal(listRows(f).length, expected.records + expected.damaged_lines - expected.duplicate_ok_records);
    assert.ok(!listRows(f).some((r) => r.includes('≡')));
    f = await press('d');
    assert.equal(listRows(f).filter((r) => r.includes('≡')).length, expected.duplicate_ok_records);
  });

  it('D shows the duplicate group: every record with the same keys and the one dedupe keeps', async () => {
    const { press } = await start();
    // The duplicate is in my_program/generator: 7th row of the tree.
    let f = await press('j', 'j', 'j', 'j', 'j', 'j', 'j', KEYS.tab);
    const rows = listRows(f);
    const dupRow = rows.findIndex((r) => r.includes('≡'));
    assert.ok(dupRow > 0);
    for (let i = 0; i < dupRow; i++) await press('j');
    f = await press('D');
    assert.match(f, /duplicate group/);
    assert.match(f, /2 records with the same inputs_hash and config_hash/);
    assert.match(f, /keep ✓ .*generator_20260707-101530\.jsonl:\d+/);
    assert.match(f, /drop ✓ .*generator_20260707-143002\.jsonl:\d+/);
    f = await press('k', KEYS.enter);
    assert.match(f, /completion \(structured\)/, 'Enter opens the kept record');
    assert.match(f, /≡ 2 same keys/);
    f = await press('D', KEYS.esc);
    assert.doesNotMatch(f, /duplicate group/);
  });

  it('shows the damaged line as an entry with its file and line', async () => {
    const { press } = await start();
    let f = await press('j', 'j', 'j', 'j', 'j', 'j', 'j');
    const damaged = listRows(f).find((r) => r.includes('⚠'));
    assert.ok(damaged);
    assert.match(damaged, /line 3/);
    assert.match(damaged, /generator_20260707-143002\.jsonl:3/);
    f = await press(KEYS.tab, 'G', KEYS.enter);
    assert.match(f, /⚠ damaged line/);
    assert.match(f, /generator_20260707-143002\.jsonl:3/);
  });
});

describe('browse: search', () => {
  it('/ searches message text; n and N go to the next and previous matching record', async () => {
    const { press, type, waitFor } = await start();
    await press('/');
    await type('capital of');
    await press(KEYS.enter);
    let f = await waitFor(/\/capital of\/: record \d+ of/);
    const first = /record (\d+) of/.exec(f)![1];
    f = await press('n');
    const second = /record (\d+) of/.exec(f)![1];
    assert.notEqual(first, second);
    f = await press('N');
    assert.equal(/record (\d+) of/.exec(f)![1], first);
    f = await press(KEYS.enter);
    assert.match(f, /capital of/i);
    // Inside the record, n moves between matching rows.
    f = await press('n');
    assert.match(f, /match \d+ of \d+/);
  });

  it('a match inside folded reasoning is unfolded, and the status keeps the record position after n', async () => {
    const { send, press, waitFor } = await start();
    // "2x = 0.10" is only in the reasoning of the bat-and-ball records.
    await send('/2x = 0\\.10\r');
    let f = await waitFor(/\/2x = 0\\\.10\/: record (\d+) of (\d+)/);
    const [, position, total] = /record (\d+) of (\d+)/.exec(f)!;
    f = await press(KEYS.enter);
    assert.match(f, /▾ reasoning/, 'the fold that holds the match is open');
    assert.match(f, /2x = 0\.10/);
    assert.ok(f.includes(`record ${position} of ${total}`), f);
    f = await press('n');
    assert.ok(f.includes(`match 1 of 1 · record ${position} of ${total}`), f);
    // Searching from inside a record unfolds too.
    f = await press('e');
    assert.match(f, /▸ reasoning folded/);
    await send('/x = 0\\.05\r');
    f = await waitFor(/match 1 of 1/);
    assert.match(f, /▾ reasoning/);
    assert.match(f, /x = 0\.05/);
  });

  it('an invalid regular expression shows a message instead of crashing', async () => {
    const { press, type } = await start();
    await press('/');
    await type('(unclosed');
    const f = await press(KEYS.enter);
    assert.match(f, /invalid regular expression/);
    assert.match(await press('j'), /all records/);
  });

  it('a search with no match says so', async () => {
    const { press, type, waitFor } = await start();
    await press('/');
    await type('zzqqxx');
    await press(KEYS.enter);
    await waitFor(/no matching record/);
  });
});

describe('browse: marking and the exclusion file', () => {
  it('x marks the current record, w writes its call_id to the exclusion file', async () => {
    const { press, waitFor, excludePath } = await start();
    await press('j', 'j', 'j', 'j', 'j', KEYS.enter, KEYS.enter);
    let f = await press('x');
    assert.match(f, /x marked/);
    assert.match(f, /1 marked/);
    f = await press(KEYS.esc, 'j', 'x');
    assert.match(f, /2 marked/);
    f = await press('x');
    assert.match(f, /1 marked/, 'x again unmarks');
    f = await press('w');
    assert.ok(f.includes(`write marked call_ids to: ${excludePath}`));
    await press(KEYS.enter);
    await waitFor(/wrote 1 call_id to /);
    assert.ok(existsSync(excludePath));
    const text = readFileSync(excludePath, 'utf8');
    const ids = text.split('\n').filter((l) => l !== '' && !l.startsWith('#'));
    assert.deepEqual(ids, [toolRecords[0].call_id]);
    assert.match(text, /^# /);
  });

  it('w never writes over an exclusion file edited elsewhere since browse read or wrote it', async () => {
    const { press, waitFor, excludePath } = await start({}, { width: 200, height: 30 });
    await press(KEYS.tab, 'x', 'w', KEYS.enter);
    await waitFor(/wrote 1 call_id to /);
    const edited = `${readFileSync(excludePath, 'utf8')}added-in-an-editor\n`;
    writeFileSync(excludePath, edited);
    await press('j', 'x', 'w', KEYS.enter);
    await waitFor(/changed on disk since browse read it, and is kept as it is/);
    assert.equal(readFileSync(excludePath, 'utf8'), edited, 'the edit is kept');
    // Moved away, the name is free again: the next w writes.
    rmSync(excludePath);
    await press('w', KEYS.enter);
    await waitFor(/wrote 2 call_ids to /);
    assert.equal(readFileSync(excludePath, 'utf8').split('\n').filter((l) => l && !l.startsWith('#')).length, 2);
  });

  it('w can write to another path typed at the prompt', async () => {
    const { press, type, waitFor } = await start();
    const other = path.join(tempDir('traces-browse-'), 'other.txt');
    await press(KEYS.tab, 'x', 'w', '\x15');
    await type(other);
    await press(KEYS.enter);
    await waitFor('wrote 1 call_id');
    assert.equal(readFileSync(other, 'utf8').split('\n').filter((l) => l && !l.startsWith('#')).length, 1);
  });

  it("w's prompt never writes over a file browse did not read, nor into the trees it reads", async () => {
    const { press, type, waitFor } = await start({ inputs: realInputs([SAMPLES]) }, { width: 260, height: 30 });
    const notes = path.join(tempDir('traces-browse-'), 'notes.txt');
    writeFileSync(notes, 'my only copy\n');
    await press(KEYS.tab, 'x', 'w', '\x15');
    await type(notes);
    await press(KEYS.enter);
    await waitFor(/cannot write .*notes\.txt: it exists and is not the list browse started with/);
    assert.equal(readFileSync(notes, 'utf8'), 'my only copy\n');
    // A trace file, and a new name inside a tree browse reads.
    const traceFile = path.join(SAMPLES, 'my_program', 'generator', 'generator_20260707-101530.jsonl');
    const before = readFileSync(traceFile);
    const inTree = path.join(SAMPLES, 'my_program', 'excluded.txt');
    for (const target of [traceFile, inTree]) {
      await press('w', '\x15');
      await type(target);
      await press(KEYS.enter);
      await waitFor(`cannot write ${target}`);
    }
    assert.deepEqual(readFileSync(traceFile), before);
    assert.equal(existsSync(inTree), false);
  });

  it('every key counts when keys arrive together: 20 backspaces at once, a pasted path with its Enter', async () => {
    const { send, frame, waitFor, excludePath } = await start();
    // Five `j` in one chunk move the tree cursor five rows.
    let f = await send('jjjjj');
    assert.match(f, /│ math_agent\/tool_calls_generator_math_agent\s+6/);
    f = await send('\tx');
    assert.match(f, /1 marked/);
    f = await send('w');
    assert.ok(f.includes(`write marked call_ids to: ${excludePath}█`));
    // One chunk of 20 backspaces deletes 20 characters.
    f = await send(KEYS.backspace.repeat(20));
    assert.ok(f.includes(`write marked call_ids to: ${excludePath.slice(0, -20)}█`), frame());
    // Ctrl+H is a backspace too; the rest of the default path goes, then a pasted path and Enter.
    await send('\b'.repeat(excludePath.length - 20));
    assert.ok(frame().includes('write marked call_ids to: █'));
    const other = path.join(tempDir('traces-browse-'), 'pasted.txt');
    await send(`${other}\r`);
    await waitFor(`wrote 1 call_id to ${other}`);
    assert.deepEqual(readFileSync(other, 'utf8').split('\n').filter((l) => l && !l.startsWith('#')), [toolRecords[0].call_id]);
  });

  it('a search typed in one chunk with its Enter runs; control characters never reach the prompt', async () => {
    const { send, waitFor, frame } = await start();
    await send('/capitol\x7f\x7fal\x01\x02 of');
    assert.ok(frame().includes('/capital of█'), frame());
    await send('\r');
    await waitFor(/\/capital of\/: record \d+ of/);
  });

  it('call_ids of an existing exclusion file start marked and are kept when rewritten', async () => {
    const dir = tempDir('traces-browse-');
    const excludePath = path.join(dir, 'traces-exclude.txt');
    const preloadedIds = new Set([toolRecords[1].call_id, 'from-another-tree']);
    const { press, waitFor } = await start({ excludePath, preloadedIds }, undefined, { watchCallIds: preloadedIds });
    let f = await waitFor('1 marked');
    f = await press('j', 'j', 'j', 'j', 'j', KEYS.tab, 'j');
    assert.ok(listRows(f)[1].startsWith('x'), 'the second tool-call record is marked');
    await press('w', KEYS.enter);
    await waitFor('wrote 2 call_ids');
    const ids = readFileSync(excludePath, 'utf8').split('\n').filter((l) => l && !l.startsWith('#'));
    assert.deepEqual(ids.sort(), [toolRecords[1].call_id, 'from-another-tree'].sort());
  });

  it('y copies the call_id; damaged lines cannot be marked', async () => {
    const { press, copies } = await start();
    await press('j', 'j', 'j', 'j', 'j', KEYS.tab, 'y');
    assert.deepEqual(copies, [toolRecords[0].call_id]);
    const f = await press('k', 'k', 'k', 'k', 'k', KEYS.tab, 'j', 'j', KEYS.tab, 'G', 'x');
    assert.match(f, /damaged line has no call_id/);
  });
});

describe('browse: panels, layout, quitting', () => {
  it('? lists the keys, s shows the stats, Esc closes them', async () => {
    const { press } = await start();
    let f = await press('?');
    for (const text of ['mark / unmark', 'traces-exclude.txt', 'OSC 52', 'regular expression']) assert.ok(f.includes(text), text);
    f = await press(KEYS.esc);
    assert.doesNotMatch(f, /mark \/ unmark/);
    f = await press('s');
    assert.match(f, /tokens \(ok\)\s+([\d,]+)/);
    assert.equal(/tokens \(ok\)\s+([\d,]+)/.exec(f)![1].replace(/,/g, ''), String(expected.tokens_ok.total));
    f = await press('q');
    assert.doesNotMatch(f, /tokens \(ok\)/, 'q closes the panel first');
  });

  it('fits 80x24 and reflows when the size changes', async () => {
    const { ui, frame, store, waitFor } = await start({}, { width: 80, height: 24 });
    const check = (width: number, height: number): void => {
      const lines = frame().split('\n');
      assert.equal(lines.length, height);
      for (const line of lines) assert.ok(textWidth(line) <= width, `${textWidth(line)} > ${width}: ${line}`);
    };
    check(80, 24);
    ui.rerender(<App store={store} roots="samples/synalinks" width={120} height={35} />);
    await waitFor((f) => f.split('\n').length === 35, '35 rows');
    check(120, 35);
    assert.match(frame(), /cost/, 'wide screens get more columns');
  });

  it('q quits', async () => {
    const { press, quits } = await start();
    await press('q');
    assert.equal(quits(), 1);
  });

  it('measureFirstRow times the first record row', async () => {
    // How fast is the benchmark's business (bench/run.ts); a bound in seconds here would fail
    // on a loaded machine. The probe itself fails if no record row comes within its deadline.
    const seconds = await measureFirstRow([SAMPLES]);
    assert.ok(Number.isFinite(seconds) && seconds > 0, String(seconds));
  });
});

describe('browse: any keys, in any order', () => {
  it('600 seeded random keys (letters, digits, arrows, Enter, Esc, Tab, Backspace, search) never break the screen', async (t) => {
    // The keys can type a relative name at w's prompt: run from a folder of the test's own,
    // so the exclusion file they write lands there, not in the checkout.
    const cwd = process.cwd();
    const scratch = tempDir('traces-browse-keys-');
    process.chdir(scratch);
    t.after(() => process.chdir(cwd));
    const { frame, press } = await start({}, { width: 90, height: 26 });
    const random = seededRandom(20261201);
    const keys = [...'abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/?:.-_[]{}<>!@#$%^&*()', ...Object.values(KEYS), '\x1b[C', '\x1b[D', '\x1b[H', '\x1b[F', '\x1b[5~', '\x03', '\x15', '\x17'];
    const pressed: string[] = [];
    for (let i = 0; i < 600; i++) {
      const key = keys[Math.floor(random() * keys.length)];
      pressed.push(JSON.stringify(key));
      await press(key);
      const lines = frame().split('\n');
      assert.equal(lines.length, 26, `after ${pressed.slice(-8).join(' ')}:\n${frame()}`);
      for (const line of lines) assert.ok(textWidth(line) <= 90, `after ${pressed.slice(-8).join(' ')}: ${line}`);
    }
  });
});
