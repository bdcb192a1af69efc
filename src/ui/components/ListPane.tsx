/** The right pane: the records of the selected program or module, one row each. */
import { Box } from 'ink';
import path from 'node:path';
import { STATUS_COLOR, STATUS_GLYPH, highlight, type Seg } from '../chat-lines.js';
import type { IndexStore, StatusFilter, TreeNode } from '../index-store.js';
import { formatCost, formatDuration, formatShortTime, formatTokens, padEnd, padStart, sanitize } from '../text.js';
import { Line } from './Line.js';
import { badges } from './TreePane.js';

interface Column {
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
  { name: 'duration', title: 'time', width: 6, align: 'right', minPreview: 30 },
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
    segs.push({ text: padEnd(`line ${info.line}`, 14), color: 'magenta' });
  } else {
    segs.push({ text: padEnd(formatShortTime(info.timestamp), 14) });
  }
  for (const column of columns) {
    let text = '';
    if (info.status !== 'damaged') {
      if (column.name === 'model') text = shortModel(info.model);
      else if (column.name === 'tokens') text = formatTokens(info.tokens);
      else if (column.name === 'cost') text = formatCost(info.cost);
      else if (column.name === 'duration') text = formatDuration(info.duration);
    }
    segs.push({ text: ' ' }, { text: cell(sanitize(text, true), column), dim: column.name !== 'model' });
  }
  const preview = sanitize(store.preview(entry), true);
  const previewSeg: Seg = info.status === 'damaged' ? { text: `${path.basename(info.file.path)}:${info.line} ${preview}`, color: 'magenta' } : { text: preview };
  const row = { segs: [{ text: ' ' }, previewSeg] };
  const shown = regex !== null && matched ? highlight(row, regex) : row;
  segs.push(...shown.segs);
  return segs;
}

export function headerSegs(columns: Column[]): Seg[] {
  const segs: Seg[] = [{ text: '    ' + padEnd('time', 14) }];
  for (const column of columns) segs.push({ text: ' ' + cell(column.title, column) });
  segs.push({ text: ' first user message' });
  return segs.map((s) => ({ ...s, dim: true, bold: true }));
}

export interface ListPaneProps {
  store: IndexStore;
  node: TreeNode;
  nodeIndex: number;
  list: ArrayLike<number>;
  width: number;
  rows: number;
  cursor: number;
  top: number;
  focused: boolean;
  filter: StatusFilter;
  hideDuplicates: boolean;
  marked: ReadonlySet<number>;
  regex: RegExp | null;
  isMatch: (entry: number) => boolean;
}

export function ListPane(props: ListPaneProps) {
  const { store, node, list, width, rows, cursor, top, focused, marked, regex, isMatch } = props;
  const columns = listColumns(width);
  const counts = store.counts(props.nodeIndex);
  const title = node.kind === 'module' ? `${store.modules[node.id].program}/${node.label}` : node.label;
  const filters: string[] = [];
  if (props.filter !== 'all') filters.push(props.filter);
  if (props.hideDuplicates) filters.push('no dups');
  const header: Seg[] = [
    { text: ` ${title}`, bold: true },
    { text: `  ${list.length}${filters.length > 0 ? ` of ${counts.records + counts.damaged} (${filters.join(', ')})` : ''}`, dim: !focused },
    ...badges(counts, true),
  ];
  const lines = [];
  for (let k = 0; k < rows; k++) {
    const p = top + k;
    if (p >= list.length) {
      const empty = p === 0 ? (store.progress.done ? ' no records match' : ' indexing…') : '';
      lines.push(<Line key={k} row={[{ text: empty, dim: true }]} width={width} />);
      continue;
    }
    const entry = list[p];
    const selected = p === cursor;
    const row = entryRow(store, entry, columns, marked.has(entry), regex, regex !== null && isMatch(entry));
    lines.push(<Line key={k} row={selected && !focused ? row.map((s) => ({ ...s, bold: true, underline: true })) : row} width={width} selected={selected && focused} />);
  }
  return (
    <Box flexDirection="column" width={width}>
      <Line row={header} width={width} selected={focused} />
      <Line row={headerSegs(columns)} width={width} />
      {lines}
    </Box>
  );
}
