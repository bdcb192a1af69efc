/**
 * Progress on stderr for long runs: only when stderr is a terminal, and only once a run
 * has taken a second, so quick runs and pipes stay quiet.
 */
const DELAY_MS = 1000;
const INTERVAL_MS = 200;

export class Progress {
  private readonly started = Date.now();
  private lastDraw = 0;
  private drawn = false;
  files = 0;
  records = 0;
  bytes = 0;

  constructor(
    private readonly totalFiles: number,
    private readonly enabled: boolean = process.stderr.isTTY === true && process.env.CI !== 'true',
  ) {}

  tick(): void {
    if (!this.enabled) return;
    const now = Date.now();
    if (now - this.started < DELAY_MS || now - this.lastDraw < INTERVAL_MS) return;
    this.lastDraw = now;
    const seconds = (now - this.started) / 1000;
    const rate = this.bytes / 1e6 / seconds;
    process.stderr.write(
      `\r\x1b[Kfiles ${this.files}/${this.totalFiles}  records ${this.records.toLocaleString('en-US')}  ${(this.bytes / 1e6).toFixed(0)} MB  ${rate.toFixed(0)} MB/s`,
    );
    this.drawn = true;
  }

  done(): void {
    if (this.drawn) process.stderr.write('\r\x1b[K');
  }
}
