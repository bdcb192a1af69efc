/** The record view: a summary line, the chat/metadata tabs, and the visible rows of the pane. */
import { Box } from 'ink';
import { STATUS_COLOR, STATUS_GLYPH, highlight, type Row, type Seg } from '../chat-lines.js';
import type { EntryInfo } from '../index-store.js';
import { formatUsd, formatDuration, formatLongTime, formatTokens } from '../text.js';
import { Line } from './Line.js';

export function summarySegs(info: EntryInfo, marked: boolean, groupSize: number): Seg[] {
  const segs: Seg[] = [{ text: ` ${STATUS_GLYPH[info.status]} ${info.status}`, color: STATUS_COLOR[info.status], bold: true }];
  // Flags first: a narrow screen cuts the end of this line.
  if (marked) segs.push({ text: '  x marked', color: 'red', bold: true });
  if (groupSize > 1) segs.push({ text: `  ≡ ${groupSize} same keys${info.duplicate ? ', dropped by dedupe' : ''}`, color: 'cyan' });
  segs.push({ text: `  ${info.module.program}/${info.module.module}`, bold: true });
  if (info.status === 'damaged') {
    segs.push({ text: `  ${info.file.display}:${info.line}`, color: 'magenta' });
  } else {
    segs.push({ text: `  ${formatLongTime(info.timestamp).slice(0, 19)} UTC`, dim: true });
    if (info.model) segs.push({ text: `  ${info.model}` });
    if (info.tokens >= 0) segs.push({ text: `  ${formatTokens(info.tokens)} tok`, dim: true });
    if (Number.isFinite(info.cost)) segs.push({ text: `  ${formatUsd(info.cost)}`, dim: true });
    if (Number.isFinite(info.duration)) segs.push({ text: `  ${formatDuration(info.duration)}`, dim: true });
  }
  return segs;
}

export interface RecordViewProps {
  info: EntryInfo;
  marked: boolean;
  groupSize: number;
  pane: 'chat' | 'meta';
  rows: readonly Row[];
  top: number;
  count: number;
  width: number;
  regex: RegExp | null;
}

export function RecordView({ info, marked, groupSize, pane, rows, top, count, width, regex }: RecordViewProps) {
  const last = Math.min(rows.length, top + count);
  const tabs: Seg[] = [
    { text: ' conversation ', inverse: pane === 'chat', bold: pane === 'chat' },
    { text: ' ' },
    { text: ' metadata ', inverse: pane === 'meta', bold: pane === 'meta' },
    { text: `   rows ${rows.length === 0 ? 0 : top + 1}-${last} of ${rows.length}`, dim: true },
    { text: `   ${info.file.display}:${info.line}`, dim: true },
  ];
  const lines = [];
  for (let k = 0; k < count; k++) {
    const r = top + k;
    let row: Row = r < rows.length ? rows[r] : { segs: [] };
    if (regex !== null && pane === 'chat' && r < rows.length) {
      row = highlight(row, regex);
    }
    lines.push(<Line key={k} row={row} width={width} />);
  }
  return (
    <Box flexDirection="column" width={width}>
      <Line row={summarySegs(info, marked, groupSize)} width={width} />
      <Line row={tabs} width={width} />
      {lines}
    </Box>
  );
}
