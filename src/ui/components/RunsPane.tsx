/** The right pane in the runs view: the runs of the selected program or module, one row each. */
import { Box } from 'ink';
import { useMemo } from 'react';
import type { IndexStore, StatusFilter } from '../index-store.js';
import { runColumnWidths, runHeaderSegs, runRow, runsTitleSegs, unfocusedSelection } from '../rows.js';
import { Line } from './Line.js';

/** What the records list and the runs list both take. */
export interface PaneProps {
  store: IndexStore;
  nodeIndex: number;
  /** Entries of the store (records list) or indexes into `store.runs` (runs list). */
  list: ArrayLike<number>;
  width: number;
  rows: number;
  cursor: number;
  top: number;
  focused: boolean;
  /** The status filter (records: the record's status; runs: the run's). */
  filter: StatusFilter;
}

export function RunsPane(props: PaneProps) {
  const { store, list, width, rows, cursor, top, focused } = props;
  const runs = store.runs;
  // Widths from every run listed, not only those on screen: columns stay put while scrolling.
  const widths = useMemo(() => runColumnWidths(runs ?? [], list), [runs, list]);
  const lines = [];
  for (let k = 0; k < rows; k++) {
    const p = top + k;
    const run = runs === null || p >= list.length ? undefined : runs[list[p]];
    if (run === undefined) {
      const empty = p === 0 ? (runs === null ? ' grouping runs…' : ' no runs here') : '';
      lines.push(<Line key={k} row={[{ text: empty, dim: true }]} width={width} />);
      continue;
    }
    const selected = p === cursor;
    const row = runRow(run, widths);
    lines.push(<Line key={k} row={selected && !focused ? unfocusedSelection(row) : row} width={width} selected={selected && focused} />);
  }
  return (
    <Box flexDirection="column" width={width}>
      <Line row={runsTitleSegs(store, props.nodeIndex, list.length, focused, props.filter)} width={width} selected={focused} />
      <Line row={runHeaderSegs(widths)} width={width} />
      {lines}
    </Box>
  );
}
