/**
 * Issue 15, item 11: every command that reads trees or files draws progress on a terminal
 * (files, records, bytes, rate, ETA) and nothing when stderr is a pipe. The terminal is a
 * real pseudo-terminal from util-linux `script`; TRACES_PROGRESS_DELAY_MS=0 draws from the
 * first piece of work, so the check waits for no clock.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { Progress } from '../src/progress.js';
import { REPO, SAMPLES, runCli, tempDir } from './helpers.js';

const BIN = path.join(REPO, 'bin', 'traces.js');
const hasScript = spawnSync('script', ['--version'], { encoding: 'utf8' }).status === 0;
const ENV = { TRACES_PROGRESS_DELAY_MS: '0', CI: '' };
const LINE = /\r\x1b\[K(reading|copying|writing|validating) {2}files \d+\/\d+ {2}records [\d,]+ {2}\d+(\.\d+)? [KMG]B of \d+(\.\d+)? [KMG]B {2}\d+(\.\d+)? [KMG]B\/s/;

const quote = (arg: string) => `'${arg.replaceAll("'", "'\\''")}'`;

/** stderr as a terminal sees it: the command runs under `script`, its stdout thrown away. */
function onTerminal(args: string[]): { status: number; screen: string } {
  const command = `${[process.execPath, BIN, ...args].map(quote).join(' ')} > /dev/null`;
  const result = spawnSync('script', ['-qec', command, '/dev/null'], { cwd: REPO, env: { ...process.env, ...ENV }, encoding: 'utf8' });
  return { status: result.status ?? -1, screen: result.stdout };
}

describe('progress on a terminal, nothing in a pipe', { skip: hasScript ? false : 'util-linux `script` is not installed: no pseudo-terminal to test with' }, () => {
  let out = '';
  let dataset = '';

  before(() => {
    out = tempDir();
    dataset = path.join(out, 'dataset');
    const made = runCli(['export', SAMPLES, '--format', 'openai', '--out', dataset]);
    assert.equal(made.status, 0, made.stderr);
    mkdirSync(path.join(out, 'copies'));
  });

  const commands: [string, () => string[], string[]][] = [
    ['stats', () => ['stats', SAMPLES], ['reading']],
    ['verify', () => ['verify', SAMPLES], ['reading']],
    ['scan', () => ['scan', SAMPLES], ['reading']],
    ['runs', () => ['runs', SAMPLES], ['reading']],
    ['dedupe --dry-run', () => ['dedupe', SAMPLES, '--dry-run'], ['reading']],
    ['filter', () => ['filter', SAMPLES, '--out', path.join(out, 'copies', 'filter')], ['reading', 'copying']],
    ['export', () => ['export', SAMPLES, '--format', 'nemo', '--out', path.join(out, 'copies', 'export')], ['reading', 'writing']],
    ['validate', () => ['validate', path.join(dataset, 'training.jsonl'), '--format', 'openai'], ['validating']],
  ];

  for (const [name, args, phases] of commands) {
    it(`${name}: a progress line on a terminal, cleared at the end; none when piped`, () => {
      const tty = onTerminal(args());
      assert.ok(tty.status === 0 || tty.status === 1, tty.screen);
      assert.match(tty.screen, LINE, JSON.stringify(tty.screen));
      for (const phase of phases) assert.ok(tty.screen.includes(`\x1b[K${phase}  files`), `${phase} in ${JSON.stringify(tty.screen)}`);
      // The last progress line is erased before the summary, so no stale bar stays on screen.
      const lastDraw = tty.screen.lastIndexOf('\r\x1b[K');
      assert.ok(!/files \d+\/\d+/.test(tty.screen.slice(lastDraw + 4)), 'the line is cleared');

      const piped = runCli(args().map((a) => (a.startsWith(path.join(out, 'copies')) ? `${a}-piped` : a)), { env: ENV });
      assert.ok(piped.status === 0 || piped.status === 1, piped.stderr);
      assert.doesNotMatch(piped.stderr, /\r|\x1b\[K|files \d+\/\d+/);
    });
  }
});

describe('the progress line', () => {
  it('shows files, records, bytes of the total, the rate and an ETA from the rate', () => {
    const progress = new Progress(8, false, { label: 'indexing', totalBytes: 300e6 });
    progress.advance({ files: 2, records: 12_345, bytes: 100e6 });
    assert.equal(progress.line(4), 'indexing  files 2/8  records 12,345  100.0 MB of 300.0 MB  25.0 MB/s  ETA 8s');
    progress.advance({ files: 6, bytes: 200e6 });
    assert.equal(progress.line(10), 'indexing  files 8/8  records 12,345  300.0 MB of 300.0 MB  30.0 MB/s');
    assert.equal(new Progress(3, false).line(2), 'reading  files 0/3  records 0  0 KB  0 KB/s');
  });

  it('counts minutes and hours in the ETA', () => {
    const progress = new Progress(1, false, { totalBytes: 2e9 });
    progress.advance({ bytes: 1e6 });
    assert.match(progress.line(1), /ETA 33m1\ds$/);
    assert.match(progress.line(10), /ETA 5h33m$/);
  });
});
