/** The left pane: programs and their modules, with record counts and status badges. */
import { Box } from 'ink';
import type { IndexStore } from '../index-store.js';
import { treeRow, unfocusedSelection } from '../rows.js';
import { Line } from './Line.js';

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
    const row = treeRow(node, store.counts(i), width);
    lines.push(<Line key={k} row={selected && !focused ? unfocusedSelection(row) : row} width={width} selected={selected && focused} />);
  }
  return (
    <Box flexDirection="column" width={width}>
      <Line row={[{ text: ' programs / modules', bold: true }]} width={width} selected={focused} />
      {lines}
    </Box>
  );
}
