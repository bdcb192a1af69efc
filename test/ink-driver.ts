/**
 * Drives an ink app rendered with ink-testing-library: read frames, wait for text, press keys.
 *
 * Nothing here waits for a fixed time. A key is written inside React's `act()`, which returns
 * once React has rendered and committed everything the key caused (state, effects, the new
 * frame), however slow the machine. What happens later in the background (indexing, a search
 * job) is waited for with `waitFor`, which polls the frame until it shows the expected state
 * or a generous deadline passes.
 */
import assert from 'node:assert/strict';
import { act } from 'react';
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

/** How long `waitFor` lets a background job take before the test fails: generous, for loaded machines. */
export const DEADLINE_MS = 30_000;

// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07/g;
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const actGlobal = globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean };

/**
 * Runs `work` inside React's act(): when it resolves, React has flushed every render and
 * effect the work scheduled. The act environment is on only meanwhile, so updates that come
 * later from background jobs render as usual, without act() warnings.
 */
export async function inAct(work: () => void | Promise<void>): Promise<void> {
  actGlobal.IS_REACT_ACT_ENVIRONMENT = true;
  try {
    await act(async () => {
      await work();
    });
  } finally {
    actGlobal.IS_REACT_ACT_ENVIRONMENT = false;
  }
}

export function driver(ui: ReturnType<typeof render>, deadlineMs = DEADLINE_MS) {
  const frame = (): string => (ui.lastFrame() ?? '').replace(ANSI, '');
  /** Polls the frame until `test` holds; fails after the deadline with the last frame. */
  const waitFor = async (test: RegExp | string | ((f: string) => boolean), what = String(test)): Promise<string> => {
    const check = typeof test === 'function' ? test : (f: string) => (typeof test === 'string' ? f.includes(test) : test.test(f));
    const until = Date.now() + deadlineMs;
    for (;;) {
      const f = frame();
      if (check(f)) return f;
      if (Date.now() > until) assert.fail(`timed out after ${deadlineMs} ms waiting for ${what}; last frame:\n${f}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };
  /** Writes one chunk of terminal input (a key, or several keys at once as a fast typist or a paste sends them). */
  const send = async (chunk: string): Promise<string> => {
    await inAct(async () => {
      ui.stdin.write(chunk);
      // ink holds a chunk ending in Esc until its next turn (to tell a lone Esc from the start
      // of a sequence); it scheduled that turn before ours, so after ours the Esc is handled.
      if (chunk.endsWith(KEYS.esc)) await nextTurn();
    });
    return frame();
  };
  /** Presses keys one at a time; returns the frame once the app has handled the last one. */
  const press = async (...keys: string[]): Promise<string> => {
    for (const key of keys) await send(key);
    return frame();
  };
  return { frame, waitFor, press, send };
}
