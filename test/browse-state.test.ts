/** The browser's key handling as pure functions: keys → actions → (state, effects). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Key } from 'ink';
import type { GroupMember, StatusFilter } from '../src/ui/index-store.js';
import { keyHints } from '../src/ui/rows.js';
import { follow, initialState, keyToAction, NO_KEY, reduce, type Action, type Context, type State } from '../src/ui/state.js';

function key(overrides: Partial<Key> = {}): Key {
  return { ...NO_KEY, ...overrides };
}

/** A tree of 3 rows (all, program, module) and a list of entries 0..n-1 filtered by parity. */
function context(overrides: Partial<Context> = {}, size = 50): Context {
  const all = Array.from({ length: size }, (_, i) => i);
  const listFor = (_tree: number, filter: StatusFilter, hide: boolean): number[] =>
    all.filter((i) => (filter === 'all' || (filter === 'ok' ? i % 2 === 0 : i % 2 === 1)) && (!hide || i % 10 !== 5));
  return {
    treeLength: 3,
    parentOf: (i) => (i === 2 ? 1 : i),
    list: all,
    listFor,
    page: 10,
    recordRows: 40,
    folds: [
      { id: 'system:0', row: 1 },
      { id: 'reasoning:2', row: 12 },
    ],
    matchRows: () => [5, 20, 30],
    isMatch: (entry) => entry === 7 || entry === 33,
    searchDone: true,
    group: (entry): GroupMember[] => [
      { entry: 3, role: 'kept' },
      { entry, role: 'duplicate' },
    ],
    helpRows: 30,
    isDamaged: (entry) => entry === 49,
    ...overrides,
  };
}

function run(state: State, actions: Action[], ctx: Context = context()): [State, ReturnType<typeof reduce>[1]] {
  let s = state;
  let effects: ReturnType<typeof reduce>[1] = [];
  for (const action of actions) {
    [s, effects] = reduce(s, action, ctx);
  }
  return [s, effects];
}

const inList = (): State => ({ ...initialState(), pane: 'list' });

describe('keyToAction', () => {
  const browse = initialState();
  it('maps the less/jless vocabulary', () => {
    assert.deepEqual(keyToAction('j', key(), browse), { type: 'move', by: 1 });
    assert.deepEqual(keyToAction('', key({ downArrow: true }), browse), { type: 'move', by: 1 });
    assert.deepEqual(keyToAction('k', key(), browse), { type: 'move', by: -1 });
    assert.deepEqual(keyToAction('g', key(), browse), { type: 'top' });
    assert.deepEqual(keyToAction('G', key({ shift: true }), browse), { type: 'bottom' });
    assert.deepEqual(keyToAction('', key({ pageDown: true }), browse), { type: 'page', by: 1 });
    assert.deepEqual(keyToAction('', key({ pageUp: true }), browse), { type: 'page', by: -1 });
    assert.deepEqual(keyToAction('d', key({ ctrl: true }), browse), { type: 'page', by: 0.5 });
    assert.deepEqual(keyToAction('', key({ return: true }), browse), { type: 'open' });
    assert.deepEqual(keyToAction('l', key(), browse), { type: 'open' });
    assert.deepEqual(keyToAction('h', key(), browse), { type: 'back' });
    assert.deepEqual(keyToAction('', key({ escape: true }), browse), { type: 'back' });
    assert.deepEqual(keyToAction('', key({ tab: true }), browse), { type: 'tab' });
    assert.deepEqual(keyToAction('/', key(), browse), { type: 'searchPrompt' });
    assert.deepEqual(keyToAction('n', key(), browse), { type: 'nextMatch', dir: 1 });
    assert.deepEqual(keyToAction('N', key({ shift: true }), browse), { type: 'nextMatch', dir: -1 });
    assert.deepEqual(keyToAction('f', key(), browse), { type: 'cycleFilter' });
    assert.deepEqual(keyToAction('d', key(), browse), { type: 'toggleDuplicates' });
    assert.deepEqual(keyToAction('D', key({ shift: true }), browse), { type: 'showGroup' });
    assert.deepEqual(keyToAction('x', key(), browse), { type: 'mark' });
    assert.deepEqual(keyToAction('w', key(), browse), { type: 'writePrompt' });
    assert.deepEqual(keyToAction('y', key(), browse), { type: 'copy' });
    assert.deepEqual(keyToAction('s', key(), browse), { type: 'stats' });
    assert.deepEqual(keyToAction('?', key(), browse), { type: 'help' });
    assert.deepEqual(keyToAction('q', key(), browse), { type: 'quit' });
    assert.deepEqual(keyToAction('c', key({ ctrl: true }), browse), { type: 'quit' });
  });

  it('sends keys to the prompt while one is open', () => {
    const prompting = { ...browse, prompt: { kind: 'search' as const, text: '' } };
    assert.deepEqual(keyToAction('q', key(), prompting), { type: 'promptInput', text: 'q' });
    assert.deepEqual(keyToAction('', key({ return: true }), prompting), { type: 'promptSubmit' });
    assert.deepEqual(keyToAction('', key({ escape: true }), prompting), { type: 'promptCancel' });
    assert.deepEqual(keyToAction('', key({ backspace: true }), prompting), { type: 'promptBackspace' });
  });
});

describe('reduce: moving', () => {
  it('moves the tree cursor and resets the list', () => {
    const [s] = run({ ...initialState(), listCursor: 4 }, [{ type: 'move', by: 1 }]);
    assert.equal(s.treeCursor, 1);
    assert.equal(s.listCursor, 0);
    const [clamped] = run(initialState(), [{ type: 'move', by: 99 }]);
    assert.equal(clamped.treeCursor, 2);
  });

  it('moves the list cursor, pages and keeps it visible', () => {
    let [s] = run(inList(), [{ type: 'move', by: 1 }, { type: 'move', by: 1 }]);
    assert.equal(s.listCursor, 2);
    [s] = run(s, [{ type: 'page', by: 1 }]);
    assert.equal(s.listCursor, 12);
    assert.equal(s.listTop, 3);
    [s] = run(s, [{ type: 'bottom' }]);
    assert.equal(s.listCursor, 49);
    assert.equal(s.listTop, 40);
    [s] = run(s, [{ type: 'top' }]);
    assert.deepEqual([s.listCursor, s.listTop], [0, 0]);
    [s] = run(s, [{ type: 'move', by: -1 }]);
    assert.equal(s.listCursor, 0);
  });

  it('follow() scrolls as little as possible', () => {
    assert.equal(follow(0, 5, 10, 100), 0);
    assert.equal(follow(0, 10, 10, 100), 1);
    assert.equal(follow(20, 5, 10, 100), 5);
    assert.equal(follow(95, 99, 10, 100), 90);
  });

  it('o orders the records list by time and back, keeping the cursor on the same record', () => {
    const byTime = [5, 4, 3, 2, 1, 0, ...Array.from({ length: 44 }, (_, i) => i + 6)];
    const ctx = context({ listFor: (_t, _f, _h, order) => (order === 'time' ? byTime : Array.from({ length: 50 }, (_, i) => i)) });
    assert.equal(keyToAction('o', key(), initialState()).type, 'toggleOrder');
    let [s] = run({ ...inList(), listCursor: 1 }, [{ type: 'toggleOrder' }], ctx);
    assert.equal(s.order, 'time');
    assert.equal(s.listCursor, 4, 'record 1 is fifth by time');
    assert.match(s.message!.text, /by recorded time, oldest first/);
    assert.match(keyHints(s), /o file order/);
    [s] = run(s, [{ type: 'toggleOrder' }], context({ list: byTime }));
    assert.equal(s.order, 'file');
  });

  it('the footer names the pane Tab goes to, not the one the user is on', () => {
    let [s] = run(initialState(), [{ type: 'open' }, { type: 'open' }]);
    assert.equal(s.recordPane, 'chat');
    assert.match(keyHints(s), /Tab metadata/);
    [s] = run(s, [{ type: 'tab' }]);
    assert.equal(s.recordPane, 'meta');
    assert.match(keyHints(s), /Tab chat/);
    assert.doesNotMatch(keyHints(s), /Tab metadata/);
    assert.match(keyHints(initialState()), /Tab records list/);
  });

  it('opens, goes back, and switches panes with Tab', () => {
    let [s] = run(initialState(), [{ type: 'open' }]);
    assert.equal(s.pane, 'list');
    [s] = run(s, [{ type: 'move', by: 3 }, { type: 'open' }]);
    assert.equal(s.mode, 'record');
    assert.equal(s.recordEntry, 3);
    [s] = run(s, [{ type: 'tab' }]);
    assert.equal(s.recordPane, 'meta');
    [s] = run(s, [{ type: 'back' }]);
    assert.equal(s.mode, 'browse');
    assert.equal(s.listCursor, 3);
    [s] = run(s, [{ type: 'back' }]);
    assert.equal(s.pane, 'tree');
    [s] = run({ ...s, treeCursor: 2 }, [{ type: 'back' }]);
    assert.equal(s.treeCursor, 1, 'h on a module goes to its program');
    [s] = run(s, [{ type: 'tab' }]);
    assert.equal(s.pane, 'list');
  });

  it('scrolls the record view and toggles the fold on screen', () => {
    let [s] = run(inList(), [{ type: 'open' }, { type: 'move', by: 1 }]);
    assert.equal(s.chatTop, 1);
    [s] = run(s, [{ type: 'bottom' }]);
    assert.equal(s.chatTop, 30, 'last page: 40 rows, 10 visible');
    [s] = run(s, [{ type: 'open' }]);
    assert.ok(s.open.has('reasoning:2') === false && s.open.size === 0, 'no fold visible from row 30: nothing toggled');
    [s] = run(s, [{ type: 'top' }, { type: 'open' }]);
    assert.ok(s.open.has('system:0'));
    [s] = run(s, [{ type: 'open' }]);
    assert.ok(!s.open.has('system:0'));
    [s] = run(s, [{ type: 'toggleAllFolds' }]);
    assert.deepEqual([...s.open].sort(), ['reasoning:2', 'system:0']);
    [s] = run(s, [{ type: 'toggleAllFolds' }]);
    assert.equal(s.open.size, 0);
  });
});

describe('reduce: filters, search, marks', () => {
  it('cycles the status filter and keeps the cursor on the same record when it stays', () => {
    let [s] = run({ ...inList(), listCursor: 8 }, [{ type: 'cycleFilter' }]);
    assert.equal(s.filter, 'ok');
    // Entry 8 is "ok" (even): it stays selected, at position 4 of the even list.
    assert.equal(s.listCursor, 4);
    [s] = run(s, [{ type: 'cycleFilter' }, { type: 'cycleFilter' }, { type: 'cycleFilter' }]);
    assert.equal(s.filter, 'all');
  });

  it('toggles duplicates', () => {
    const [s] = run(inList(), [{ type: 'toggleDuplicates' }]);
    assert.equal(s.hideDuplicates, true);
    assert.match(s.message!.text, /duplicates hidden/);
  });

  it('rejects an invalid regular expression with a message', () => {
    const [s, effects] = run(inList(), [{ type: 'searchPrompt' }, { type: 'promptInput', text: '(' }, { type: 'promptSubmit' }]);
    assert.equal(s.prompt, null);
    assert.equal(s.search, null);
    assert.equal(s.message?.tone, 'error');
    assert.match(s.message!.text, /invalid regular expression/);
    assert.deepEqual(effects, []);
  });

  it('starts a search, then n/N jump between matching records (wrapping)', () => {
    const ctx = context({ searchDone: false, isMatch: () => false });
    let [s, effects] = run(inList(), [{ type: 'searchPrompt' }, ...'capital'.split('').map((c): Action => ({ type: 'promptInput', text: c })), { type: 'promptSubmit' }], ctx);
    assert.equal(effects[0]?.type, 'search');
    assert.equal(s.search?.source, 'capital');
    assert.equal(s.search?.regex.flags, 'i', 'smart case: lower-case pattern ignores case');
    assert.equal(s.pendingJump, 1);
    [s] = run(s, [{ type: 'nextMatch', dir: 1 }], ctx);
    assert.equal(s.pendingJump, 1, 'still waiting while the search runs');
    [s] = run(s, [{ type: 'nextMatch', dir: 1 }]);
    assert.equal(s.listCursor, 7);
    assert.equal(s.pendingJump, 0);
    [s] = run(s, [{ type: 'nextMatch', dir: 1 }]);
    assert.equal(s.listCursor, 33);
    [s] = run(s, [{ type: 'nextMatch', dir: 1 }]);
    assert.equal(s.listCursor, 7, 'wraps around');
    [s] = run(s, [{ type: 'nextMatch', dir: -1 }]);
    assert.equal(s.listCursor, 33);
  });

  it('reports no match once the search is done', () => {
    const [s] = run({ ...inList(), search: { source: 'zzz', regex: /zzz/ } }, [{ type: 'nextMatch', dir: 1 }], context({ isMatch: () => false }));
    assert.match(s.message!.text, /no matching record/);
  });

  it('n/N in a record move between matching rows', () => {
    let [s] = run({ ...inList(), search: { source: 'x', regex: /x/ } }, [{ type: 'open' }, { type: 'nextMatch', dir: 1 }]);
    assert.equal(s.recordMatchRow, 5);
    assert.equal(s.chatTop, 3);
    [s] = run(s, [{ type: 'nextMatch', dir: 1 }]);
    assert.equal(s.recordMatchRow, 20);
    [s] = run(s, [{ type: 'nextMatch', dir: -1 }]);
    assert.equal(s.recordMatchRow, 5);
    [s] = run(s, [{ type: 'nextMatch', dir: -1 }]);
    assert.equal(s.recordMatchRow, 30, 'wraps to the last');
  });

  it('marks and unmarks the current record; damaged lines cannot be marked', () => {
    let [s] = run({ ...inList(), listCursor: 4 }, [{ type: 'mark' }]);
    assert.deepEqual([...s.marked], [4]);
    [s] = run(s, [{ type: 'move', by: 1 }, { type: 'mark' }]);
    assert.deepEqual([...s.marked].sort(), [4, 5]);
    [s] = run(s, [{ type: 'mark' }]);
    assert.deepEqual([...s.marked], [4]);
    [s] = run(s, [{ type: 'bottom' }, { type: 'mark' }]);
    assert.deepEqual([...s.marked], [4]);
    assert.equal(s.message?.tone, 'error');
  });

  it('a record that recorded no call_id cannot be marked or copied, and says why', () => {
    const ctx = context({ hasCallId: (entry) => entry !== 6 });
    for (const action of [{ type: 'mark' }, { type: 'copy' }] as const) {
      const [s, effects] = run({ ...inList(), listCursor: 6 }, [action], ctx);
      assert.deepEqual([...s.marked], []);
      assert.deepEqual(effects, []);
      assert.equal(s.message?.text, 'this record recorded no call_id: it cannot be listed for exclusion or copied');
    }
  });

  it('w asks for a path (default traces-exclude.txt) and emits a write of the marked entries', () => {
    let [s] = run({ ...inList(), marked: new Set([9, 2]) }, [{ type: 'writePrompt' }]);
    assert.deepEqual(s.prompt, { kind: 'write', text: 'traces-exclude.txt' });
    let effects;
    [s, effects] = run(s, [{ type: 'promptSubmit' }]);
    assert.deepEqual(effects, [{ type: 'write', path: 'traces-exclude.txt', entries: [2, 9] }]);
    [s] = run(s, [{ type: 'writePrompt' }, { type: 'promptInput', text: '\u0015' }, { type: 'promptInput', text: 'out.txt' }]);
    [s, effects] = run(s, [{ type: 'promptSubmit' }]);
    assert.equal(s.excludePath, 'out.txt');
    assert.equal(effects[0]?.type === 'write' && effects[0].path, 'out.txt');
  });

  it('D opens the duplicate group on the current record; Enter opens a member', () => {
    let [s] = run({ ...inList(), listCursor: 6 }, [{ type: 'showGroup' }]);
    assert.deepEqual(s.overlay, { kind: 'group', entry: 6, cursor: 1, top: 0 });
    [s] = run(s, [{ type: 'move', by: -1 }, { type: 'open' }]);
    assert.equal(s.overlay, null);
    assert.equal(s.mode, 'record');
    assert.equal(s.recordEntry, 3);
  });

  it('q closes a panel first, then quits; y copies', () => {
    let [s, effects] = run(inList(), [{ type: 'help' }, { type: 'quit' }]);
    assert.equal(s.overlay, null);
    assert.deepEqual(effects, []);
    [s, effects] = run(s, [{ type: 'quit' }]);
    assert.deepEqual(effects, [{ type: 'quit' }]);
    [, effects] = run(s, [{ type: 'copy' }]);
    assert.deepEqual(effects, [{ type: 'copy', entry: 0 }]);
  });
});
