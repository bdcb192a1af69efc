/**
 * The browser's UI state and its pure reducer: (state, action, context) → state plus the
 * effects to run (quit, write the exclusion file, copy, start a search). Keys are first
 * turned into actions by `keyToAction`, so both halves can be tested without a terminal.
 */
import type { Key } from 'ink';
import type { GroupMember, StatusFilter } from './index-store.js';
import { STATUS_FILTERS } from './index-store.js';
import { compileSearch } from './search.js';

import { DEFAULT_EXCLUDE_FILE } from './exclude-file.js';
export { DEFAULT_EXCLUDE_FILE };

export type Overlay = { kind: 'help'; top: number } | { kind: 'stats' } | { kind: 'group'; entry: number; cursor: number; top: number };

export interface Prompt {
  kind: 'search' | 'write';
  text: string;
}

export interface Message {
  text: string;
  tone: 'info' | 'error';
}

export interface State {
  mode: 'browse' | 'record';
  pane: 'tree' | 'list';
  /** What the list shows: records, or runs (one row per run, Enter opens it as one conversation). */
  view: 'records' | 'runs';
  /** Cursor and top of the list of the other view, restored when `r` switches back. */
  otherListCursor: number;
  otherListTop: number;
  /** Run (index into the store's runs) whose conversation the record view shows, -1 for none. */
  recordRun: number;
  treeCursor: number;
  treeTop: number;
  listCursor: number;
  listTop: number;
  /** Entry shown in the record view. */
  recordEntry: number;
  recordPane: 'chat' | 'meta';
  chatTop: number;
  metaTop: number;
  /** Open folds of the record view (`system:<n>`, `reasoning:<n>`). */
  open: ReadonlySet<string>;
  /** Row of the current search match in the record view, -1 for none. */
  recordMatchRow: number;
  filter: StatusFilter;
  hideDuplicates: boolean;
  /** The records list: as the files hold them (file, then line), or by recorded time, oldest first. */
  order: ListOrder;
  overlay: Overlay | null;
  prompt: Prompt | null;
  search: { source: string; regex: RegExp } | null;
  /** A jump to the next match is waiting for the background search to find one. */
  pendingJump: 1 | -1 | 0;
  marked: ReadonlySet<number>;
  excludePath: string;
  message: Message | null;
}

export type ListOrder = 'file' | 'time';

export type Action =
  | { type: 'toggleOrder' }
  | { type: 'move'; by: number }
  | { type: 'page'; by: number }
  | { type: 'top' }
  | { type: 'bottom' }
  | { type: 'open' }
  | { type: 'back' }
  | { type: 'tab' }
  | { type: 'searchPrompt' }
  | { type: 'nextMatch'; dir: 1 | -1 }
  | { type: 'cycleFilter' }
  | { type: 'toggleDuplicates' }
  | { type: 'showGroup' }
  | { type: 'mark' }
  | { type: 'writePrompt' }
  | { type: 'copy' }
  | { type: 'stats' }
  | { type: 'help' }
  | { type: 'quit' }
  | { type: 'toggleAllFolds' }
  | { type: 'toggleRuns' }
  | { type: 'promptInput'; text: string }
  | { type: 'promptBackspace' }
  | { type: 'promptSubmit' }
  | { type: 'promptCancel' }
  | { type: 'addMarks'; entries: readonly number[] }
  | { type: 'message'; text: string; tone?: Message['tone'] }
  | { type: 'none' };

export type Effect =
  | { type: 'quit' }
  | { type: 'write'; path: string; entries: readonly number[] }
  | { type: 'copy'; entry: number }
  | { type: 'search'; regex: RegExp };

/** What the reducer needs to know about the data and the layout. */
export interface Context {
  treeLength: number;
  /** Parent of a tree row (module → its program), or the row itself. */
  parentOf(treeIndex: number): number;
  /** Entries of the list for the selected node and filters. */
  list: ArrayLike<number>;
  listFor(treeCursor: number, filter: StatusFilter, hideDuplicates: boolean, order?: ListOrder): ArrayLike<number>;
  /** Visible rows of the scrolling area that has the focus. */
  page: number;
  /** Rows of the record view's current pane. */
  recordRows: number;
  /** Fold headers of the open record's chat rows. */
  folds: readonly { id: string; row: number }[];
  /** Chat rows of the open record that match a regex (with these folds open; default: the state's). */
  matchRows(regex: RegExp, open?: ReadonlySet<string>): number[];
  /** Rows of the open record's chat with these folds open. */
  chatRowsWith?(open: ReadonlySet<string>): number;
  /** The folds of entry `entry` whose hidden rows match: a search unfolds them. */
  foldsMatching?(entry: number, regex: RegExp): ReadonlySet<string>;
  /** Whether the background search found entry `i`. */
  isMatch(entry: number): boolean;
  searchDone: boolean;
  group(entry: number): GroupMember[];
  /** Damaged lines have no call_id: they cannot be marked or copied. */
  isDamaged(entry: number): boolean;
  /** Whether a record recorded a call_id (a text, not empty): exclusion lists and copies are of call_ids. */
  hasCallId?(entry: number): boolean;
  helpRows: number;
  /** Runs view: whether the runs are grouped yet (the list holds run indexes then). */
  runsReady?: boolean;
  /** Runs view: the entry showing run `run` as one conversation (-1: none) and what to say about it. */
  runOpen?(run: number): { entry: number; text: string };
}

export function initialState(excludePath = DEFAULT_EXCLUDE_FILE): State {
  return {
    mode: 'browse',
    pane: 'tree',
    view: 'records',
    otherListCursor: 0,
    otherListTop: 0,
    recordRun: -1,
    treeCursor: 0,
    treeTop: 0,
    listCursor: 0,
    listTop: 0,
    recordEntry: -1,
    recordPane: 'chat',
    chatTop: 0,
    metaTop: 0,
    open: new Set(),
    recordMatchRow: -1,
    filter: 'all',
    hideDuplicates: false,
    order: 'file',
    overlay: null,
    prompt: null,
    search: null,
    pendingJump: 0,
    marked: new Set(),
    excludePath,
    message: null,
  };
}

// ------------------------------------------------------------------ keys

/** A key event with nothing pressed but the input itself. */
export const NO_KEY: Key = {
  upArrow: false,
  downArrow: false,
  leftArrow: false,
  rightArrow: false,
  pageDown: false,
  pageUp: false,
  home: false,
  end: false,
  return: false,
  escape: false,
  ctrl: false,
  shift: false,
  tab: false,
  backspace: false,
  delete: false,
  meta: false,
  super: false,
  hyper: false,
  capsLock: false,
  numLock: false,
};

/** One character of a chunk as ink would report it had it come alone. */
function charKey(c: string): { input: string; key: Key } {
  if (c === '\r' || c === '\n') return { input: '', key: { ...NO_KEY, return: true } };
  if (c === '\t') return { input: '', key: { ...NO_KEY, tab: true } };
  if (c === '\x7f') return { input: '', key: { ...NO_KEY, delete: true } };
  if (c === '\b') return { input: '', key: { ...NO_KEY, backspace: true } };
  if (c < ' ') return { input: String.fromCharCode(c.charCodeAt(0) + 96), key: { ...NO_KEY, ctrl: true } };
  return { input: c, key: { ...NO_KEY, shift: c >= 'A' && c <= 'Z' } };
}

/**
 * The keys in one chunk of terminal input. ink reports keys that reach it together (typed
 * fast, auto-repeated, pasted: `"\x7f\x7f\x7f"`, `"jjj"`, `"path\r"`) as one string; each
 * of them is a key of its own and must count, control characters included.
 */
export function splitKeys(input: string, key: Key): { input: string; key: Key }[] {
  const chars = Array.from(input);
  if (chars.length <= 1 || key.escape || key.meta || key.upArrow || key.downArrow || key.leftArrow || key.rightArrow || key.pageUp || key.pageDown || key.home || key.end) return [{ input, key }];
  return chars.map(charKey);
}

/** Turns a key press (as ink reports it) into an action. */
export function keyToAction(input: string, key: Key, state: Pick<State, 'prompt' | 'mode' | 'overlay'>): Action {
  if (state.prompt !== null) {
    if (key.return) return { type: 'promptSubmit' };
    if (key.escape || (key.ctrl && (input === 'c' || input === 'g'))) return { type: 'promptCancel' };
    if (key.backspace || key.delete) return { type: 'promptBackspace' };
    if (key.ctrl && input === 'u') return { type: 'promptInput', text: '\u0015' };
    if (key.ctrl || key.meta || key.tab || key.upArrow || key.downArrow || key.leftArrow || key.rightArrow) return { type: 'none' };
    return input === '' ? { type: 'none' } : { type: 'promptInput', text: input };
  }
  if (key.ctrl) {
    switch (input) {
      case 'c':
        return { type: 'quit' };
      case 'd':
        return { type: 'page', by: 0.5 };
      case 'u':
        return { type: 'page', by: -0.5 };
      case 'f':
        return { type: 'page', by: 1 };
      case 'b':
        return { type: 'page', by: -1 };
      case 'n':
        return { type: 'move', by: 1 };
      case 'p':
        return { type: 'move', by: -1 };
      default:
        return { type: 'none' };
    }
  }
  if (key.upArrow) return { type: 'move', by: -1 };
  if (key.downArrow) return { type: 'move', by: 1 };
  if (key.pageUp) return { type: 'page', by: -1 };
  if (key.pageDown) return { type: 'page', by: 1 };
  if (key.home) return { type: 'top' };
  if (key.end) return { type: 'bottom' };
  if (key.return || key.rightArrow) return { type: 'open' };
  if (key.escape || key.leftArrow) return { type: 'back' };
  if (key.tab) return { type: 'tab' };
  switch (input) {
    case 'j':
      return { type: 'move', by: 1 };
    case 'k':
      return { type: 'move', by: -1 };
    case 'g':
    case '<':
      return { type: 'top' };
    case 'G':
    case '>':
      return { type: 'bottom' };
    case ' ':
      return { type: 'page', by: 1 };
    case 'f':
      return { type: 'cycleFilter' };
    case 'b':
      return { type: 'page', by: -1 };
    case 'l':
      return { type: 'open' };
    case 'h':
      return { type: 'back' };
    case '/':
      return { type: 'searchPrompt' };
    case 'n':
      return { type: 'nextMatch', dir: 1 };
    case 'N':
      return { type: 'nextMatch', dir: -1 };
    case 'd':
      return { type: 'toggleDuplicates' };
    case 'o':
      return { type: 'toggleOrder' };
    case 'D':
      return { type: 'showGroup' };
    case 'x':
      return { type: 'mark' };
    case 'w':
      return { type: 'writePrompt' };
    case 'y':
      return { type: 'copy' };
    case 's':
      return { type: 'stats' };
    case '?':
      return { type: 'help' };
    case 'q':
      return { type: 'quit' };
    case 'e':
      return { type: 'toggleAllFolds' };
    case 'r':
      return { type: 'toggleRuns' };
    default:
      return { type: 'none' };
  }
}

// ------------------------------------------------------------------ helpers

function clamp(value: number, low: number, high: number): number {
  return Math.max(low, Math.min(high, value));
}

/** The first row shown so that `cursor` stays visible, moving as little as possible. */
export function follow(top: number, cursor: number, page: number, length: number): number {
  const rows = Math.max(1, page);
  let t = top;
  if (cursor < t) t = cursor;
  if (cursor >= t + rows) t = cursor - rows + 1;
  return clamp(t, 0, Math.max(0, length - rows));
}

/** Position of `entry` in a sorted list, else of the first entry after it (clamped). */
function positionIn(list: ArrayLike<number>, entry: number): number {
  let low = 0;
  let high = list.length;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (list[mid] < entry) low = mid + 1;
    else high = mid;
  }
  // A list in file order is sorted by entry; one by time is not: then the entry is looked for.
  if (list[low] !== entry) {
    for (let i = 0; i < list.length; i++) if (list[i] === entry) return i;
  }
  return clamp(low, 0, Math.max(0, list.length - 1));
}

/** The entry the keys act on: the open record, the group row, or the list row. */
export function currentEntry(state: State, ctx: Context): number {
  if (state.overlay?.kind === 'group') {
    const members = ctx.group(state.overlay.entry);
    return members[state.overlay.cursor]?.entry ?? -1;
  }
  if (state.mode === 'record') return state.recordEntry;
  if (state.view === 'runs') return -1;
  if (state.pane === 'list' && ctx.list.length > 0) return ctx.list[clamp(state.listCursor, 0, ctx.list.length - 1)];
  return -1;
}

const RUNS_ONLY = 'the runs view lists runs: Enter opens one, r shows the records';

function info(state: State, text: string, tone: Message['tone'] = 'info'): State {
  return { ...state, message: { text, tone } };
}

type Result = [State, Effect[]];

function moveCursor(state: State, ctx: Context, to: (cursor: number, length: number) => number, scrollBy?: number): State {
  const overlay = state.overlay;
  if (overlay?.kind === 'group') {
    const length = ctx.group(overlay.entry).length;
    const cursor = clamp(to(overlay.cursor, length), 0, Math.max(0, length - 1));
    return { ...state, overlay: { ...overlay, cursor, top: follow(overlay.top, cursor, ctx.page, length) } };
  }
  if (overlay?.kind === 'help') {
    const top = clamp(to(overlay.top, ctx.helpRows), 0, Math.max(0, ctx.helpRows - ctx.page));
    return { ...state, overlay: { ...overlay, top } };
  }
  if (overlay !== null) return state;
  if (state.mode === 'record') {
    const key = state.recordPane === 'chat' ? 'chatTop' : 'metaTop';
    const current = state[key];
    // Scrolling views move the top row; `to` sees the last row a cursor would sit on.
    const next = scrollBy !== undefined ? current + scrollBy : to(current, ctx.recordRows);
    return { ...state, [key]: clamp(next, 0, Math.max(0, ctx.recordRows - ctx.page)) };
  }
  if (state.pane === 'tree') {
    const treeCursor = clamp(to(state.treeCursor, ctx.treeLength), 0, Math.max(0, ctx.treeLength - 1));
    if (treeCursor === state.treeCursor) return state;
    return { ...state, treeCursor, treeTop: follow(state.treeTop, treeCursor, ctx.page, ctx.treeLength), listCursor: 0, listTop: 0, otherListCursor: 0, otherListTop: 0 };
  }
  const length = ctx.list.length;
  const listCursor = clamp(to(state.listCursor, length), 0, Math.max(0, length - 1));
  return { ...state, listCursor, listTop: follow(state.listTop, listCursor, ctx.page, length) };
}

/** Re-anchors the list cursor on the same entry (or the next one) after the list changed. */
function reanchor(state: State, ctx: Context, next: State): State {
  const entry =
    state.mode === 'record' ? state.recordEntry : ctx.list.length > 0 ? ctx.list[clamp(state.listCursor, 0, ctx.list.length - 1)] : -1;
  const list = ctx.listFor(next.treeCursor, next.filter, next.hideDuplicates, next.order);
  const listCursor = entry >= 0 ? positionIn(list, entry) : 0;
  return { ...next, listCursor, listTop: follow(next.listTop, listCursor, ctx.page, list.length) };
}

function findInList(state: State, ctx: Context, dir: 1 | -1): number {
  const n = ctx.list.length;
  const start = state.pane === 'list' ? state.listCursor : dir === 1 ? -1 : n;
  for (let step = 1; step <= n; step++) {
    const p = (((start + dir * step) % n) + n) % n;
    if (ctx.isMatch(ctx.list[p])) return p;
  }
  return -1;
}

/** Folds `open` plus those of `entry` that hold a match of the search (the same set when none is added). */
function unfoldMatches(open: ReadonlySet<string>, entry: number, regex: RegExp, ctx: Context): ReadonlySet<string> {
  const hidden = ctx.foldsMatching?.(entry, regex);
  if (hidden === undefined || [...hidden].every((fold) => open.has(fold))) return open;
  return new Set([...open, ...hidden]);
}

/** ` · record 9 of 924`: where the open record sits in the list the search went through. */
function recordPosition(state: State, ctx: Context): string {
  if (state.view === 'runs' || ctx.list.length === 0) return '';
  for (let p = 0; p < ctx.list.length; p++) if (ctx.list[p] === state.recordEntry) return ` · record ${p + 1} of ${ctx.list.length}`;
  return '';
}

function nextMatch(state: State, ctx: Context, dir: 1 | -1): State {
  if (state.search === null) return info(state, 'no search yet: press / to search', 'error');
  const source = state.search.source;
  if (state.mode === 'record') {
    // A match inside a folded block (reasoning, system prompt) is shown: its fold opens.
    const open = unfoldMatches(state.open, state.recordEntry, state.search.regex, ctx);
    const rows = ctx.matchRows(state.search.regex, open);
    const total = open === state.open ? ctx.recordRows : (ctx.chatRowsWith?.(open) ?? ctx.recordRows);
    if (rows.length === 0) return info({ ...state, open }, `/${source}/: no match in this record${recordPosition(state, ctx)}`);
    let row: number | undefined;
    let wrapped = false;
    if (dir === 1) {
      row = rows.find((r) => r > state.recordMatchRow);
      if (row === undefined) [row, wrapped] = [rows[0], true];
    } else {
      row = [...rows].reverse().find((r) => r < state.recordMatchRow || state.recordMatchRow < 0);
      if (row === undefined) [row, wrapped] = [rows[rows.length - 1], true];
    }
    const chatTop = clamp(row - 2, 0, Math.max(0, total - ctx.page));
    const index = rows.indexOf(row) + 1;
    return {
      ...state,
      open,
      recordPane: 'chat',
      recordMatchRow: row,
      chatTop,
      message: { text: `/${source}/: match ${index} of ${rows.length}${wrapped ? ' (wrapped)' : ''}${recordPosition(state, ctx)}`, tone: 'info' },
    };
  }
  const p = findInList(state, ctx, dir);
  if (p === -1) {
    if (!ctx.searchDone) return { ...state, pendingJump: dir, message: { text: `/${source}/: searching…`, tone: 'info' } };
    return { ...state, pendingJump: 0, message: { text: `/${source}/: no matching record here`, tone: 'error' } };
  }
  const moved: State = { ...state, pane: 'list', pendingJump: 0, listCursor: p, listTop: follow(state.listTop, p, ctx.page, ctx.list.length) };
  return { ...moved, message: { text: `/${source}/: record ${p + 1} of ${ctx.list.length}`, tone: 'info' } };
}

function openRecord(state: State, entry: number, run = -1): State {
  return {
    ...state,
    mode: 'record',
    overlay: null,
    recordEntry: entry,
    recordRun: run,
    recordPane: 'chat',
    chatTop: 0,
    metaTop: 0,
    open: new Set(),
    recordMatchRow: -1,
  };
}

function submitPrompt(state: State, ctx: Context): Result {
  const prompt = state.prompt!;
  const closed: State = { ...state, prompt: null };
  if (prompt.kind === 'write') {
    const path = prompt.text.trim() || state.excludePath;
    const entries = [...state.marked].sort((a, b) => a - b);
    return [{ ...closed, excludePath: path }, [{ type: 'write', path, entries }]];
  }
  if (prompt.text === '') {
    if (state.search === null) return [closed, []];
    // An empty search repeats the last one, as in less.
    return [nextMatch(closed, ctx, 1), []];
  }
  const compiled = compileSearch(prompt.text);
  if (compiled.regex === null) return [info(closed, `invalid regular expression /${prompt.text}/: ${compiled.error}`, 'error'), []];
  const searched: State = { ...closed, search: { source: prompt.text, regex: compiled.regex }, recordMatchRow: -1 };
  if (state.mode === 'record') return [nextMatch(searched, ctx, 1), [{ type: 'search', regex: compiled.regex }]];
  // The list search runs in the background; the jump happens when it finds something.
  return [
    { ...searched, pendingJump: 1, message: { text: `/${prompt.text}/: searching…`, tone: 'info' } },
    [{ type: 'search', regex: compiled.regex }],
  ];
}

// ------------------------------------------------------------------ reducer

export function reduce(state: State, action: Action, ctx: Context): Result {
  if (action.type === 'none') return [state, []];
  if (action.type === 'addMarks') {
    const marked = new Set(state.marked);
    for (const entry of action.entries) marked.add(entry);
    return [{ ...state, marked }, []];
  }
  if (action.type === 'message') return [info(state, action.text, action.tone ?? 'info'), []];
  if (state.prompt !== null) {
    switch (action.type) {
      case 'promptInput': {
        if (action.text === '\u0015') return [{ ...state, prompt: { ...state.prompt, text: '' } }, []];
        // Control characters never reach the text (a chunk's keys come here one by one).
        // eslint-disable-next-line no-control-regex
        const text = action.text.replace(/[\x00-\x1f\x7f]/g, '');
        return [{ ...state, prompt: { ...state.prompt, text: state.prompt.text + text } }, []];
      }
      case 'promptBackspace':
        return [{ ...state, prompt: { ...state.prompt, text: Array.from(state.prompt.text).slice(0, -1).join('') } }, []];
      case 'promptCancel':
        return [{ ...state, prompt: null, message: null }, []];
      case 'promptSubmit':
        return submitPrompt(state, ctx);
      default:
        return [state, []];
    }
  }
  // Any key clears the last message, unless the action sets one.
  const s: State = state.message === null ? state : { ...state, message: null };
  const overlay = s.overlay;
  switch (action.type) {
    case 'move':
      return [moveCursor(s, ctx, (c) => c + action.by, s.mode === 'record' && overlay === null ? action.by : undefined), []];
    case 'page': {
      const by = Math.max(1, Math.round(ctx.page * Math.abs(action.by))) * Math.sign(action.by);
      return [moveCursor(s, ctx, (c) => c + by, s.mode === 'record' && overlay === null ? by : undefined), []];
    }
    case 'top':
      return [moveCursor(s, ctx, () => 0, s.mode === 'record' && overlay === null ? -Infinity : undefined), []];
    case 'bottom':
      return [moveCursor(s, ctx, (_, length) => length - 1, s.mode === 'record' && overlay === null ? Infinity : undefined), []];
    case 'quit':
      if (overlay !== null) return [{ ...s, overlay: null }, []];
      return [s, [{ type: 'quit' }]];
    case 'help':
      return [{ ...s, overlay: overlay?.kind === 'help' ? null : { kind: 'help', top: 0 } }, []];
    case 'stats':
      return [{ ...s, overlay: overlay?.kind === 'stats' ? null : { kind: 'stats' } }, []];
    default:
      break;
  }
  if (overlay !== null) {
    if (overlay.kind === 'group') {
      if (action.type === 'open') {
        const member = ctx.group(overlay.entry)[overlay.cursor];
        return [member === undefined ? s : openRecord(s, member.entry, s.recordRun), []];
      }
      if (action.type === 'back' || action.type === 'showGroup') return [{ ...s, overlay: null }, []];
      if (action.type === 'mark' || action.type === 'copy') return reduceEntryAction(s, action, ctx);
      return [s, []];
    }
    // Help and stats close on the usual "back" keys.
    if (action.type === 'back' || action.type === 'open') return [{ ...s, overlay: null }, []];
    return [s, []];
  }
  switch (action.type) {
    case 'open': {
      if (s.mode === 'record') {
        if (s.recordPane !== 'chat') return [s, []];
        const fold = ctx.folds.find((f) => f.row >= s.chatTop && f.row < s.chatTop + ctx.page) ?? ctx.folds.find((f) => f.row >= s.chatTop);
        if (fold === undefined) return [info(s, 'nothing to unfold here'), []];
        const open = new Set(s.open);
        if (open.has(fold.id)) open.delete(fold.id);
        else open.add(fold.id);
        return [{ ...s, open }, []];
      }
      if (s.pane === 'tree') return [{ ...s, pane: 'list' }, []];
      if (s.view === 'runs') {
        if (ctx.runsReady !== true || ctx.runOpen === undefined) return [info(s, 'grouping runs…'), []];
        if (ctx.list.length === 0) return [info(s, 'no runs here'), []];
        const run = ctx.list[clamp(s.listCursor, 0, ctx.list.length - 1)];
        const opened = ctx.runOpen(run);
        if (opened.entry < 0) return [info(s, 'this run has no record to show', 'error'), []];
        return [info(openRecord(s, opened.entry, run), opened.text), []];
      }
      if (ctx.list.length === 0) return [info(s, 'no records to open here'), []];
      const p = clamp(s.listCursor, 0, ctx.list.length - 1);
      const opened = openRecord(s, ctx.list[p]);
      if (s.search === null) return [opened, []];
      // Opened from a search: what holds a match is unfolded, and the status keeps the place.
      const open = unfoldMatches(opened.open, opened.recordEntry, s.search.regex, ctx);
      return [info({ ...opened, open }, `/${s.search.source}/: record ${p + 1} of ${ctx.list.length}; n goes to its matches`), []];
    }
    case 'back': {
      if (s.mode === 'record') {
        const list = ctx.list;
        let listCursor = s.listCursor;
        const shown = s.view === 'runs' ? s.recordRun : s.recordEntry;
        for (let p = 0; p < list.length; p++) {
          if (list[p] === shown) {
            listCursor = p;
            break;
          }
        }
        return [{ ...s, mode: 'browse', pane: 'list', listCursor, listTop: follow(s.listTop, listCursor, ctx.page, list.length) }, []];
      }
      if (s.pane === 'list') return [{ ...s, pane: 'tree' }, []];
      const parent = ctx.parentOf(s.treeCursor);
      if (parent === s.treeCursor) return [s, []];
      return [{ ...s, treeCursor: parent, treeTop: follow(s.treeTop, parent, ctx.page, ctx.treeLength), listCursor: 0, listTop: 0, otherListCursor: 0, otherListTop: 0 }, []];
    }
    case 'tab':
      if (s.mode === 'record') return [{ ...s, recordPane: s.recordPane === 'chat' ? 'meta' : 'chat' }, []];
      return [{ ...s, pane: s.pane === 'tree' ? 'list' : 'tree' }, []];
    case 'toggleRuns': {
      if (s.mode === 'record') return [info(s, 'r switches the list between records and runs: go back to the list first (h)'), []];
      const view = s.view === 'runs' ? 'records' : 'runs';
      const next: State = {
        ...s,
        view,
        listCursor: s.otherListCursor,
        listTop: s.otherListTop,
        otherListCursor: s.listCursor,
        otherListTop: s.listTop,
        recordRun: -1,
      };
      return [info(next, view === 'runs' ? 'runs: one row per run; Enter opens a run as one conversation; r shows records again' : 'records'), []];
    }
    case 'searchPrompt':
      if (s.view === 'runs' && s.mode === 'browse') return [info(s, RUNS_ONLY), []];
      return [{ ...s, prompt: { kind: 'search', text: '' } }, []];
    case 'nextMatch':
      if (s.view === 'runs' && s.mode === 'browse') return [info(s, RUNS_ONLY), []];
      return [nextMatch(s, ctx, action.dir), []];
    case 'cycleFilter':
      if (s.view === 'runs' && s.mode === 'browse') {
        // Runs pass the same status filter as records (a run's status: ok, exception, no_output).
        const filter = STATUS_FILTERS[(STATUS_FILTERS.indexOf(s.filter) + 1) % STATUS_FILTERS.length];
        return [info({ ...s, filter, listCursor: 0, listTop: 0 }, `showing ${filter === 'all' ? 'all runs' : `${filter} runs`}`), []];
      }
      break;
    case 'toggleDuplicates':
      if (s.view === 'runs' && s.mode === 'browse') return [info(s, RUNS_ONLY), []];
      break;
    default:
      break;
  }
  switch (action.type) {
    case 'cycleFilter': {
      const filter = STATUS_FILTERS[(STATUS_FILTERS.indexOf(s.filter) + 1) % STATUS_FILTERS.length];
      const next = reanchor(s, ctx, { ...s, filter });
      return [info(next, `showing ${filter === 'all' ? 'all records' : `${filter} records`}`), []];
    }
    case 'toggleOrder': {
      if (s.view === 'runs' && s.mode === 'browse') return [info(s, 'runs are listed by start time; o orders the records list'), []];
      if (s.mode !== 'browse') return [s, []];
      const next = reanchor(s, ctx, { ...s, order: s.order === 'file' ? 'time' : 'file' });
      return [info(next, next.order === 'time' ? 'records by recorded time, oldest first (o: file order)' : 'records in file order, as recorded (o: by time)'), []];
    }
    case 'toggleDuplicates': {
      const next = reanchor(s, ctx, { ...s, hideDuplicates: !s.hideDuplicates });
      return [info(next, next.hideDuplicates ? 'duplicates hidden (the record a dedupe keeps stays)' : 'duplicates shown'), []];
    }
    case 'toggleAllFolds': {
      if (s.mode !== 'record') return [s, []];
      const anyClosed = ctx.folds.some((f) => !s.open.has(f.id));
      return [{ ...s, open: anyClosed ? new Set(ctx.folds.map((f) => f.id)) : new Set() }, []];
    }
    case 'showGroup': {
      const entry = currentEntry(s, ctx);
      if (entry < 0) return [info(s, s.view === 'runs' ? RUNS_ONLY : 'select a record first', 'error'), []];
      const members = ctx.group(entry);
      // A group of one is no group: say so rather than open a panel listing the record alone.
      if (members.length <= 1) {
        const why = ctx.isDamaged(entry) ? 'a damaged line has no inputs_hash or config_hash to compare' : 'no other record of this module has the same hashes';
        return [info(s, `no duplicates: ${why}`), []];
      }
      const cursor = Math.max(0, members.findIndex((m) => m.entry === entry));
      return [{ ...s, overlay: { kind: 'group', entry, cursor, top: follow(0, cursor, ctx.page, members.length) } }, []];
    }
    case 'writePrompt':
      return [{ ...s, prompt: { kind: 'write', text: s.excludePath } }, []];
    case 'mark':
    case 'copy':
      return reduceEntryAction(s, action, ctx);
    default:
      return [s, []];
  }
}

function reduceEntryAction(s: State, action: { type: 'mark' | 'copy' }, ctx: Context): Result {
  const entry = currentEntry(s, ctx);
  if (entry < 0) return [info(s, s.view === 'runs' && s.mode === 'browse' ? RUNS_ONLY : 'select a record first', 'error'), []];
  if (ctx.isDamaged(entry)) return [info(s, 'a damaged line has no call_id', 'error'), []];
  if (ctx.hasCallId?.(entry) === false) return [info(s, 'this record recorded no call_id: it cannot be listed for exclusion or copied', 'error'), []];
  if (action.type === 'copy') return [s, [{ type: 'copy', entry }]];
  const marked = new Set(s.marked);
  const wasMarked = marked.delete(entry);
  if (!wasMarked) marked.add(entry);
  const count = `${marked.size} marked`;
  return [info({ ...s, marked }, wasMarked ? `unmarked (${count})` : `marked for exclusion (${count}; w writes the list)`), []];
}
