/** One screen row: styled segments cut or padded to exactly `width` cells. */
import { Text } from 'ink';
import type { Row, Seg } from '../chat-lines.js';
import { fitSegs } from '../rows.js';

export interface LineProps {
  row: Row | Seg[];
  width: number;
  /** Draw the whole row inverted (the selected row). */
  selected?: boolean;
}

export function Line({ row, width, selected = false }: LineProps) {
  const segs = fitSegs(Array.isArray(row) ? row : row.segs, width);
  return (
    <Text wrap="truncate">
      {segs.map((seg, i) => (
        <Text
          key={i}
          color={seg.color}
          bold={seg.bold}
          dimColor={seg.dim && !selected}
          italic={seg.italic}
          inverse={selected ? !seg.inverse : seg.inverse}
          underline={seg.underline}
        >
          {seg.text}
        </Text>
      ))}
    </Text>
  );
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
