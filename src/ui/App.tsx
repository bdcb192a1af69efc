/**
 * `traces browse`: the ink application. It owns the UI state (driven by the pure reducer in
 * state.ts), asks the index store for what is on screen, and runs the reducer's effects.
 */
import { Box, Text, useApp, useInput, useStdout } from 'ink';
import { useCallback, useEffect, useRef, useState } from 'react';
import { chatRows, damagedRows, foldsMatching, metaRows, rowText, type Row } from './chat-lines.js';
import { DAMAGED, type GroupMember, type IndexStore } from './index-store.js';
import { formatExcludeText, writeExcludeFile } from './exclude-file.js';
import { computeLayout, pageFor, type Layout } from './layout.js';
import { useStoreVersion, useTerminalSize } from './hooks.js';
import { SearchJob } from './search.js';
import { follow, initialState, keyToAction, reduce, splitKeys, type Action, type Context, type Effect, type State } from './state.js';
import { osc52 } from './terminal.js';
import { KeyHints, MessageLine, TitleBar, type SearchStatus } from './components/Chrome.js';
import { ListPane } from './components/ListPane.js';
import { GroupPanel, HelpPanel, StatsPanel, helpRows } from './components/Panels.js';
import { RecordView } from './components/RecordView.js';
import { RunsPane } from './components/RunsPane.js';
import { TreePane } from './components/TreePane.js';

export interface AppProps {
  store: IndexStore;
  /** The roots as the user named them, for the title bar. */
  roots?: string;
  /** Fixed size (tests); by default the terminal's, minus one row. */
  width?: number;
  height?: number;
  excludePath?: string;
  /** call_ids of the exclusion file found at start: marked as they are indexed, kept when written. */
  preloadedIds?: ReadonlySet<string>;
  initialMessage?: string;
  /** Puts text on the clipboard; by default an OSC 52 sequence on stdout. */
  copy?: (text: string) => void;
  /** The trees read (real paths): w never writes into them, whatever name its prompt is given. */
  inputs?: readonly string[];
  writeFile?: (path: string, text: string, inputs?: readonly string[]) => void;
  onQuit?: () => void;
}

/** Rows of the open record, rebuilt only when the record, the width or the folds change. */
class RecordRowsCache {
  private chatKey = '';
  private chat: Row[] = [];
  private chatFolds: { id: string; row: number }[] = [];
  private metaKey = '';
  private meta: Row[] = [];
  private groupKey = '';
  private groupMembers: GroupMember[] = [];

  constructor(private readonly store: IndexStore) {}

  chatRows(entry: number, width: number, open: ReadonlySet<string>, run = -1): { rows: Row[]; folds: { id: string; row: number }[] } {
    const key = `${entry}|${width}|${[...open].sort().join(',')}|${run}`;
    if (key !== this.chatKey) {
      const record = this.store.record(entry);
      if (record === null) {
        const info = this.store.info(entry);
        let raw: Buffer = Buffer.alloc(0);
        try {
          raw = this.store.readBytes(entry);
        } catch {
          // Gone from disk.
        }
        this.chat = damagedRows(info, raw, width);
      } else {
        try {
          this.chat = chatRows(record, { width, source: this.store.info(entry).file.source, isOpen: (fold) => open.has(fold) });
        } catch (error) {
          this.chat = [{ segs: [{ text: `cannot show this record: ${String(error)}`, color: 'red' }] }];
        }
      }
      if (run >= 0) this.chat = [...runHeaderRows(this.store, run, entry), ...this.chat];
      this.chatFolds = [];
      this.chat.forEach((row, i) => {
        if (row.fold !== undefined) this.chatFolds.push({ id: row.fold, row: i });
      });
      this.chatKey = key;
    }
    return { rows: this.chat, folds: this.chatFolds };
  }

  metaRows(entry: number, width: number, marked: boolean): Row[] {
    const key = `${entry}|${width}|${marked}|${this.store.version}`;
    if (key !== this.metaKey) {
      const info = this.store.info(entry);
      this.meta = metaRows(this.store.record(entry), info, { groupSize: this.store.groupSizeOf(entry), marked }, width);
      this.metaKey = key;
    }
    return this.meta;
  }

  group(entry: number): GroupMember[] {
    const key = `${entry}|${this.store.version}`;
    if (key !== this.groupKey) {
      this.groupMembers = this.store.duplicateGroup(entry);
      this.groupKey = key;
    }
    return this.groupMembers;
  }
}

/** What the chat view of a run says first: which run, and which of its steps holds the conversation. */
function runHeaderRows(store: IndexStore, runIndex: number, entry: number): Row[] {
  const run = store.runs?.[runIndex];
  if (run === undefined) return [];
  const step = store.runEntries(runIndex).indexOf(entry) + 1;
  return [
    {
      segs: [
        { text: `run of ${run.program}`, bold: true, color: 'cyan' },
        { text: `  ${run.steps} step${run.steps === 1 ? '' : 's'}, ${run.recorderStatus ?? run.status}, ${run.source}` },
        { text: `  · the conversation of step ${step} of ${run.steps} (the longest; it holds the earlier turns)`, dim: true },
      ],
    },
    { segs: [] },
  ];
}

/** The message shown when a run opens. */
function runOpenText(store: IndexStore, runIndex: number, entry: number): string {
  const run = store.runs?.[runIndex];
  if (run === undefined) return '';
  const step = store.runEntries(runIndex).indexOf(entry) + 1;
  return `run of ${run.program}: ${run.steps} step${run.steps === 1 ? '' : 's'}; showing step ${step}'s conversation (h back to the runs)`;
}

function makeContext(state: State, store: IndexStore, layout: Layout, cache: RecordRowsCache, job: SearchJob | null): Context {
  const runsView = state.view === 'runs';
  const list = runsView ? store.runsOf(state.treeCursor, state.filter) : store.list(state.treeCursor, state.filter, state.hideDuplicates, state.order);
  const inRecord = state.mode === 'record' && state.recordEntry >= 0;
  const chat = inRecord ? cache.chatRows(state.recordEntry, layout.width, state.open, state.recordRun) : { rows: [], folds: [] };
  const recordRows = !inRecord ? 0 : state.recordPane === 'chat' ? chat.rows.length : cache.metaRows(state.recordEntry, layout.width, state.marked.has(state.recordEntry)).length;
  return {
    treeLength: store.tree.length,
    parentOf: (i) => {
      const node = store.tree[i];
      if (node?.kind !== 'module') return i;
      const program = store.modules[node.id].program;
      return store.tree.findIndex((n) => n.kind === 'program' && n.label === program);
    },
    list,
    listFor: (tree, filter, hide, order) => store.list(tree, filter, hide, order),
    page: pageFor(state, layout),
    recordRows,
    folds: chat.folds,
    matchRows: (regex, open) => {
      const rows: number[] = [];
      const shown = open === undefined || open === state.open ? chat.rows : cache.chatRows(state.recordEntry, layout.width, open, state.recordRun).rows;
      shown.forEach((row, i) => {
        regex.lastIndex = 0;
        if (regex.test(rowText(row))) rows.push(i);
      });
      return rows;
    },
    chatRowsWith: (open) => (inRecord ? cache.chatRows(state.recordEntry, layout.width, open, state.recordRun).rows.length : 0),
    foldsMatching: (entry, regex) => {
      const record = store.record(entry);
      return record === null ? new Set() : foldsMatching(record, { width: layout.width, source: store.info(entry).file.source }, regex);
    },
    isMatch: (entry) => job?.matches.has(entry) ?? false,
    searchDone: job?.done ?? true,
    group: (entry) => cache.group(entry),
    helpRows: helpRows(layout.width).length,
    isDamaged: (entry) => store.statusOf(entry) === DAMAGED,
    hasCallId: (entry) => (store.record(entry)?.callId ?? '') !== '',
    runsReady: store.runs !== null,
    runOpen: (run) => {
      const entry = store.runEntry(run);
      return { entry, text: runOpenText(store, run, entry) };
    },
  };
}

export function App(props: AppProps) {
  const { store } = props;
  useStoreVersion(store);
  const size = useTerminalSize(props.width, props.height);
  const layout = computeLayout(size.columns, size.rows);
  const { exit } = useApp();
  const { stdout } = useStdout();

  const [state, setState] = useState<State>(() => {
    const initial = initialState(props.excludePath);
    return props.initialMessage ? { ...initial, message: { text: props.initialMessage, tone: 'info' } } : initial;
  });
  const stateRef = useRef(state);
  const layoutRef = useRef(layout);
  layoutRef.current = layout;
  const cacheRef = useRef<RecordRowsCache | null>(null);
  cacheRef.current ??= new RecordRowsCache(store);
  const cache = cacheRef.current;
  const jobRef = useRef<SearchJob | null>(null);
  const [, setSearchTick] = useState(0);

  const runEffect = useCallback(
    (effect: Effect, dispatch: (action: Action) => void): void => {
      switch (effect.type) {
        case 'quit':
          if (props.onQuit) props.onQuit();
          else exit();
          return;
        case 'copy': {
          const callId = store.record(effect.entry)?.callId ?? '';
          if (props.copy) props.copy(callId);
          else stdout.write(osc52(callId));
          dispatch({ type: 'message', text: `copied call_id ${callId} (OSC 52)` });
          return;
        }
        case 'write': {
          const ids: string[] = [];
          const seen = new Set<string>();
          for (const entry of effect.entries) {
            const callId = store.record(entry)?.callId;
            if (callId && !seen.has(callId)) {
              seen.add(callId);
              ids.push(callId);
            }
          }
          // call_ids of the file we started from that this tree does not hold (yet): keep them.
          let kept = 0;
          for (const id of props.preloadedIds ?? []) {
            if (!store.found.has(id) && !seen.has(id)) {
              seen.add(id);
              ids.push(id);
              kept++;
            }
          }
          try {
            (props.writeFile ?? writeExcludeFile)(effect.path, formatExcludeText(ids, new Date(), props.inputs ?? []), props.inputs);
            const extra = kept > 0 ? ` (${kept} from the previous file, not in this tree)` : '';
            dispatch({ type: 'message', text: `wrote ${ids.length} call_id${ids.length === 1 ? '' : 's'} to ${effect.path}${extra}` });
          } catch (error) {
            dispatch({ type: 'message', text: `cannot write ${effect.path}: ${error instanceof Error ? error.message : String(error)}`, tone: 'error' });
          }
          return;
        }
        case 'search':
          // Started by the effect below, which also restarts it when the selected node changes.
          return;
      }
    },
    [store, props, exit, stdout],
  );

  const dispatch = useCallback(
    (action: Action): void => {
      const current = stateRef.current;
      const ctx = makeContext(current, store, layoutRef.current, cache, jobRef.current);
      const [next, effects] = reduce(current, action, ctx);
      if (next !== current) {
        stateRef.current = next;
        setState(next);
      }
      for (const effect of effects) runEffect(effect, dispatch);
    },
    [store, cache, runEffect],
  );

  useInput((input, key) => {
    // Each key of a chunk acts on the state the previous one left.
    for (const one of splitKeys(input, key)) dispatch(keyToAction(one.input, one.key, stateRef.current));
  });

  // The list search runs in the background for the selected node; the jump waits for it.
  const regex = state.search?.regex ?? null;
  useEffect(() => {
    if (regex === null) return;
    let timer: NodeJS.Timeout | null = null;
    const job = new SearchJob(store, regex, state.treeCursor, () => {
      if (timer !== null) return;
      timer = setTimeout(() => {
        timer = null;
        if (jobRef.current !== job) return;
        setSearchTick((t) => t + 1);
        const pending = stateRef.current.pendingJump;
        if (pending !== 0) dispatch({ type: 'nextMatch', dir: pending });
      }, 40);
    });
    jobRef.current = job;
    job.start();
    return () => {
      job.cancel();
      if (timer !== null) clearTimeout(timer);
      if (jobRef.current === job) jobRef.current = null;
    };
  }, [store, regex, state.treeCursor, dispatch]);

  // The runs view groups the runs once (after indexing); the store's change re-renders.
  const runsView = state.view === 'runs';
  useEffect(() => {
    if (runsView) void store.loadRuns();
  }, [store, runsView]);

  // Call ids of a previous exclusion file get marked as indexing finds them.
  useEffect(() => {
    if (!props.preloadedIds || props.preloadedIds.size === 0) return;
    let pending: number[] = [...store.found.values()];
    let timer: NodeJS.Timeout | null = null;
    const flush = (): void => {
      timer = null;
      if (pending.length === 0) return;
      const entries = pending;
      pending = [];
      dispatch({ type: 'addMarks', entries });
    };
    const onFound = (_: string, entry: number): void => {
      pending.push(entry);
      timer ??= setTimeout(flush, 50);
    };
    flush();
    store.on('found', onFound);
    return () => {
      store.off('found', onFound);
      if (timer !== null) clearTimeout(timer);
    };
  }, [store, props.preloadedIds, dispatch]);

  const job = jobRef.current;
  const searchStatus: SearchStatus | null =
    state.search !== null && job !== null
      ? {
          source: state.search.source,
          matches: job.matches.size,
          done: job.done,
          scanned: job.scanned,
          total: store.list(job.nodeIndex, 'all', false).length,
        }
      : null;

  return (
    <Box flexDirection="column" width={layout.width} height={layout.height}>
      <TitleBar store={store} state={state} roots={props.roots ?? ''} width={layout.width} />
      <Body state={state} store={store} layout={layout} cache={cache} job={job} />
      <MessageLine state={state} search={state.mode === 'browse' ? searchStatus : null} width={layout.width} />
      <KeyHints state={state} width={layout.width} />
    </Box>
  );
}

function Body({ state, store, layout, cache, job }: { state: State; store: IndexStore; layout: Layout; cache: RecordRowsCache; job: SearchJob | null }) {
  const overlay = state.overlay;
  if (overlay?.kind === 'help') return <HelpPanel width={layout.width} height={layout.body} top={overlay.top} />;
  if (overlay?.kind === 'stats') return <StatsPanel store={store} nodeIndex={state.treeCursor} width={layout.width} height={layout.body} />;
  if (overlay?.kind === 'group') {
    const members = cache.group(overlay.entry);
    const top = follow(overlay.top, overlay.cursor, layout.overlayRows, members.length);
    return <GroupPanel store={store} members={members} cursor={overlay.cursor} top={top} width={layout.width} height={layout.body} marked={state.marked} />;
  }
  const regex = state.search?.regex ?? null;
  if (state.mode === 'record' && state.recordEntry >= 0) {
    const entry = state.recordEntry;
    const marked = state.marked.has(entry);
    const rows = state.recordPane === 'chat' ? cache.chatRows(entry, layout.width, state.open, state.recordRun).rows : cache.metaRows(entry, layout.width, marked);
    const storedTop = state.recordPane === 'chat' ? state.chatTop : state.metaTop;
    const top = Math.max(0, Math.min(storedTop, rows.length - layout.recordRows));
    return (
      <RecordView
        info={store.info(entry)}
        marked={marked}
        groupSize={store.groupSizeOf(entry)}
        pane={state.recordPane}
        rows={rows}
        top={top}
        count={layout.recordRows}
        width={layout.width}
        regex={regex}
      />
    );
  }
  const list = state.view === 'runs' ? store.runsOf(state.treeCursor, state.filter) : store.list(state.treeCursor, state.filter, state.hideDuplicates, state.order);
  const listCursor = Math.max(0, Math.min(state.listCursor, list.length - 1));
  const treeCursor = Math.max(0, Math.min(state.treeCursor, store.tree.length - 1));
  const separator = [];
  for (let k = 0; k < layout.body; k++) separator.push(<Text key={k} dimColor>│</Text>);
  // What the records list and the runs list both take.
  const listProps = {
    store,
    nodeIndex: treeCursor,
    list,
    width: layout.listWidth,
    rows: layout.listRows,
    cursor: listCursor,
    top: follow(state.listTop, listCursor, layout.listRows, list.length),
    focused: state.pane === 'list',
    filter: state.filter,
  };
  return (
    <Box flexDirection="row" height={layout.body}>
      <TreePane
        store={store}
        width={layout.treeWidth}
        rows={layout.treeRows}
        cursor={treeCursor}
        top={follow(state.treeTop, treeCursor, layout.treeRows, store.tree.length)}
        focused={state.pane === 'tree'}
      />
      <Box flexDirection="column" width={1}>
        {separator}
      </Box>
      {state.view === 'runs' ? <RunsPane {...listProps} /> : (
        <ListPane
          {...listProps}
          hideDuplicates={state.hideDuplicates}
          marked={state.marked}
          regex={regex}
          isMatch={(entry) => job?.matches.has(entry) ?? false}
        />
      )}
    </Box>
  );
}
