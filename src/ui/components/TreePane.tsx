/** The left pane: programs and their modules, with record counts and status badges. */
import { Box } from 'ink';
import type { Seg } from '../chat-lines.js';
import type { Counts, IndexStore, TreeNode } from '../index-store.js';
import { textWidth } from '../text.js';
import { Line } from './Line.js';

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

function nodeRow(node: TreeNode, counts: Counts, width: number): Seg[] {
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

export interface TreePaneProps {
  store: IndexStore;
  width: number;
  rows: number;
  cursor: number;
  top: number;
  focused: boolean;
}

export function TreePane({ store, width, rows, cursor, top, focused }: TreePaneProps) {
  const lines = [];
  for (let k = 0; k < rows; k++) {
    const i = top + k;
    const node = store.tree[i];
    if (node === undefined) {
      lines.push(<Line key={k} row={[]} width={width} />);
      continue;
    }
    const selected = i === cursor;
    const row = nodeRow(node, store.counts(i), width);
    lines.push(<Line key={k} row={selected && !focused ? row.map((s) => ({ ...s, bold: true, underline: true })) : row} width={width} selected={selected && focused} />);
  }
  return (
    <Box flexDirection="column" width={width}>
      <Line row={[{ text: ' programs / modules', bold: true }]} width={width} selected={focused} />
      {lines}
    </Box>
  );
}
