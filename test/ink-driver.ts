/** Drives an ink app rendered with ink-testing-library: read frames, wait for text, press keys. */
import assert from 'node:assert/strict';
import type { render } from 'ink-testing-library';

export const KEYS = {
  enter: '\r',
  esc: '\x1b',
  tab: '\t',
  down: '\x1b[B',
  up: '\x1b[A',
  pageDown: '\x1b[6~',
  backspace: '\x7f',
};

// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07/g;
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export function driver(ui: ReturnType<typeof render>, waitTries = 200) {
  const frame = (): string => (ui.lastFrame() ?? '').replace(ANSI, '');
  const waitFor = async (test: RegExp | string | ((f: string) => boolean), what = String(test)): Promise<string> => {
    const check = typeof test === 'function' ? test : (f: string) => (typeof test === 'string' ? f.includes(test) : test.test(f));
    for (let i = 0; i < waitTries; i++) {
      const f = frame();
      if (check(f)) return f;
      await sleep(10);
    }
    assert.fail(`timed out waiting for ${what}; last frame:\n${frame()}`);
  };
  /** Waits until no new frame has come for a while (renders lag behind keys on a busy machine). */
  const settle = async (): Promise<void> => {
    for (let i = 0; i < 50; i++) {
      const count = ui.frames.length;
      await sleep(40);
      if (ui.frames.length === count) return;
    }
  };
  const press = async (...keys: string[]): Promise<string> => {
    for (const key of keys) {
      ui.stdin.write(key);
      // A lone Esc is told from the start of a sequence on the next turn of the event loop.
      await sleep(key === KEYS.esc ? 30 : 10);
    }
    await settle();
    return frame();
  };
  return { frame, waitFor, settle, press };
}
