/** Screen geometry: how many rows and columns each part of the browser gets. */
import type { State } from './state.js';

export interface Layout {
  width: number;
  height: number;
  /** Rows between the title bar and the two bottom lines. */
  body: number;
  treeWidth: number;
  listWidth: number;
  /** Visible rows of each scrolling area. */
  treeRows: number;
  listRows: number;
  recordRows: number;
  overlayRows: number;
}

export const MIN_WIDTH = 40;
export const MIN_HEIGHT = 8;

export function computeLayout(width: number, height: number): Layout {
  const w = Math.max(MIN_WIDTH, width);
  const h = Math.max(MIN_HEIGHT, height);
  const body = h - 3;
  const treeWidth = Math.max(18, Math.min(40, Math.round(w * 0.28)));
  return {
    width: w,
    height: h,
    body,
    treeWidth,
    listWidth: w - treeWidth - 1,
    treeRows: body - 1,
    listRows: body - 2,
    recordRows: body - 2,
    overlayRows: body - 2,
  };
}

/** Rows of the scrolling area that has the focus (what PgUp/PgDn move by). */
export function pageFor(state: State, layout: Layout): number {
  if (state.overlay !== null) return layout.overlayRows;
  if (state.mode === 'record') return layout.recordRows;
  return state.pane === 'tree' ? layout.treeRows : layout.listRows;
}
