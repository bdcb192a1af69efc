/** The right pane: the records of the selected program or module, one row each. */
import { Box } from 'ink';
import { entryRow, headerSegs, listColumns, listTitleSegs, unfocusedSelection } from '../rows.js';
import { Line } from './Line.js';
import type { PaneProps } from './RunsPane.js';

export interface ListPaneProps extends PaneProps {
  hideDuplicates: boolean;
  marked: ReadonlySet<number>;
  regex: RegExp | null;
  isMatch: (entry: number) => boolean;
}

export function ListPane(props: ListPaneProps) {
  const { store, list, width, rows, cursor, top, focused, marked, regex, isMatch } = props;
  const columns = listColumns(width);
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
    lines.push(<Line key={k} row={selected && !focused ? unfocusedSelection(row) : row} width={width} selected={selected && focused} />);
  }
  return (
    <Box flexDirection="column" width={width}>
      <Line row={listTitleSegs(store, props.nodeIndex, list.length, props.filter, props.hideDuplicates, focused)} width={width} selected={focused} />
      <Line row={headerSegs(columns)} width={width} />
      {lines}
    </Box>
  );
}
