/**
 * Renders the browser into an in-memory terminal until the first frame that holds a record
 * row: what `measureFirstRow` times, in a child process (see first-row-probe.ts).
 */
import { EventEmitter } from 'node:events';
import { render } from 'ink';
import { App } from './App.js';
import type { IndexStore } from './index-store.js';
import { RECORD_ROW } from './rows.js';


class MemoryStdout extends EventEmitter {
  isTTY = true;
  constructor(
    readonly columns: number,
    readonly rows: number,
    private readonly onFrame: (frame: string) => void,
  ) {
    super();
  }
  write = (frame: string): boolean => {
    this.onFrame(frame);
    return true;
  };
}

class MemoryStdin extends EventEmitter {
  isTTY = true;
  setEncoding(): void {}
  setRawMode(): void {}
  resume(): void {}
  pause(): void {}
  ref(): void {}
  unref(): void {}
  read(): null {
    return null;
  }
}

export async function renderUntilFirstRow(store: IndexStore, width = 100, height = 30, timeoutSeconds = 60): Promise<void> {
  let resolveRow!: () => void;
  const firstRow = new Promise<void>((resolve) => (resolveRow = resolve));
  const stdout = new MemoryStdout(width, height, (frame) => {
    if (RECORD_ROW.test(frame)) resolveRow();
  });
  // Debug mode writes every frame whole, so one frame is enough to look at.
  const instance = render(<App store={store} width={width} height={height - 1} copy={() => {}} writeFile={() => {}} onQuit={() => {}} />, {
    stdout: stdout as unknown as NodeJS.WriteStream,
    stdin: new MemoryStdin() as unknown as NodeJS.ReadStream,
    stderr: new MemoryStdout(width, height, () => {}) as unknown as NodeJS.WriteStream,
    debug: true,
    exitOnCtrlC: false,
    patchConsole: false,
  });
  let timer: NodeJS.Timeout | null = null;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no record row within ${timeoutSeconds} s`)), timeoutSeconds * 1000);
  });
  try {
    await Promise.race([firstRow, timeout]);
  } finally {
    if (timer !== null) clearTimeout(timer);
    instance.unmount();
    instance.cleanup();
  }
}
