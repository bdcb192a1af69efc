/** The frame around the body: the title bar, the message or prompt line, and the key hints. */
import type { Seg } from '../chat-lines.js';
import type { IndexStore } from '../index-store.js';
import type { State } from '../state.js';
import { formatBytes } from '../text.js';
import { Line } from './Line.js';

function progressBar(fraction: number, width: number): string {
  const filled = Math.round(Math.max(0, Math.min(1, fraction)) * width);
  return '█'.repeat(filled) + '░'.repeat(width - filled);
}

export function TitleBar({ store, state, roots, width }: { store: IndexStore; state: State; roots: string; width: number }) {
  const p = store.progress;
  const counts = store.counts(0);
  const segs: Seg[] = [
    { text: ' traces browse ', bold: true },
    { text: ` ${roots} `, dim: true },
    { text: ` ${counts.records.toLocaleString('en-US')} records` },
  ];
  if (!p.done) {
    const fraction = p.bytesTotal > 0 ? p.bytesDone / p.bytesTotal : 0;
    segs.push({ text: `  indexing ${progressBar(fraction, 10)} ${Math.floor(fraction * 100)}% of ${formatBytes(p.bytesTotal)}`, color: 'yellow' });
  } else {
    segs.push({ text: `  ${store.files.length} files, ${formatBytes(p.bytesTotal)}`, dim: true });
  }
  const flags: string[] = [];
  if (state.filter !== 'all') flags.push(`filter ${state.filter}`);
  if (state.hideDuplicates) flags.push('dups hidden');
  if (state.marked.size > 0) flags.push(`${state.marked.size} marked`);
  if (flags.length > 0) segs.push({ text: `  [${flags.join(' · ')}]`, color: 'cyan' });
  return <Line row={segs} width={width} selected />;
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
  if (search !== null) {
    const progress = search.done ? '' : ` (searching ${search.total > 0 ? Math.floor((search.scanned / search.total) * 100) : 0}%)`;
    return <Line row={[{ text: `/${search.source}/`, color: 'yellow' }, { text: ` ${search.matches} matching record${search.matches === 1 ? '' : 's'}${progress}  n/N next/previous`, dim: true }]} width={width} />;
  }
  return <Line row={[]} width={width} />;
}

export function keyHints(state: State): string {
  if (state.prompt !== null) return '';
  if (state.overlay?.kind === 'group') return 'j/k move  Enter open  x mark  y copy  Esc close';
  if (state.overlay !== null) return 'j/k scroll  Esc close  q close';
  if (state.mode === 'record') return 'j/k scroll  Enter unfold  e all folds  Tab metadata  h back  / n N search  D dups  x mark  w write  y copy  ? keys  q quit';
  if (state.pane === 'tree') return 'j/k move  Enter records  Tab pane  / search  f filter  d dups  s stats  ? keys  q quit';
  return 'j/k move  Enter open  h tree  / n N search  f filter  d dups  D group  x mark  w write  y copy  s stats  ? keys  q quit';
}

export function KeyHints({ state, width }: { state: State; width: number }) {
  return <Line row={[{ text: ` ${keyHints(state)}`, dim: true }]} width={width} />;
}
