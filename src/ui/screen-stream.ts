/**
 * What ink writes to, standing in for the terminal: ink (without its incremental mode, which
 * misplaces frames that end with a newline) erases every line and writes the whole frame
 * again on each update. On the alternate screen the frame always starts at the top left, so
 * this stream turns each frame into writes of the rows that changed, addressed absolutely:
 * moving the cursor down a list rewrites two rows, not thirty, and nothing flickers.
 */
import { EventEmitter } from 'node:events';

// eslint-disable-next-line no-control-regex
const ERASE_PREFIX = /^(?:\x1b\[2K(?:\x1b\[1A)?)+\x1b\[G/;
// eslint-disable-next-line no-control-regex
const ERASE_ONLY = /^(?:\x1b\[2K(?:\x1b\[1A)?)+\x1b\[G$/;

export class ScreenStream extends EventEmitter {
  readonly isTTY = true;
  private previous: string[] = [];
  private readonly onResize = (): void => {
    this.emit('resize');
  };

  constructor(private readonly out: NodeJS.WriteStream) {
    super();
    out.on('resize', this.onResize);
  }

  get columns(): number {
    return this.out.columns;
  }

  get rows(): number {
    return this.out.rows;
  }

  /** The screen was cleared behind our back: the next frame is written whole. */
  invalidate(): void {
    this.previous = [];
  }

  detach(): void {
    this.out.off('resize', this.onResize);
  }

  write(data: string | Uint8Array, encodingOrCallback?: unknown, callback?: unknown): boolean {
    const text = typeof data === 'string' ? data : Buffer.from(data).toString('utf8');
    const done = typeof encodingOrCallback === 'function' ? encodingOrCallback : callback;
    let output: string;
    if (ERASE_ONLY.test(text)) output = this.frame([]);
    else if (text.includes('\n')) {
      const lines = text.replace(ERASE_PREFIX, '').split('\n');
      if (lines[lines.length - 1] === '') lines.pop();
      output = this.frame(lines);
    } else output = text; // Cursor, synchronized-output and other control sequences.
    return this.out.write(output, typeof done === 'function' ? (done as (error?: Error | null) => void) : undefined);
  }

  /** Escape sequences that turn the previous frame into `lines`. */
  frame(lines: string[]): string {
    let out = '';
    const rows = Math.max(lines.length, this.previous.length);
    for (let i = 0; i < rows; i++) {
      const next = lines[i];
      if (next === this.previous[i]) continue;
      out += `\x1b[${i + 1};1H\x1b[2K${next ?? ''}`;
    }
    this.previous = lines;
    // Park the cursor below the frame, where ink believes it is.
    return `${out}\x1b[${lines.length + 1};1H`;
  }
}
