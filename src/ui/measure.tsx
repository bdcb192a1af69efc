/**
 * For the benchmark: how long `traces browse` takes to put its first record row on screen.
 * Renders the real app in-process into an in-memory terminal (ink's debug mode writes each
 * frame whole) and stops the clock at the first frame holding a record row.
 */
import { EventEmitter } from 'node:events';
import { render } from 'ink';
import { App } from './App.js';
import { IndexStore } from './index-store.js';

class MemoryStdout extends EventEmitter {
  isTTY = true;
  lastFrame = '';
  constructor(
    readonly columns: number,
    readonly rows: number,
    private readonly onFrame: (frame: string) => void,
  ) {
    super();
  }
  write = (frame: string): boolean => {
    this.lastFrame = frame;
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

/** A list row: status glyph, duplicate flag, then the `MM-DD HH:MM:SS` time column. */
export const RECORD_ROW = /[✓✗∅]. \d\d-\d\d \d\d:\d\d:\d\d/;

export interface MeasureOptions {
  width?: number;
  height?: number;
  /** Give up after this many seconds. */
  timeoutSeconds?: number;
}

/**
 * Seconds from start (discovery included) to the first rendered frame with a record row,
 * browsing `roots` at 100x30 by default. Rejects when no row shows within the timeout.
 */
export async function measureFirstRow(roots: readonly string[], options: MeasureOptions = {}): Promise<number> {
  const width = options.width ?? 100;
  const height = options.height ?? 30;
  const started = performance.now();
  const store = await IndexStore.open(roots);
  let resolveRow!: (seconds: number) => void;
  const firstRow = new Promise<number>((resolve) => (resolveRow = resolve));
  const stdout = new MemoryStdout(width, height, (frame) => {
    if (RECORD_ROW.test(frame)) resolveRow((performance.now() - started) / 1000);
  });
  const instance = render(<App store={store} width={width} height={height} copy={() => {}} writeFile={() => {}} onQuit={() => {}} />, {
    stdout: stdout as unknown as NodeJS.WriteStream,
    stdin: new MemoryStdin() as unknown as NodeJS.ReadStream,
    stderr: new MemoryStdout(width, height, () => {}) as unknown as NodeJS.WriteStream,
    debug: true,
    exitOnCtrlC: false,
    patchConsole: false,
  });
  let timer: NodeJS.Timeout | null = null;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no record row within ${options.timeoutSeconds ?? 60} s`)), (options.timeoutSeconds ?? 60) * 1000);
  });
  try {
    return await Promise.race([firstRow, timeout]);
  } finally {
    if (timer !== null) clearTimeout(timer);
    instance.unmount();
    instance.cleanup();
    store.close();
  }
}
