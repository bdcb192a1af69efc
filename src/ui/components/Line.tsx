/** One screen row: styled segments cut or padded to exactly `width` cells. */
import { Text } from 'ink';
import type { Row, Seg } from '../chat-lines.js';
import { segsToAnsi } from '../ansi.js';

export interface LineProps {
  row: Row | Seg[];
  width: number;
  /** Draw the whole row inverted (the selected row). */
  selected?: boolean;
}

/** Colours unless the user asked for none (https://no-color.org), as the pre-paint does. */
const COLOR = !('NO_COLOR' in process.env);

/**
 * One <Text> of styled text per row, not one per segment: the screen is a few dozen elements
 * instead of hundreds, which is most of what a key press costs to draw.
 */
export function Line({ row, width, selected = false }: LineProps) {
  return <Text wrap="truncate">{segsToAnsi(Array.isArray(row) ? row : row.segs, width, selected, COLOR)}</Text>;
}

/** `count` rows of `rows` starting at `top`, padded with blank rows so the area keeps its height. */
export function Rows({ rows, top, count, width, selectedRow = -1 }: { rows: readonly (Row | Seg[])[]; top: number; count: number; width: number; selectedRow?: number }) {
  const lines = [];
  for (let k = 0; k < count; k++) {
    const r = top + k;
    lines.push(<Line key={k} row={r < rows.length ? rows[r] : []} width={width} selected={r === selectedRow} />);
  }
  return <>{lines}</>;
}
