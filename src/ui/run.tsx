/** Runs the browser in the real terminal: alternate screen in, index in the background, screen restored out. */
import { render } from 'ink';
import type React from 'react';
import path from 'node:path';
import { UserError } from '../errors.js';
import { App } from './App.js';
import { readExcludeFile } from './exclude-file.js';
import { IndexStore } from './index-store.js';
import { DEFAULT_EXCLUDE_FILE } from './state.js';
import { CLEAR, enterAlternateScreen, osc52 } from './terminal.js';

export interface BrowseOptions {
  /** The exclusion file `w` writes; its call_ids, when it exists, start marked. */
  exclude?: string;
}

export async function runBrowse(roots: readonly string[], options: BrowseOptions = {}): Promise<number> {
  const stdin = process.stdin;
  const stdout = process.stdout;
  if (!stdin.isTTY || !stdout.isTTY) throw new UserError('browse is interactive: run it in a terminal (stdin and stdout must be a TTY)');
  const excludePath = options.exclude ?? DEFAULT_EXCLUDE_FILE;
  let preloaded: Set<string>;
  try {
    preloaded = readExcludeFile(excludePath);
  } catch (error) {
    throw new UserError(`cannot read ${excludePath}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const store = await IndexStore.open(roots, { watchCallIds: preloaded });
  const screen = enterAlternateScreen(stdout);
  // The size is given to the app from here: after a resize the terminal has reflowed what
  // was drawn, so the screen is cleared first and the app redrawn whole at the new size.
  const sizeNow = (): { width: number; height: number } => ({ width: stdout.columns || 80, height: (stdout.rows || 24) - 1 });
  let size = sizeNow();
  const app = (): React.ReactElement => (
    <App
      store={store}
      roots={roots.length > 0 ? roots.join(' ') : '(default root)'}
      width={size.width}
      height={size.height}
      excludePath={excludePath}
      preloadedIds={preloaded}
      initialMessage={preloaded.size > 0 ? `${preloaded.size} call_id${preloaded.size === 1 ? '' : 's'} from ${path.basename(excludePath)} start marked (w rewrites it)` : undefined}
      copy={(text) => stdout.write(osc52(text))}
    />
  );
  let onResize: (() => void) | null = null;
  let timer: NodeJS.Timeout | null = null;
  try {
    const instance = render(app(), { exitOnCtrlC: false, patchConsole: true, maxFps: 30 });
    onResize = () => {
      if (timer !== null) clearTimeout(timer);
      timer = setTimeout(() => {
        timer = null;
        const next = sizeNow();
        if (next.width === size.width && next.height === size.height) return;
        size = next;
        instance.clear();
        stdout.write(CLEAR);
        instance.rerender(app());
      }, 40);
    };
    stdout.on('resize', onResize);
    await instance.waitUntilExit();
  } finally {
    if (timer !== null) clearTimeout(timer);
    if (onResize !== null) stdout.off('resize', onResize);
    store.close();
    screen.restore();
  }
  return 0;
}
