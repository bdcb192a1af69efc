/**
 * What a run created and must not leave behind: temporary output files, staging folders,
 * spill folders. Each is registered while it exists; on SIGINT, SIGTERM or SIGHUP, and
 * when the process exits without having released it (an error, a crash), it is removed.
 * A SIGKILL runs nothing: names carry the process id so the next run can tell a dead
 * run's leftovers (`isStale`) and remove them.
 */
type Cleanup = () => void;

const pending = new Set<Cleanup>();
let installed = false;

function runAll(): void {
  // Newest first: a file inside a folder goes before the folder.
  for (const cleanup of [...pending].reverse()) {
    pending.delete(cleanup);
    try {
      cleanup();
    } catch {
      // Best effort: one leftover must not keep the others.
    }
  }
}

function install(): void {
  if (installed) return;
  installed = true;
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ] as const) {
    process.on(signal, () => {
      const hadOutput = pending.size > 0;
      runAll();
      process.stderr.write(`\ntraces: interrupted${hadOutput ? '; nothing of this run was kept' : ''}\n`);
      process.exit(code);
    });
  }
  process.on('exit', runAll);
}

/** Registers `cleanup` until the returned release function is called. */
export function whileRunning(cleanup: Cleanup): () => void {
  install();
  pending.add(cleanup);
  return () => {
    pending.delete(cleanup);
  };
}

/** Leftovers are named `<prefix><pid>-…`: the pid of the run that made them. */
export function pidOf(name: string, prefix: string): number | null {
  if (!name.startsWith(prefix)) return null;
  const match = /^(\d+)(?:-|$)/.exec(name.slice(prefix.length));
  return match === null ? null : Number(match[1]);
}

/** True when no process has this id any more (EPERM means one exists, owned by someone else). */
export function isDead(pid: number): boolean {
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** A leftover named with `prefix` whose process is gone. */
export function isStale(name: string, prefix: string): boolean {
  const pid = pidOf(name, prefix);
  return pid !== null && isDead(pid);
}
