/**
 * The browser's screen rows as plain data (styled segments), with no React: the components
 * draw them with ink, and the pre-paint (prepaint.ts) writes them before ink has loaded.
 */
import path from 'node:path';
import { STATUS_COLOR, STATUS_GLYPH, highlight, type Seg } from './chat-lines.js';
import type { Run } from '../runs/runs.js';
import type { Counts, IndexStore, StatusFilter, TreeNode } from './index-store.js';
import type { State } from './state.js';
import { formatBytes, formatCount, formatUsd, formatDuration, formatShortTime, formatTokens, padEnd, padStart, rowSafe, sanitize, textWidth, truncate } from './text.js';

/** Fits segments into `width` cells: cuts the overflow (with `…`) and pads with spaces. */
export function fitSegs(segs: readonly Seg[], width: number): Seg[] {
  const out: Seg[] = [];
  let used = 0;
  for (const raw of segs) {
    const text = rowSafe(raw.text);
    const seg = text === raw.text ? raw : { ...raw, text };
    if (seg.text === '') continue;
    const w = textWidth(seg.text);
    if (used + w <= width) {
      out.push(seg);
      used += w;
      continue;
    }
    const room = width - used;
    if (room > 0) {
      out.push({ ...seg, text: truncate(seg.text, room) });
      used += textWidth(out[out.length - 1].text);
    }
    break;
  }
  if (used < width) out.push({ text: ' '.repeat(width - used) });
  return out;
}

/** A list row as text: status glyph, duplicate flag, then the `MM-DD HH:MM:SS` time column. */
export const RECORD_ROW = /[✓✗∅]. \d\d-\d\d \d\d:\d\d:\d\d/;

/** The selected row of a pane without the focus: bold and underlined instead of inverted. */
export function unfocusedSelection(row: Seg[]): Seg[] {
  return row.map((s) => ({ ...s, bold: true, underline: true }));
}

// ------------------------------------------------------------------ tree

/**
 * A number per status that has any (` ✓22 ✗1 ⚠1`), and the ok count whenever there are
 * records (` ✓0 ✗3`: a missing ✓ would read as "unknown"); a glyph never shows without its number.
 */
export function badges(counts: Counts): Seg[] {
  const segs: Seg[] = [];
  const add = (n: number, glyph: string, color: string): void => {
    if (n > 0) segs.push({ text: ` ${glyph}${n}`, color });
  };
  if (counts.records > 0) segs.push({ text: ` ✓${counts.ok}`, color: 'green' });
  add(counts.exception, '✗', 'red');
  add(counts.no_output, '∅', 'yellow');
  add(counts.duplicates, '≡', 'cyan');
  add(counts.damaged, '⚠', 'magenta');
  return segs;
}

const MIN_NAME = 12;

export function treeRow(node: TreeNode, counts: Counts, width: number): Seg[] {
  const indent = node.kind === 'module' ? '  ' : '';
  const icon = node.kind === 'all' ? '◆ ' : node.kind === 'program' ? '▾ ' : '';
  const count: Seg = { text: ` ${counts.records}`, dim: true };
  const ok: Seg = { text: ` ✓${counts.ok}`, color: 'green' };
  const tailWidth = (segs: Seg[]): number => segs.reduce((w, s) => w + textWidth(s.text), 0);
  const nameRoom = (segs: Seg[]): number => width - indent.length - icon.length - tailWidth(segs);
  // Narrow panes shed what the rest still tells, never the ok count: first the record count
  // (ok, exception and no_output add up to it), then the other statuses (the count minus ok
  // says how many are not ok), before names get cut short.
  const tails: Seg[][] = [[count, ...badges(counts)], badges(counts), [count, ok]];
  const tail = tails.find((t) => t.length > 0 && nameRoom(t) >= MIN_NAME) ?? tails[2];
  const room = Math.max(1, nameRoom(tail));
  const label = truncate(node.label, room);
  const pad = ' '.repeat(Math.max(0, room - textWidth(label)));
  return [
    { text: indent + icon },
    { text: label, bold: node.kind !== 'module' },
    { text: pad },
    ...tail,
  ];
}

// ------------------------------------------------------------------ list

export interface Column {
  name: string;
  title: string;
  width: number;
  align: 'left' | 'right';
  /** Shown only when the message column keeps at least this many cells. */
  minPreview: number;
}

const OPTIONAL: Column[] = [
  { name: 'model', title: 'model', width: 13, align: 'left', minPreview: 16 },
  { name: 'tokens', title: 'tokens', width: 6, align: 'right', minPreview: 16 },
  // `≈$0.000025` whole: at 8 cells a small cost lost its last digits (`$0.0000…`).
  { name: 'cost', title: 'cost', width: 10, align: 'right', minPreview: 30 },
  { name: 'duration', title: 'duration', width: 8, align: 'right', minPreview: 30 },
];
/** Mark, status glyph and duplicate flag, then the time. */
const FIXED = 3 + 1 + 14;

/** The columns that fit in `width`, keeping enough room for the message. */
export function listColumns(width: number): Column[] {
  const columns: Column[] = [];
  let used = FIXED;
  for (const column of OPTIONAL) {
    if (used + column.width + 1 + 1 + column.minPreview > width) break;
    columns.push(column);
    used += column.width + 1;
  }
  return columns;
}

/** The cost as a whole amount, or `<$0.0001` when the amount would not fit: never a cut number. */
export function costCell(usd: number, estimated: boolean, width: number): string {
  const full = formatUsd(usd, estimated);
  return textWidth(full) <= width ? full : formatUsd(usd, estimated, true);
}

function cell(text: string, column: Column): string {
  return column.align === 'right' ? padStart(text, column.width) : padEnd(text, column.width);
}

function shortModel(model: string): string {
  // `openai/gpt-4o-mini` → `gpt-4o-mini`: the provider rarely helps in a narrow column.
  const slash = model.lastIndexOf('/');
  return slash >= 0 ? model.slice(slash + 1) : model;
}

export function entryRow(store: IndexStore, entry: number, columns: Column[], marked: boolean, regex: RegExp | null, matched: boolean): Seg[] {
  const info = store.info(entry);
  const segs: Seg[] = [
    { text: marked ? 'x' : ' ', color: 'red', bold: true },
    { text: STATUS_GLYPH[info.status], color: STATUS_COLOR[info.status] },
    { text: info.duplicate ? '≡' : ' ', color: 'cyan' },
    { text: ' ' },
  ];
  if (info.status === 'damaged') {
    // No time, model or usage: the columns hold where the line is and why it is damaged.
    segs.push({ text: padEnd(`line ${info.line}`, 14), color: 'magenta' });
    segs.push({ text: ` ${path.basename(info.file.path)}:${info.line}`, color: 'magenta', bold: true });
    segs.push({ text: ` ${sanitize(info.damagedReason ?? '', true)}`, color: 'magenta' });
    return segs;
  }
  segs.push({ text: padEnd(formatShortTime(info.timestamp), 14) });
  for (const column of columns) {
    let text = '';
    if (column.name === 'model') text = shortModel(info.model);
    else if (column.name === 'tokens') text = formatTokens(info.tokens);
    else if (column.name === 'cost') text = costCell(info.cost, info.costEstimated, column.width);
    else if (column.name === 'duration') text = formatDuration(info.duration);
    segs.push({ text: ' ' }, { text: cell(sanitize(text, true), column), dim: column.name !== 'model' });
  }
  const row = { segs: [{ text: ' ' }, { text: sanitize(store.preview(entry), true) }] };
  const shown = regex !== null && matched ? highlight(row, regex) : row;
  segs.push(...shown.segs);
  return segs;
}

export function headerSegs(columns: Column[]): Seg[] {
  const segs: Seg[] = [{ text: '    ' + padEnd('time (UTC)', 14) }];
  for (const column of columns) segs.push({ text: ' ' + cell(column.title, column) });
  segs.push({ text: ' first user message' });
  return segs.map((s) => ({ ...s, dim: true, bold: true }));
}

export function listTitleSegs(store: IndexStore, nodeIndex: number, shown: number, filter: StatusFilter, hideDuplicates: boolean, focused: boolean): Seg[] {
  const node = store.tree[nodeIndex];
  const counts = store.counts(nodeIndex);
  const title = node.kind === 'module' ? `${store.modules[node.id].program}/${node.label}` : node.label;
  const filters: string[] = [];
  if (filter !== 'all') filters.push(filter);
  if (hideDuplicates) filters.push('no dups');
  // Records and damaged lines are counted apart, as in the title bar and every command.
  const damagedShown = filter === 'all' ? counts.damaged : 0;
  const records = shown - damagedShown;
  const recordsText = `${formatCount(records)}${filters.length > 0 ? ` of ${formatCount(counts.records)}` : ''} record${counts.records === 1 && filters.length === 0 ? '' : 's'}`;
  const damagedText = damagedShown > 0 ? ` + ${formatCount(damagedShown)} damaged line${damagedShown === 1 ? '' : 's'}` : '';
  return [
    { text: ` ${title}`, bold: true },
    { text: `  ${recordsText}${damagedText}${filters.length > 0 ? ` (${filters.join(', ')})` : ''}`, dim: !focused },
    ...badges(counts),
  ];
}

// ------------------------------------------------------------------ runs

const RUN_GLYPH: Record<Run['status'], [string, string]> = {
  ok: ['✓', 'green'],
  exception: ['✗', 'red'],
  no_output: ['∅', 'yellow'],
  running: ['…', 'blue'],
};

/** Cost the recorder reported plus what the price table estimates (`≈` when any part is), `+?` when some steps are unpriced. */
function runCost(run: Run): string {
  const { reportedUsd, estimatedUsd, unpricedSteps } = run.cost;
  if (reportedUsd === null && estimatedUsd === null) return '?';
  const total = (reportedUsd ?? 0) + (estimatedUsd ?? 0);
  return `${formatUsd(total, estimatedUsd !== null)}${unpricedSteps > 0 ? '+?' : ''}`;
}

function runTokens(run: Run): string {
  if (run.tokens.stepsWithoutUsage === run.steps) return '?';
  return formatTokens(run.tokens.total) + (run.tokens.stepsWithoutUsage > 0 ? '+' : '');
}

/** A column of the runs view: its title, how its cells align, and how they are styled. */
interface RunColumn {
  title: string;
  align: 'left' | 'right';
  style: Pick<Seg, 'dim' | 'bold'>;
  cell(run: Run): string;
}

const RUN_COLUMNS: RunColumn[] = [
  { title: 'started (UTC)', align: 'left', style: {}, cell: (run) => formatShortTime(run.startedAt ?? NaN) },
  { title: 'steps', align: 'right', style: {}, cell: (run) => String(run.steps) },
  { title: 'tokens', align: 'right', style: { dim: true }, cell: runTokens },
  { title: 'cost', align: 'right', style: { dim: true }, cell: runCost },
  { title: 'duration', align: 'right', style: { dim: true }, cell: (run) => formatDuration(run.duration ?? NaN) },
  { title: 'program', align: 'left', style: { bold: true }, cell: (run) => sanitize(run.program, true) },
  {
    title: 'source',
    align: 'left',
    style: { dim: true },
    cell: (run) => (run.recorderStatus !== null && run.recorderStatus !== run.status ? `${run.source} ${run.recorderStatus}` : run.source),
  },
];
/** The last column takes what is left of the row, so it is never padded. */
const RUN_MODULES: RunColumn = { title: 'modules', align: 'left', style: { dim: true }, cell: (run) => sanitize(run.modules.join(', '), true) };
/** A cell of the program column never pushes the ones after it further than this. */
const MAX_PROGRAM = 32;

/** Cells of the runs view a column at a time, as wide as the widest cell of the runs listed (or the title). */
export function runColumnWidths(runs: readonly Run[], list: ArrayLike<number>): number[] {
  const widths = RUN_COLUMNS.map((column) => textWidth(column.title));
  for (let p = 0; p < list.length; p++) {
    const run = runs[list[p]];
    if (run === undefined) continue;
    RUN_COLUMNS.forEach((column, c) => {
      widths[c] = Math.max(widths[c], textWidth(column.cell(run)));
    });
  }
  const program = RUN_COLUMNS.findIndex((column) => column.title === 'program');
  widths[program] = Math.min(widths[program], MAX_PROGRAM);
  return widths;
}

function runCell(text: string, column: RunColumn, width: number): string {
  return column.align === 'right' ? padStart(text, width) : padEnd(text, width);
}

/** A row of the runs view: status, then a cell per column, each as wide as its column. */
export function runRow(run: Run, widths: readonly number[]): Seg[] {
  const [glyph, color] = RUN_GLYPH[run.status];
  const segs: Seg[] = [{ text: '  ' }, { text: glyph, color }];
  RUN_COLUMNS.forEach((column, c) => segs.push({ text: ' ' }, { text: runCell(column.cell(run), column, widths[c]), ...column.style }));
  segs.push({ text: ' ' }, { text: RUN_MODULES.cell(run), ...RUN_MODULES.style });
  return segs;
}

export function runHeaderSegs(widths: readonly number[]): Seg[] {
  const cells = RUN_COLUMNS.map((column, c) => runCell(column.title, column, widths[c]));
  return [{ text: `    ${cells.join(' ')} ${RUN_MODULES.title}`, dim: true, bold: true }];
}

export function runsTitleSegs(store: IndexStore, nodeIndex: number, shown: number, focused: boolean, filter: StatusFilter = 'all'): Seg[] {
  const node = store.tree[nodeIndex];
  const title = node === undefined ? '' : node.kind === 'module' ? `${store.modules[node.id].program}/${node.label}` : node.label === 'all records' ? 'all' : node.label;
  const ready = store.runs !== null;
  return [
    { text: ` runs of ${title}`, bold: true },
    { text: ready ? `  ${formatCount(shown)} run${shown === 1 ? '' : 's'}${filter !== 'all' ? ` (${filter})` : ''}` : '  grouping…', dim: !focused },
    { text: '   Enter opens a run as one conversation, r records', dim: true },
  ];
}

// ------------------------------------------------------------------ frame

function progressBar(fraction: number, width: number): string {
  const filled = Math.round(Math.max(0, Math.min(1, fraction)) * width);
  return '█'.repeat(filled) + '░'.repeat(width - filled);
}

export function titleSegs(store: IndexStore, state: Pick<State, 'filter' | 'hideDuplicates' | 'marked'> & Partial<Pick<State, 'view'>>, roots: string): Seg[] {
  const p = store.progress;
  const counts = store.counts(0);
  const segs: Seg[] = [
    { text: ' traces browse ', bold: true },
    { text: ` ${roots} `, dim: true },
    { text: ` ${formatCount(counts.records)} records` },
  ];
  if (!p.done) {
    const fraction = p.bytesTotal > 0 ? p.bytesDone / p.bytesTotal : 0;
    segs.push({ text: `  indexing ${progressBar(fraction, 10)} ${Math.floor(fraction * 100)}% of ${formatBytes(p.bytesTotal)}`, color: 'yellow' });
  } else {
    segs.push({ text: `  ${store.allFiles.length} files, ${formatBytes(p.bytesTotal)}`, dim: true });
  }
  const flags: string[] = [];
  if (state.filter !== 'all') flags.push(`filter ${state.filter}`);
  // The runs view has no duplicates to hide: the flag would promise what the list does not do.
  if (state.hideDuplicates && state.view !== 'runs') flags.push('dups hidden');
  if (state.marked.size > 0) flags.push(`${state.marked.size} marked`);
  if (flags.length > 0) segs.push({ text: `  [${flags.join(' · ')}]`, color: 'cyan' });
  return segs;
}

/** A key and what it does, as the footer shows it; `rank` 1 is kept longest when the footer is short of room. */
export interface Hint {
  keys: string;
  label: string;
  rank: number;
}

const hint = (keys: string, label: string, rank: number): Hint => ({ keys, label, rank });

/** Always shown, last: how to see every key, and how to leave. */
const PINNED: Hint[] = [hint('?', 'keys', 0), hint('q', 'quit', 0)];

/** The keys of the current view, in the order the footer shows them (before the pinned `? keys  q quit`). */
export function viewHints(state: State): Hint[] {
  if (state.prompt !== null) return [];
  if (state.overlay?.kind === 'group') return [hint('j/k', 'move', 1), hint('Enter', 'open', 1), hint('x', 'mark', 2), hint('y', 'copy', 3), hint('Esc', 'close', 1)];
  if (state.overlay !== null) return [hint('j/k', 'scroll', 1), hint('Esc', 'close', 1), hint('q', 'close', 2)];
  if (state.mode === 'record') {
    const back = state.recordRun >= 0 ? hint('h', 'runs', 1) : hint('h', 'back', 1);
    return [
      hint('j/k', 'scroll', 1),
      hint('Enter', 'unfold', 2),
      hint('e', 'all folds', 3),
      // Where Tab goes, not where the user is: the other pane's name.
      hint('Tab', state.recordPane === 'chat' ? 'metadata' : 'chat', 2),
      back,
      hint('/ n N', 'search', 2),
      ...(state.recordRun >= 0 ? [] : [hint('D', 'dups', 4)]),
      hint('x', 'mark', 3),
      hint('w', 'write', 4),
      hint('y', 'copy', 4),
    ];
  }
  if (state.view === 'runs') {
    return state.pane === 'tree'
      ? [hint('j/k', 'move', 1), hint('Enter', 'runs', 1), hint('Tab', 'runs list', 3), hint('r', 'records', 2), hint('f', 'filter', 3), hint('s', 'stats', 4)]
      : [hint('j/k', 'move', 1), hint('Enter', 'open run', 1), hint('h', 'tree', 2), hint('r', 'records', 2), hint('f', 'filter', 3), hint('w', 'write', 4), hint('s', 'stats', 4)];
  }
  if (state.pane === 'tree') {
    return [hint('j/k', 'move', 1), hint('Enter', 'records', 1), hint('Tab', 'records list', 3), hint('r', 'runs', 2), hint('/', 'search', 2), hint('f', 'filter', 3), hint('d', 'dups', 4), hint('s', 'stats', 4)];
  }
  return [
    hint('j/k', 'move', 1),
    hint('Enter', 'open', 1),
    hint('h', 'tree', 2),
    hint('r', 'runs', 3),
    hint('/ n N', 'search', 2),
    hint('f', 'filter', 3),
    hint('d', 'dups', 4),
    hint('o', state.order === 'file' ? 'by time' : 'file order', 4),
    hint('D', 'group', 4),
    hint('x', 'mark', 2),
    hint('w', 'write', 3),
    hint('y', 'copy', 4),
    hint('s', 'stats', 4),
  ];
}

const hintText = (hints: readonly Hint[]): string => hints.map((h) => `${h.keys} ${h.label}`).join('  ');

/**
 * The footer line for `width` cells: the view's keys that fit, most needed first (by rank,
 * then in order), shown in their usual order and always followed by `? keys  q quit`, which
 * lists every key and leaves. Overlays close with Esc or q, so they pin nothing.
 */
export function keyHints(state: State, width = Infinity): string {
  if (state.prompt !== null) return '';
  const hints = viewHints(state);
  const pinned = state.overlay === null ? PINNED : [];
  // One leading space, as every row of the browser starts.
  const room = width - 1;
  const kept = new Set<Hint>();
  const byNeed = hints.map((h, i) => ({ h, i })).sort((a, b) => a.h.rank - b.h.rank || a.i - b.i);
  for (const { h } of byNeed) {
    const trial = hints.filter((x) => kept.has(x) || x === h);
    if (textWidth(hintText([...trial, ...pinned])) > room) break;
    kept.add(h);
  }
  return hintText([...hints.filter((h) => kept.has(h)), ...pinned]);
}

