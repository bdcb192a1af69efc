/** Runs the ink application in the real terminal until the user quits (see launch.ts for the start). */
import { render } from 'ink';
import type React from 'react';
import { App } from './App.js';
import type { IndexStore } from './index-store.js';
import { ScreenStream } from './screen-stream.js';
import { CLEAR, osc52, SYNC_END, SYNC_START } from './terminal.js';

export interface RunOptions {
  title: string;
  excludePath: string;
  preloaded: ReadonlySet<string>;
  /** The trees read (real paths), which w's prompt may not name. */
  inputs: readonly string[];
  initialMessage?: string;
}

/** Draws the browser over the alternate screen the caller entered; closes the store on the way out. */
export async function runApp(store: IndexStore, options: RunOptions): Promise<number> {
  const stdout = process.stdout;
  // The size is given to the app from here: after a resize the terminal has reflowed what
  // was drawn, so the screen is cleared first and the app redrawn whole at the new size.
  // One row stays free: ink redraws the whole screen on every frame that fills it.
  const sizeNow = (): { width: number; height: number } => ({ width: stdout.columns || 80, height: (stdout.rows || 24) - 1 });
  let size = sizeNow();
  const app = (): React.ReactElement => (
    <App
      store={store}
      roots={options.title}
      width={size.width}
      height={size.height}
      excludePath={options.excludePath}
      preloadedIds={options.preloaded}
      inputs={options.inputs}
      initialMessage={options.initialMessage}
      copy={(text) => stdout.write(osc52(text))}
    />
  );
  const screen = new ScreenStream(stdout);
  let timer: NodeJS.Timeout | null = null;
  let onResize: (() => void) | null = null;
  try {
    // Replace the pre-paint in one synchronized update (ink ends it with its first frame).
    stdout.write(`${SYNC_START}${CLEAR}`);
    const instance = render(app(), { stdout: screen as unknown as NodeJS.WriteStream, exitOnCtrlC: false, patchConsole: true, maxFps: 30 });
    stdout.write(SYNC_END);
    onResize = () => {
      if (timer !== null) clearTimeout(timer);
      timer = setTimeout(() => {
        timer = null;
        const next = sizeNow();
        if (next.width === size.width && next.height === size.height) return;
        size = next;
        instance.clear();
        stdout.write(CLEAR);
        screen.invalidate();
        instance.rerender(app());
      }, 40);
    };
    stdout.on('resize', onResize);
    await instance.waitUntilExit();
  } finally {
    if (timer !== null) clearTimeout(timer);
    if (onResize !== null) stdout.off('resize', onResize);
    screen.detach();
    store.close();
  }
  return 0;
}
