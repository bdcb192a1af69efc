/** The frame around the body: the title bar, the message or prompt line, and the key hints. */
import type { IndexStore } from '../index-store.js';
import type { State } from '../state.js';
import type { Seg } from '../chat-lines.js';
import { keyHints, titleSegs } from '../rows.js';
import { formatCount } from '../text.js';
import { Line } from './Line.js';

export function TitleBar({ store, state, roots, width }: { store: IndexStore; state: State; roots: string; width: number }) {
  return <Line row={titleSegs(store, state, roots)} width={width} selected />;
}

export interface SearchStatus {
  source: string;
  matches: number;
  done: boolean;
  scanned: number;
  total: number;
}

export function MessageLine({ state, search, width }: { state: State; search: SearchStatus | null; width: number }) {
  if (state.prompt !== null) {
    const label = state.prompt.kind === 'search' ? '/' : 'write marked call_ids to: ';
    return <Line row={[{ text: label, bold: true }, { text: state.prompt.text }, { text: '█' }, { text: state.prompt.kind === 'search' ? '   Enter searches, Esc cancels' : '   Enter writes, Esc cancels', dim: true }]} width={width} />;
  }
  if (state.message !== null) {
    return <Line row={[{ text: state.message.text, color: state.message.tone === 'error' ? 'red' : undefined, bold: state.message.tone === 'error' }]} width={width} />;
  }
  if (search !== null) return <Line row={searchStatusSegs(search)} width={width} />;
  return <Line row={[]} width={width} />;
}

export function KeyHints({ state, width }: { state: State; width: number }) {
  return <Line row={[{ text: ` ${keyHints(state, width)}`, dim: true }]} width={width} />;
}

/** The search's standing for the selected node: matches so far while it runs, then how many, or that none does. */
export function searchStatusSegs(search: SearchStatus): Seg[] {
  const pattern: Seg = { text: `/${search.source}/`, color: 'yellow' };
  const matching = `${formatCount(search.matches)} matching record${search.matches === 1 ? '' : 's'}`;
  if (!search.done) {
    const percent = search.total > 0 ? Math.floor((search.scanned / search.total) * 100) : 0;
    return [pattern, { text: ` ${matching} so far (searching ${percent}%)`, dim: true }];
  }
  if (search.matches === 0) return [pattern, { text: `: no record here matches (${formatCount(search.total)} searched)  / searches again` }];
  return [pattern, { text: ` ${matching}  n/N next/previous`, dim: true }];
}
