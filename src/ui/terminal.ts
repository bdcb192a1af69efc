/**
 * The terminal around the browser: the alternate screen (ink 6 has no option for it), the
 * cursor, and the clipboard. Leaving restores the shell's screen on quit, SIGINT, SIGTERM,
 * SIGHUP, an uncaught error or any exit.
 */
import { writeSync } from 'node:fs';

const ENTER = '\x1b[?1049h\x1b[H\x1b[2J\x1b[?25l';
const LEAVE = '\x1b[?25h\x1b[?1049l';
export const CLEAR = '\x1b[H\x1b[2J';
/** Synchronized output (DEC mode 2026): the terminal shows what comes between at once. */
export const SYNC_START = '\x1b[?2026h';
export const SYNC_END = '\x1b[?2026l';

export interface Screen {
  restore(): void;
}

export function enterAlternateScreen(stream: NodeJS.WriteStream = process.stdout): Screen {
  let restored = false;
  const fd = (stream as NodeJS.WriteStream & { fd?: number }).fd ?? 1;
  const restore = (): void => {
    if (restored) return;
    restored = true;
    try {
      // Synchronous: this also runs from 'exit', where pending async writes are lost.
      writeSync(fd, LEAVE);
    } catch {
      // The terminal is gone.
    }
    process.off('exit', restore);
    for (const signal of SIGNALS) process.off(signal, onSignal[signal]);
  };
  const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  const onSignal: Record<string, () => void> = {};
  for (const signal of SIGNALS) {
    onSignal[signal] = () => {
      restore();
      process.exit(signal === 'SIGINT' ? 130 : signal === 'SIGTERM' ? 143 : 129);
    };
  }
  writeSync(fd, ENTER);
  process.on('exit', restore);
  for (const signal of SIGNALS) process.on(signal, onSignal[signal]);
  return { restore };
}

/** OSC 52: asks the terminal to put `text` on the system clipboard (works over ssh too). */
export function osc52(text: string): string {
  return `\x1b]52;c;${Buffer.from(text, 'utf8').toString('base64')}\x07`;
}
