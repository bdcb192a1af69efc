/** React hooks binding the browser to its data and its terminal. */
import { useStdout } from 'ink';
import { useEffect, useState } from 'react';
import type { IndexStore } from './index-store.js';

/**
 * Re-renders when the index grows, at most every `intervalMs`: indexing a big tree makes
 * hundreds of batches a second, the screen needs a dozen frames.
 */
export function useStoreVersion(store: IndexStore, intervalMs = 80): number {
  const [version, setVersion] = useState(store.version);
  useEffect(() => {
    let timer: NodeJS.Timeout | null = null;
    let last = 0;
    const onChange = (): void => {
      if (timer !== null) return;
      const wait = Math.max(0, last + intervalMs - Date.now());
      timer = setTimeout(() => {
        timer = null;
        last = Date.now();
        setVersion(store.version);
      }, wait);
    };
    store.on('change', onChange);
    store.on('done', onChange);
    onChange();
    return () => {
      store.off('change', onChange);
      store.off('done', onChange);
      if (timer !== null) clearTimeout(timer);
    };
  }, [store, intervalMs]);
  return version;
}

export interface Size {
  columns: number;
  rows: number;
}

/**
 * The size to draw at: fixed when given (tests), else the terminal's, following resizes.
 * One row is left free: ink clears the whole screen on every frame that fills it.
 */
export function useTerminalSize(width?: number, height?: number): Size {
  const { stdout } = useStdout();
  const read = (): Size => ({
    columns: width ?? (stdout.columns || 80),
    rows: height ?? (stdout.rows ? stdout.rows - 1 : 23),
  });
  const [size, setSize] = useState(read);
  useEffect(() => {
    if (width !== undefined && height !== undefined) {
      setSize({ columns: width, rows: height });
      return;
    }
    const onResize = (): void => setSize(read());
    stdout.on('resize', onResize);
    return () => {
      stdout.off('resize', onResize);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [stdout, width, height]);
  return size;
}
