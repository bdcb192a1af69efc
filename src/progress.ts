/**
 * Progress on stderr for long runs: only when stderr is a terminal, and only once a run
 * has taken a second, so quick runs and pipes stay quiet.
 *
 * Any step that walks files can use it: set `files`, `records` and `bytes` as work is done
 * (or call `advance`), `tick()` after each piece, `done()` at the end (also on failure).
 *   const progress = new Progress(files.length, undefined, { label: 'indexing', totalBytes });
 *
 * TRACES_PROGRESS_DELAY_MS (tests, tuning) replaces the one-second wait, so a test can see
 * the line on a short run; the line still needs a terminal.
 */
import { formatCount } from './format.js';

const DEFAULT_DELAY_MS = 1000;
const INTERVAL_MS = 200;

function delayMs(): number {
  const fromEnv = Number(process.env.TRACES_PROGRESS_DELAY_MS);
  return process.env.TRACES_PROGRESS_DELAY_MS !== undefined && process.env.TRACES_PROGRESS_DELAY_MS !== '' && fromEnv >= 0 ? fromEnv : DEFAULT_DELAY_MS;
}

/** Whether progress may be drawn: stderr is a terminal and no CI log would fill with carriage returns. */
export function progressWanted(): boolean {
  return (process.stderr.isTTY === true || process.env[PROGRESS_COLUMNS] !== undefined) && process.env.CI !== 'true';
}

/**
 * Set for a child process whose stderr its parent forwards to a terminal (`sql`'s engine,
 * src/engine/child.ts): the terminal's width, where the child's own stderr is a pipe.
 */
export const PROGRESS_COLUMNS = 'TRACES_PROGRESS_COLUMNS';

function terminalColumns(): number | undefined {
  return process.stderr.columns ?? (Number(process.env[PROGRESS_COLUMNS]) || undefined);
}

/** `850 KB`, `12.3 MB`, `1.02 GB`, decimal units as file managers and `stats` show sizes. */
function megabytes(bytes: number): string {
  if (bytes >= 1e9) return `${(bytes / 1e9).toFixed(2)} GB`;
  if (bytes >= 1e6) return `${(bytes / 1e6).toFixed(1)} MB`;
  return `${Math.round(bytes / 1e3)} KB`;
}

function eta(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '';
  if (seconds < 60) return `${Math.ceil(seconds)}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m${String(Math.round(seconds % 60)).padStart(2, '0')}s`;
  return `${Math.floor(seconds / 3600)}h${String(Math.round((seconds % 3600) / 60)).padStart(2, '0')}m`;
}

export class Progress {
  private readonly started = Date.now();
  private readonly delay = delayMs();
  private lastDraw = 0;
  private drawn = false;
  private readonly label: string;
  private readonly totalBytes: number | null;
  files = 0;
  records = 0;
  bytes = 0;

  constructor(
    private readonly totalFiles: number,
    private readonly enabled: boolean = progressWanted(),
    more: {
      /** What the run is doing: `reading`, `copying`, `validating`. */
      label?: string;
      /** Bytes the run will go through: with it the line shows how far along and an ETA. */
      totalBytes?: number;
    } = {},
  ) {
    this.label = more.label ?? 'reading';
    this.totalBytes = more.totalBytes !== undefined && more.totalBytes > 0 ? more.totalBytes : null;
  }

  advance(done: { files?: number; records?: number; bytes?: number }): void {
    this.files += done.files ?? 0;
    this.records += done.records ?? 0;
    this.bytes += done.bytes ?? 0;
    this.tick();
  }

  /** The line as drawn, for the given elapsed seconds. */
  line(seconds: number): string {
    const parts = [this.label, `files ${formatCount(this.files)}/${formatCount(this.totalFiles)}`, `records ${formatCount(this.records)}`];
    const rate = seconds > 0 ? this.bytes / seconds : 0;
    if (this.totalBytes !== null) {
      parts.push(`${megabytes(this.bytes)} of ${megabytes(this.totalBytes)}`, `${megabytes(rate)}/s`);
      if (rate > 0 && this.bytes < this.totalBytes) parts.push(`ETA ${eta((this.totalBytes - this.bytes) / rate)}`);
    } else {
      parts.push(megabytes(this.bytes), `${megabytes(rate)}/s`);
    }
    return parts.join('  ');
  }

  tick(): void {
    if (!this.enabled) return;
    const now = Date.now();
    if (now - this.started < this.delay || now - this.lastDraw < INTERVAL_MS) return;
    this.lastDraw = now;
    const line = this.line((now - this.started) / 1000);
    const width = terminalColumns();
    // A line longer than the terminal would wrap, and \r only returns to the start of the last row.
    process.stderr.write(`\r\x1b[K${width !== undefined && width > 1 && line.length >= width ? line.slice(0, width - 1) : line}`);
    this.drawn = true;
  }

  done(): void {
    if (this.drawn) process.stderr.write('\r\x1b[K');
    this.drawn = false;
  }
}
