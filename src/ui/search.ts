/**
 * Searching message text with a regular expression, in the background: records are read
 * back from disk a slice at a time, yielding to the event loop between slices so keys keep
 * working while a big tree is searched.
 */
import { DAMAGED, type IndexStore } from './index-store.js';
import { searchTextOf } from './record-text.js';

/** `error` says what is wrong with the pattern, once: `unterminated group`. */
export type Compiled = { regex: RegExp; error: null } | { regex: null; error: string };

/**
 * What is wrong, without V8's framing: `Invalid regular expression: /(/i: Unterminated group`
 * reads `unterminated group` (the pattern is shown beside it by whoever reports it).
 */
function regexProblem(message: string, source: string, flags: string): string {
  let text = message.replace(/^Invalid regular expression: /, '');
  const framed = `/${source}/${flags}: `;
  if (text.startsWith(framed)) text = text.slice(framed.length);
  return text.length > 0 ? text[0].toLowerCase() + text.slice(1) : message;
}

/** Compiles a search; smart case: case-insensitive unless the pattern has an upper-case letter. */
export function compileSearch(source: string): Compiled {
  const flags = /[A-Z]/.test(source.replace(/\\./g, '')) ? '' : 'i';
  try {
    return { regex: new RegExp(source, flags), error: null };
  } catch (error) {
    return { regex: null, error: error instanceof Error ? regexProblem(error.message, source, flags) : String(error) };
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
