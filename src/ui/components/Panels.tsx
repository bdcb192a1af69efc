/** Panels drawn over the body: the keys (?), the stats (s) and a duplicate group (D). */
import { Box } from 'ink';
import type { ReactNode } from 'react';
import { STATUS_COLOR, STATUS_GLYPH, type Seg } from '../chat-lines.js';
import type { GroupMember, IndexStore, NodeStats } from '../index-store.js';
import { formatBytes, formatCount, formatUsd, formatDuration, formatLongTime, formatShortTime, padEnd, wrap } from '../text.js';
import { follow } from '../state.js';
import { Line, Rows } from './Line.js';

export const HELP: [string, string][] = [
  ['', 'Moving'],
  ['j k ↓ ↑  ^n ^p', 'move down / up (scroll in the record view)'],
  ['g G  Home End', 'first / last row'],
  ['PgDn PgUp  space b', 'page down / up'],
  ['^d ^u', 'half a page down / up'],
  ['Enter l →', 'open: tree → records → record; in a record, unfold the fold on screen'],
  ['h Esc ←', 'back: record → records → tree → parent'],
  ['Tab', 'switch pane: tree / records, or conversation / metadata'],
  ['e', 'in a record: unfold or fold every fold (system prompt, reasoning)'],
  ['r', 'runs view: one row per run (steps, status, tokens, cost, time); Enter opens a run as one conversation; r again: records'],
  ['', 'Finding'],
  ['/', 'search message text with a regular expression (smart case)'],
  ['n N', 'next / previous match (records in the list, rows in a record)'],
  ['f', 'cycle the status filter: all, ok, exception, no_output'],
  ['d', 'hide / show duplicates (keep what a dedupe keeps)'],
  ['D', 'show the duplicate group of the current record'],
  ['o', 'order the records list by recorded time, oldest first; o again: file order'],
  ['s', 'stats of the selected program or module'],
  ['', 'Curating'],
  ['x', 'mark / unmark the current record for exclusion'],
  ['w', 'write the marked call_ids to a file (default traces-exclude.txt)'],
  ['y', 'copy the call_id to the clipboard (OSC 52)'],
  ['', 'Leaving'],
  ['?', 'this help (Esc closes)'],
  ['q ^c', 'quit (closes a panel first)'],
  ['', ''],
  ['', 'Glyphs: ✓ ok  ✗ exception  ∅ no_output  ⚠ damaged line  ≡ duplicate (dropped by dedupe)  x marked'],
  ['', 'Duplicates: records with the same inputs_hash and config_hash in the same program and module; a dedupe of ok records (as export does) keeps the first by timestamp, ties by file path then line.'],
  ['', 'The exclusion file holds one call_id per line (# comments allowed); --exclude of dedupe, filter and export reads it.'],
];

const KEYS_COLUMN = 20;

/** The help's rows at `width` cells: each text wraps under itself, so no line is cut at any width. */
export function helpRows(width: number): Seg[][] {
  const rows: Seg[][] = [];
  const textRoom = Math.max(10, width - KEYS_COLUMN - 3);
  for (const [keys, text] of HELP) {
    if (keys !== '') {
      wrap(text, textRoom).forEach((line, k) => {
        const left = k === 0 ? `  ${padEnd(keys, KEYS_COLUMN)}` : ' '.repeat(KEYS_COLUMN + 2);
        rows.push([{ text: left, color: 'cyan', bold: true }, { text: ` ${line}` }]);
      });
      continue;
    }
    const section = /^[A-Z][a-z]+$/.test(text);
    for (const line of wrap(text, Math.max(10, width - 2))) rows.push([{ text: `  ${line}`, bold: section, dim: !section }]);
  }
  return rows;
}

function Frame({ title, width, height, children }: { title: string; width: number; height: number; children: ReactNode }) {
  return (
    <Box flexDirection="column" width={width} height={height}>
      <Line row={[{ text: ` ${title}`, bold: true }, { text: '   Esc closes', dim: true }]} width={width} selected />
      {children}
    </Box>
  );
}

export function HelpPanel({ width, height, top }: { width: number; height: number; top: number }) {
  return (
    <Frame title="keys" width={width} height={height}>
      <Rows rows={helpRows(width)} top={top} count={height - 1} width={width} />
    </Frame>
  );
}

export function statsRows(stats: NodeStats, store: IndexStore, title: string, width: number): Seg[][] {
  const rows: Seg[][] = [];
  const LABEL = 24;
  const field = (label: string, value: string, color?: string): void => {
    wrap(value, Math.max(10, width - LABEL)).forEach((line, k) => rows.push([{ text: k === 0 ? `  ${padEnd(label, LABEL - 2)}` : ' '.repeat(LABEL), dim: true }, { text: line, color }]));
  };
  rows.push([{ text: `  ${title}`, bold: true }]);
  field('records', formatCount(stats.records));
  field(`${STATUS_GLYPH.ok} ok`, formatCount(stats.ok), STATUS_COLOR.ok);
  field(`${STATUS_GLYPH.exception} exception`, formatCount(stats.exception), STATUS_COLOR.exception);
  field(`${STATUS_GLYPH.no_output} no_output`, formatCount(stats.no_output), STATUS_COLOR.no_output);
  field('≡ duplicates (ok)', `${formatCount(stats.duplicates)}  (a dedupe keeps ${formatCount(stats.ok - stats.duplicates)} of ${formatCount(stats.ok)})`, 'cyan');
  field(`${STATUS_GLYPH.damaged} damaged lines`, formatCount(stats.damaged), STATUS_COLOR.damaged);
  field('tokens (ok)', formatCount(stats.totalTokens));
  const costs = [`${formatUsd(stats.cost)} reported`];
  if (stats.estimatedCost > 0) costs.push(`${formatUsd(stats.estimatedCost, true)} estimated from the price table`);
  field('cost (ok)', costs.join(' + '));
  const timed = stats.records;
  field('duration', timed > 0 ? `total ${formatDuration(stats.durationSum)}, mean ${formatDuration(stats.durationSum / timed)}, max ${formatDuration(stats.durationMax)}` : '');
  if (Number.isFinite(stats.firstTimestamp)) {
    field('calls', `${formatLongTime(stats.firstTimestamp).slice(0, 16)} to ${formatLongTime(stats.lastTimestamp).slice(0, 16)} UTC`);
  }
  field('models', stats.models.map(({ model, records }) => `${model}\u00a0${records}`).join(' · '));
  field('files', String(stats.files));
  const p = store.progress;
  const read = store.allFiles.length - store.files.length;
  field('whole tree', `${store.files.length} Synalinks files (${formatBytes(p.bytesTotal)})${read > 0 ? `, ${read} files of other recorders` : ''}, ${store.skipped.length} other files skipped`);
  if (store.otherFiles.length > read) field('not shown', `${store.otherFiles.length - read} files of other recorders`);
  if (!p.done) field('indexing', `${formatBytes(p.bytesDone)} of ${formatBytes(p.bytesTotal)}`, 'yellow');
  for (const error of store.errors.slice(0, 3)) field('read error', error, 'red');
  return rows;
}

export function StatsPanel({ store, nodeIndex, width, height }: { store: IndexStore; nodeIndex: number; width: number; height: number }) {
  const node = store.tree[nodeIndex];
  const title = node.kind === 'module' ? `${store.modules[node.id].program}/${node.label}` : node.label;
  const rows = statsRows(store.stats(nodeIndex), store, title, width);
  return (
    <Frame title="stats" width={width} height={height}>
      <Rows rows={rows} top={0} count={height - 1} width={width} />
    </Frame>
  );
}

/** What the group panel says first: how many share the keys, and which one a dedupe keeps. */
export function groupIntro(members: readonly GroupMember[]): string {
  const ok = members.filter((m) => m.role !== 'not ok').length;
  const same = `${members.length} records with the same inputs_hash and config_hash in one program/module`;
  if (ok === 0) return `${same}; none is ok, so a dedupe of ok records keeps none of them`;
  if (ok === 1) return `${same}; a dedupe keeps the one ok record`;
  return `${same}; a dedupe keeps the first of the ${ok} ok records by timestamp (ties: file path, then line)`;
}

const ROLE_LABEL: Record<GroupMember['role'], Seg> = {
  kept: { text: 'keep ', color: 'green', bold: true },
  duplicate: { text: 'drop ', color: 'cyan' },
  'not ok': { text: 'n/a  ', dim: true },
};

export function GroupPanel({
  store,
  members,
  cursor,
  top,
  width,
  height,
  marked,
}: {
  store: IndexStore;
  members: GroupMember[];
  cursor: number;
  top: number;
  width: number;
  height: number;
  marked: ReadonlySet<number>;
}) {
  const rows: Seg[][] = members.map(({ entry, role }) => {
    const info = store.info(entry);
    return [
      { text: marked.has(entry) ? 'x' : ' ', color: 'red', bold: true },
      { text: ' ' },
      ROLE_LABEL[role],
      { text: STATUS_GLYPH[info.status], color: STATUS_COLOR[info.status] },
      { text: ` ${padEnd(formatShortTime(info.timestamp), 14)}` },
      { text: `  ${info.file.display}:${info.line}`, dim: true },
      { text: `  ${info.model}` },
    ];
  });
  // The intro wraps (a narrow screen would cut what a dedupe keeps); the rows take what is left.
  const intro = wrap(groupIntro(members), Math.max(10, width - 2)).map((line): Seg[] => [{ text: `  ${line}`, dim: true }]);
  const count = Math.max(1, height - 1 - intro.length);
  return (
    <Frame title="duplicate group" width={width} height={height}>
      <Rows rows={intro} top={0} count={intro.length} width={width} />
      <Rows rows={rows} top={follow(top, cursor, count, rows.length)} count={count} width={width} selectedRow={cursor} />
    </Frame>
  );
}
