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

export function badges(counts: Counts, withOk: boolean, glyphsOnly = false): Seg[] {
  const segs: Seg[] = [];
  const add = (n: number, glyph: string, color: string): void => {
    if (n > 0) segs.push({ text: glyphsOnly ? glyph : ` ${glyph}${n}`, color });
  };
  if (withOk) add(counts.ok, '✓', 'green');
  add(counts.exception, '✗', 'red');
  add(counts.no_output, '∅', 'yellow');
  add(counts.duplicates, '≡', 'cyan');
  add(counts.damaged, '⚠', 'magenta');
  if (glyphsOnly && segs.length > 0) segs.unshift({ text: ' ' });
  return segs;
}

const MIN_NAME = 12;

export function treeRow(node: TreeNode, counts: Counts, width: number): Seg[] {
  const indent = node.kind === 'module' ? '  ' : '';
  const icon = node.kind === 'all' ? '◆ ' : node.kind === 'program' ? '▾ ' : '';
  const count: Seg = { text: ` ${counts.records}`, dim: true };
  let tail = [count, ...badges(counts, true)];
  const tailWidth = (segs: Seg[]): number => segs.reduce((w, s) => w + textWidth(s.text), 0);
  const nameRoom = (segs: Seg[]): number => width - indent.length - icon.length - tailWidth(segs);
  // Narrow panes lose the ok badge first, then the numbers, then the badges, before names get cut short.
  if (nameRoom(tail) < MIN_NAME) tail = [count, ...badges(counts, false)];
  if (nameRoom(tail) < MIN_NAME) tail = [count, ...badges(counts, false, true)];
  if (nameRoom(tail) < MIN_NAME) tail = [count];
  const room = Math.max(1, nameRoom(tail));
  let label = node.label;
  if (textWidth(label) > room) label = `${label.slice(0, Math.max(1, room - 1))}…`;
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
  { name: 'cost', title: 'cost', width: 8, align: 'right', minPreview: 30 },
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
    else if (column.name === 'cost') text = formatUsd(info.cost, info.costEstimated);
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
    ...badges(counts, true),
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

/** A row of the runs view: status, start, steps, tokens, cost, duration, program (source, modules). */
export function runRow(run: Run): Seg[] {
  const [glyph, color] = RUN_GLYPH[run.status];
  const status = run.recorderStatus !== null && run.recorderStatus !== run.status ? ` ${run.recorderStatus}` : '';
  return [
    { text: '  ' },
    { text: glyph, color },
    { text: ' ' },
    { text: padEnd(formatShortTime(run.startedAt ?? NaN), 14) },
    { text: ` ${padStart(String(run.steps), 5)}` },
    { text: ` ${padStart(runTokens(run), 7)}`, dim: true },
    { text: ` ${padStart(runCost(run), 9)}`, dim: true },
    { text: ` ${padStart(formatDuration(run.duration ?? NaN), 8)}`, dim: true },
    { text: ` ${sanitize(run.program, true)}`, bold: true },
    { text: `  ${run.source}${status}  ${sanitize(run.modules.join(', '), true)}`, dim: true },
  ];
}

export function runHeaderSegs(): Seg[] {
  const text = `    ${padEnd('started (UTC)', 14)} ${padStart('steps', 5)} ${padStart('tokens', 7)} ${padStart('cost', 9)} ${padStart('duration', 8)} program  source  modules`;
  return [{ text, dim: true, bold: true }];
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

export function keyHints(state: State): string {
  if (state.prompt !== null) return '';
  if (state.overlay?.kind === 'group') return 'j/k move  Enter open  x mark  y copy  Esc close';
  if (state.overlay !== null) return 'j/k scroll  Esc close  q close';
  if (state.mode === 'record' && state.recordRun >= 0) return 'j/k scroll  Enter unfold  e all folds  Tab metadata  h runs  / n N search  x mark  w write  y copy  ? keys  q quit';
  if (state.view === 'runs') return state.pane === 'tree' ? 'j/k move  Enter runs  Tab pane  r records  f filter  s stats  ? keys  q quit' : 'j/k move  Enter open run  h tree  r records  f filter  w write  s stats  ? keys  q quit';
  if (state.mode === 'record') return 'j/k scroll  Enter unfold  e all folds  Tab metadata  h back  / n N search  D dups  x mark  w write  y copy  ? keys  q quit';
  if (state.pane === 'tree') return 'j/k move  Enter records  Tab pane  r runs  / search  f filter  d dups  s stats  ? keys  q quit';
  return 'j/k move  Enter open  h tree  r runs  / n N search  f filter  d dups  D group  x mark  w write  y copy  s stats  ? keys  q quit';
}

