/**
 * The first screen, written straight to the terminal while ink is still loading (about half
 * a second of module loading on a cold start): the same rows the ink app draws first, from
 * the same builders (rows.ts), so the records show as soon as the first batch is indexed.
 */
import type { Seg } from './chat-lines.js';
import type { IndexStore } from './index-store.js';
import { computeLayout } from './layout.js';
import { entryRow, fitSegs, headerSegs, keyHints, listColumns, listTitleSegs, titleSegs, treeRow, unfocusedSelection } from './rows.js';
import { initialState } from './state.js';

const COLORS: Record<string, number> = { black: 30, red: 31, green: 32, yellow: 33, blue: 34, magenta: 35, cyan: 36, white: 37, gray: 90, grey: 90 };

function colorCode(name: string): number | null {
  if (Object.hasOwn(COLORS, name)) return COLORS[name];
  const bright = /^(\w+)Bright$/.exec(name);
  return bright !== null && Object.hasOwn(COLORS, bright[1]) ? COLORS[bright[1]] + 60 : null;
}

/** One row as text with SGR styles, as ink's <Line> would draw it. */
export function segsToAnsi(segs: readonly Seg[], width: number, selected = false, color = true): string {
  let out = '';
  for (const seg of fitSegs(segs, width)) {
    if (!color) {
      out += seg.text;
      continue;
    }
    const codes: number[] = [];
    const fg = seg.color !== undefined ? colorCode(seg.color) : null;
    if (fg !== null) codes.push(fg);
    if (seg.bold) codes.push(1);
    if (seg.dim && !selected) codes.push(2);
    if (seg.italic) codes.push(3);
    if (seg.underline) codes.push(4);
    if (selected ? !seg.inverse : seg.inverse) codes.push(7);
    out += codes.length > 0 ? `\x1b[${codes.join(';')}m${seg.text}\x1b[0m` : seg.text;
  }
  return out;
}

/** The whole first screen (tree focused, all records listed) for a `columns` x `rows` terminal. */
export function prepaint(store: IndexStore, columns: number, rows: number, title: string, color = !('NO_COLOR' in process.env)): string {
  const layout = computeLayout(columns, rows - 1);
  const state = initialState();
  const list = store.list(0, state.filter, state.hideDuplicates);
  const listColumnsNow = listColumns(layout.listWidth);
  const lines: string[] = [segsToAnsi(titleSegs(store, state, title), layout.width, true, color)];
  for (let k = 0; k < layout.body; k++) {
    let left: string;
    if (k === 0) left = segsToAnsi([{ text: ' programs / modules', bold: true }], layout.treeWidth, true, color);
    else {
      const node = store.tree[k - 1];
      left = node === undefined ? ' '.repeat(layout.treeWidth) : segsToAnsi(treeRow(node, store.counts(k - 1), layout.treeWidth), layout.treeWidth, k === 1, color);
    }
    let right: string;
    if (k === 0) right = segsToAnsi(listTitleSegs(store, 0, list.length, state.filter, state.hideDuplicates, false), layout.listWidth, false, color);
    else if (k === 1) right = segsToAnsi(headerSegs(listColumnsNow), layout.listWidth, false, color);
    else {
      const p = k - 2;
      if (p >= list.length) right = ' '.repeat(layout.listWidth);
      else {
        const row = entryRow(store, list[p], listColumnsNow, false, null, false);
        right = segsToAnsi(p === 0 ? unfocusedSelection(row) : row, layout.listWidth, false, color);
      }
    }
    lines.push(`${left}${color ? '\x1b[2m│\x1b[0m' : '│'}${right}`);
  }
  lines.push('');
  lines.push(segsToAnsi([{ text: ` ${keyHints(state, layout.width)}`, dim: true }], layout.width, false, color));
  return `\x1b[H${lines.map((line) => `${line}\x1b[K`).join('\r\n')}\x1b[H`;
}
