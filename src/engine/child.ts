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
import { fileURLToPath } from 'node:url';
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

/** Work the engine does for a command that is not `sql`, in a child of its own (task-main.ts). */
export type EngineTask = { kind: 'jsonl-to-parquet'; jsonl: string; parquet: string; columns: Record<string, string>; longestLine: number };

/** What the engine is given for a task (duckdb.ts DATASET_WRITE_MEMORY), for the message of a task that ran out. */
const TASK_MEMORY = '256 MB of data and about 200 MB for its library and threads';

/** Whether what the engine said is a failure to get memory (an allocation, or mapping its library). */
const OUT_OF_MEMORY = /Out of Memory|bad_alloc|Allocation failure|failed to (?:map segment|allocate)|Cannot allocate memory|ENOMEM/i;

/** The bytes an engine's allocation error asked for ("Failed to allocate block of 33554432 bytes"), as text, or null. */
function wanted(said: string): string | null {
  const bytes = /allocate (?:block |data )?of (?:size )?(\d+) bytes/i.exec(said)?.[1];
  return bytes === undefined ? null : `${Math.ceil(Number(bytes) / (1 << 20))} MB more`;
}

/**
 * Runs an engine task in a child process and returns its result. A child that ran out of
 * memory (a DuckDB error, std::bad_alloc, a fault, a library it could not map) is one line that
 * says what it wanted and how to give it; `what` names the work ("writing data/train-….parquet").
 */
export async function runEngineTask<T>(task: EngineTask, what: string): Promise<T> {
  // Few threads of Node's own, and glibc's arenas (64 MB of address space a thread) at two: under a
  // limit of address space (ulimit -v) the engine's allocations get what the process does not hold.
  const child = spawn(process.execPath, ['--v8-pool-size=1', fileURLToPath(new URL('./task-main.js', import.meta.url)), JSON.stringify(task)], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, MALLOC_ARENA_MAX: '2', UV_THREADPOOL_SIZE: '1' },
  });
  const release = whileRunning(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => {
    if (stderr.length < 1 << 16) stderr += chunk.toString('utf8');
  });
  const [code, signal] = (await once(child, 'close')) as [number | null, NodeJS.Signals | null];
  release();
  let answer: { result?: T; error?: string } = {};
  try {
    answer = JSON.parse(stdout) as typeof answer;
  } catch {
    // Ended before it answered: what it said on stderr, or its signal, says why.
  }
  if (code === 0 && answer.result !== undefined) return answer.result;
  const said = answer.error ?? (stderr.includes(ABORT) ? abortLine(stderr.slice(stderr.indexOf(ABORT)), signal) : stderr.trim().split('\n')[0] ?? '');
  // An abort or a fault without a word of the engine's is how it fails to get memory under a limit (ulimit -v).
  if (OUT_OF_MEMORY.test(said) || OUT_OF_MEMORY.test(stderr) || (answer.error === undefined && (signal === 'SIGSEGV' || signal === 'SIGABRT' || signal === 'SIGBUS' || code === 134 || code === 139))) {
    const more = wanted(said) ?? wanted(stderr);
    throw new UserError(
      `${what}: the SQL engine ran out of memory${more === null ? '' : ` (it wanted ${more})`}${said === '' ? ` (${signal ?? `exit ${code}`})` : ` (${said})`}: ` +
        `it needs ${TASK_MEMORY}: raise the memory limit (ulimit -v) or run fewer threads beside it (fewer jobs at once); nothing of this run was kept`,
    );
  }
  throw new UserError(`${what}: the SQL engine failed: ${said || `it ended with ${signal ?? `exit ${code}`}`}`);
}
