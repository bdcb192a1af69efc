/**
 * Searching message text with a regular expression, in the background: records are read
 * back from disk a slice at a time, yielding to the event loop between slices so keys keep
 * working while a big tree is searched.
 */
import { DAMAGED, type IndexStore } from './index-store.js';
import { searchTextOf } from './record-text.js';

export type Compiled = { regex: RegExp; error: null } | { regex: null; error: string };

/** Compiles a search; smart case: case-insensitive unless the pattern has an upper-case letter. */
export function compileSearch(source: string): Compiled {
  try {
    const flags = /[A-Z]/.test(source.replace(/\\./g, '')) ? '' : 'i';
    return { regex: new RegExp(source, flags), error: null };
  } catch (error) {
    return { regex: null, error: error instanceof Error ? error.message : String(error) };
  }
}

const SLICE_MS = 12;

function nextTick(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export class SearchJob {
  readonly matches = new Set<number>();
  /** How many entries of the node have been searched. */
  scanned = 0;
  done = false;
  private cancelled = false;

  constructor(
    private readonly store: IndexStore,
    readonly regex: RegExp,
    readonly nodeIndex: number,
    private readonly onUpdate: () => void = () => {},
  ) {}

  start(): this {
    void this.run();
    return this;
  }

  cancel(): void {
    this.cancelled = true;
  }

  /** Whether entry `i`'s messages (or exception, or damaged line) match. */
  test(i: number): boolean {
    const store = this.store;
    this.regex.lastIndex = 0;
    try {
      if (store.statusOf(i) === DAMAGED) return this.regex.test(store.readBytes(i).toString('utf8'));
      const record = store.record(i, false);
      if (record === null) return false;
      return this.regex.test(searchTextOf(record.raw, record.span('messages')!, record.exception));
    } catch {
      return false;
    }
  }

  private async run(): Promise<void> {
    const store = this.store;
    for (;;) {
      if (this.cancelled || store.isClosed) return;
      const list = store.list(this.nodeIndex, 'all', false);
      const until = performance.now() + SLICE_MS;
      while (this.scanned < list.length && performance.now() < until) {
        const i = list[this.scanned++];
        if (this.test(i)) this.matches.add(i);
      }
      if (this.scanned >= list.length) {
        if (store.progress.done) {
          this.done = true;
          this.onUpdate();
          return;
        }
        this.onUpdate();
        await new Promise<void>((resolve) => store.once('change', () => resolve()));
      } else {
        this.onUpdate();
        await nextTick();
      }
    }
  }
}
