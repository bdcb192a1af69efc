/**
 * `traces browse` up to the point where ink is needed. This module is light (no React, no
 * ink): the command imports it statically, and it loads the ink application only when the
 * browser actually starts, while discovery and the first index batches run, so loading ink
 * (about half a second) overlaps with reading the tree instead of adding to it.
 */
import { UserError } from '../errors.js';
import { formatBytes } from '../format.js';
import type { SourceKind } from '../record.js';
import { DEFAULT_EXCLUDE_FILE, preloadMessage, readExcludeFile, readText } from './exclude-file.js';
import { IndexStore } from './index-store.js';
import { prepaint } from './prepaint.js';
import { enterAlternateScreen } from './terminal.js';

export { DEFAULT_EXCLUDE_FILE };

export interface BrowseOptions {
  /** The exclusion file `w` writes; its call_ids, when it exists, start marked. */
  exclude?: string;
  /** `--source`: read every file as this format instead of telling it from the content. */
  source?: SourceKind;
  /** The trees read (real paths): the exclusion file, wherever w's prompt names it, is never in them. */
  inputs?: readonly string[];
}

/** Resolves once the first batch is indexed (or there is nothing to index). */
export function firstBatch(store: IndexStore): Promise<void> {
  if (store.count > 0 || store.progress.done) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      store.off('change', done);
      resolve();
    };
    store.on('change', done);
  });
}

function startMessage(store: IndexStore, preloaded: ReadonlySet<string>, excludePath: string, roots: readonly string[]): string | undefined {
  const parts: string[] = [];
  const listed = preloadMessage(excludePath, preloaded.size, readText(excludePath), roots);
  if (listed !== undefined) parts.push(listed);
  const unread = store.otherFiles.length - (store.allFiles.length - store.files.length);
  if (unread > 0) parts.push(`${unread} file${unread === 1 ? '' : 's'} of other recorders could not be read (s shows why)`);
  return parts.length > 0 ? parts.join('; ') : undefined;
}

/** How often the pre-paint follows indexing: about the app's own frame rate (hooks.ts). */
const REPAINT_MS = 80;

/** Writes the pre-paint now and again as the index grows (at once when it is done); returns the stop. */
export function paintUntilLoaded(store: IndexStore, stdout: NodeJS.WriteStream, title: string, loaded: () => boolean): () => void {
  let timer: NodeJS.Timeout | null = null;
  let last = 0;
  const paint = (): void => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    last = Date.now();
    if (!loaded()) stdout.write(prepaint(store, stdout.columns || 80, stdout.rows || 24, title));
  };
  const onChange = (): void => {
    if (timer === null) timer = setTimeout(paint, Math.max(0, last + REPAINT_MS - Date.now()));
  };
  paint();
  store.on('change', onChange);
  store.on('done', paint);
  return () => {
    if (timer !== null) clearTimeout(timer);
    store.off('change', onChange);
    store.off('done', paint);
  };
}

export async function browse(roots: readonly string[], options: BrowseOptions = {}): Promise<number> {
  const stdin = process.stdin;
  const stdout = process.stdout;
  // Before the terminal check: a file that could not be saved back is said wherever browse runs.
  const excludePath = options.exclude ?? DEFAULT_EXCLUDE_FILE;
  const preloaded = readExcludeFile(excludePath);
  if (!stdin.isTTY || !stdout.isTTY) throw new UserError('browse is interactive: run it in a terminal (stdin and stdout must be a TTY)');
  // React's development build is several times slower; this is an end-user program.
  process.env.NODE_ENV ??= 'production';
  const title = roots.length > 0 ? roots.join(' ') : '(default root)';
  const screen = enterAlternateScreen(stdout);
  // Raw mode from the start: keys typed while the tree is read and ink loads are neither
  // echoed over the first screen nor held in the line buffer; ink reads them when it starts.
  stdin.setRawMode(true);
  try {
    // Something on screen at once, until ink draws the first frame over it.
    stdout.write(`\x1b[7m traces browse \x1b[27m  ${title}  starting…\x1b[H`);
    // Other recorders' files are read whole before the index starts: say how far, on the same line.
    let shownMb = -1;
    const onOtherFilesProgress = (bytesRead: number, bytesTotal: number): void => {
      const mb = Math.floor(bytesRead / (1 << 20));
      if (mb === shownMb) return;
      shownMb = mb;
      stdout.write(`\x1b[7m traces browse \x1b[27m  ${title}  reading other recorders' files: ${formatBytes(bytesRead)} of ${formatBytes(bytesTotal)}\x1b[K\x1b[H`);
    };
    const storeReady = IndexStore.open(roots, { watchCallIds: preloaded, otherSources: true, source: options.source, onOtherFilesProgress });
    const appReady = import('./run.js');
    let appLoaded = false;
    appReady.then(
      () => (appLoaded = true),
      () => {},
    );
    const store = await storeReady;
    if (store.allFiles.length === 0) {
      store.close();
      const unread = store.otherFiles.length > 0 ? `; ${store.otherFiles.length} files of other recorders could not be read: ${store.errors.slice(0, 2).join('; ')}` : '';
      const skipped = store.skipped.length > 0 ? ` (${store.skipped.length} other files skipped)` : '';
      throw new UserError(`no trace files under ${title}${skipped}${unread}`);
    }
    let app: typeof import('./run.js');
    let stop = (): void => {};
    try {
      // Paint the first records ourselves if they are indexed before ink has loaded, and
      // keep that screen current until it has: a small tree is whole in a few milliseconds,
      // while loading ink can take seconds on a busy machine, and a frozen first screen
      // showed an indexing bar all that time.
      await Promise.race([firstBatch(store), appReady.catch(() => {})]);
      if (!appLoaded) stop = paintUntilLoaded(store, stdout, title, () => appLoaded);
      app = await appReady;
    } catch (error) {
      store.close();
      throw error;
    } finally {
      stop();
    }
    return await app.runApp(store, {
      title,
      excludePath,
      preloaded,
      inputs: options.inputs ?? [],
      initialMessage: startMessage(store, preloaded, excludePath, options.inputs ?? []),
    });
  } finally {
    if (stdin.isTTY) stdin.setRawMode(false);
    screen.restore();
  }
}
