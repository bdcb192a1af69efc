/**
 * The first screen, written straight to the terminal while ink is still loading (about half
 * a second of module loading on a cold start): the same rows the ink app draws first, from
 * the same builders (rows.ts), so the records show as soon as the first batch is indexed.
 */
import type { IndexStore } from './index-store.js';
import { computeLayout } from './layout.js';
import { segsToAnsi } from './ansi.js';
import { entryRow, headerSegs, keyHints, listColumns, listTitleSegs, titleSegs, treeRow, unfocusedSelection } from './rows.js';
import { initialState } from './state.js';

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
