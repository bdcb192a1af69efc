/**
 * `sql` runs the engine in a child process of its own, which this process watches. DuckDB can
 * end a process outright: an exception its own threads do not catch (`CALL enable_logging(
 * storage='file', …)` under the locked configuration throws a PermissionException from its log
 * writer) calls std::terminate, exit 134, with nothing of ours run after it; and a query does
 * not stop for a signal, so Ctrl-C left the process running until SIGKILL. In a child, neither
 * reaches the command: an abort becomes one line, Ctrl-C or `--timeout` kills the child, and
 * the scratch folder (the index copy, the engine's spill files) is removed whatever happened.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { once } from 'node:events';
import { UserError } from '../errors.js';
import { whileRunning } from '../output/cleanup.js';
import { removeFolder, Scratch } from '../output/output-file.js';
import { PROGRESS_COLUMNS, progressWanted } from '../progress.js';

/** Set in the child: the scratch folder it makes and works in (the parent removes it). */
const SCRATCH_ENV = 'TRACES_SQL_SCRATCH';

/** In the child, its scratch folder, made now; null in the process that runs the child. */
export function childScratch(): Scratch | null {
  const dir = process.env[SCRATCH_ENV];
  return dir === undefined || dir === '' ? null : Scratch.at(dir);
}

/** Whether this process is the engine's child. */
export function inEngineChild(): boolean {
  const dir = process.env[SCRATCH_ENV];
  return dir !== undefined && dir !== '';
}

const ABORT = 'terminate called after throwing';

/** One line for what the engine said as it aborted: `terminate called after throwing an instance of 'duckdb::X'  what(): {json}`. */
function abortLine(said: string, signal: NodeJS.Signals | null): string {
  const what = /what\(\):\s*(\{.*\})/s.exec(said)?.[1];
  if (what !== undefined) {
    try {
      const { exception_type: type, exception_message: message } = JSON.parse(what) as { exception_type?: string; exception_message?: string };
      if (typeof message === 'string') {
        const hint = /file system operations are disabled/.test(message) ? ' (traces sql reads the index only: no other file, and writes none)' : '';
        return `${type ?? 'Engine'} Error: ${message.split('\n')[0]}${hint}`;
      }
    } catch {
      // Not the engine's JSON: said as it is below.
    }
  }
  const instance = /instance of '([^']+)'/.exec(said)?.[1];
  return `the SQL engine stopped abnormally (${instance ?? `signal ${signal ?? 'unknown'}`})`;
}

/** Waits, a bounded while, until a child sent SIGKILL has ended (a zombie or gone): none of its writes can follow. */
function awaitEnd(child: ChildProcess): void {
  if (child.pid === undefined || process.platform !== 'linux') return;
  const stat = `/proc/${child.pid}/stat`;
  for (let i = 0; i < 200_000; i++) {
    let state: string | undefined;
    try {
      state = /\) (\S)/.exec(readFileSync(stat, 'utf8'))?.[1];
    } catch {
      return;
    }
    if (state === 'Z' || state === 'X') return;
  }
}

/**
 * Runs this command again in a child with a scratch folder named for it, forwards its output,
 * and ends as it ends. `timeoutSeconds`: the child is stopped after that long.
 */
export async function runEngineChild(timeoutSeconds: number | undefined): Promise<void> {
  const scratch = Scratch.nameInTemp();
  const child = spawn(process.execPath, [...process.execArgv, process.argv[1]!, ...process.argv.slice(2)], {
    env: { ...process.env, [SCRATCH_ENV]: scratch, ...(progressWanted() ? { [PROGRESS_COLUMNS]: String(process.stderr.columns ?? 80) } : {}) },
    stdio: ['inherit', 'pipe', 'pipe'],
  });
  const kill = () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGKILL');
    awaitEnd(child);
  };
  // On Ctrl-C, SIGTERM or SIGHUP (cleanup.ts): the child first, then its folder.
  const release = whileRunning(() => {
    kill();
    if (existsSync(scratch)) removeFolder(scratch);
  });
  let timedOut = false;
  const timer = timeoutSeconds === undefined ? null : setTimeout(() => {
    timedOut = true;
    kill();
  }, timeoutSeconds * 1000);
  child.stdout!.pipe(process.stdout, { end: false });
  let aborted = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    if (aborted !== '') {
      aborted += chunk.toString('utf8');
      return;
    }
    const at = chunk.indexOf(ABORT);
    if (at === -1) {
      process.stderr.write(chunk);
      return;
    }
    process.stderr.write(chunk.subarray(0, at));
    aborted = chunk.subarray(at).toString('utf8');
  });
  const [code, signal] = (await once(child, 'close')) as [number | null, NodeJS.Signals | null];
  if (timer !== null) clearTimeout(timer);
  release();
  if (existsSync(scratch)) removeFolder(scratch);
  if (timedOut) throw new UserError(`query stopped: it ran longer than --timeout ${timeoutSeconds} s; narrow it, or give it more time`);
  if (aborted !== '' || signal !== null) throw new UserError(`query failed: ${abortLine(aborted, signal)}`);
  process.exitCode = code ?? 2;
}
