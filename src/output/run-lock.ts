/**
 * Whether a run still holds a staging folder, told by the kernel rather than by a pid.
 *
 * A pid cannot tell a live run from a dead one: traces run as a container's entrypoint is pid
 * 1 every time, and on a host pid 1 is init, so `.traces-partial-1` left by an OOM kill locked
 * `--out` for good. Node has no flock, and the npm packages that add one (fs-ext, os-lock)
 * build native code at install, which an offline install cannot. So a run holds a named pipe
 * (FIFO) in its staging folder open for reading while it runs; the kernel closes it when the
 * process dies, however it dies. Opening a FIFO to write without blocking fails with ENXIO
 * exactly when no process holds it open to read: that is the check, and it needs no pid.
 * Unlike a pid and its start time it also holds across pid namespaces (a restarted container,
 * another container sharing the volume): a FIFO is one object of the kernel, whoever opens it.
 *
 * A FIFO says nothing to another kernel (an NFS --out written from two machines): the folder
 * records the kernel's boot id and the host, and a holder on another kernel is unknown. Where
 * no FIFO can be made (Windows, a file system without them) the run goes on without one, and
 * its folder is judged by its pid alone, as before: unknown while that pid lives.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, constants, lstatSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';

/** Inside the staging folder, under names no output file can have (`OutputDir.resolve` refuses them). */
const PIPE = '.traces-partial-lock';
const OWNER = '.traces-partial-owner';

/** What is known of the run that made a staging folder. */
export type Holder = 'live' | 'dead' | 'unknown';

interface Owner {
  pid: number;
  host: string;
  /** The kernel's boot id (Linux), or null where there is none to read. */
  boot: string | null;
}

function bootId(): string | null {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || null;
  } catch {
    return null;
  }
}

function ownerOf(folder: string): Owner | null {
  try {
    const owner = JSON.parse(readFileSync(path.join(folder, OWNER), 'utf8')) as Owner;
    return typeof owner === 'object' && owner !== null && typeof owner.host === 'string' ? owner : null;
  } catch {
    return null;
  }
}

/** A lock held by this process on its staging folder until `release`. */
export class RunLock {
  private constructor(private fd: number) {}

  /**
   * Takes the lock in `folder` (new, empty, this run's): a FIFO held open to read, and who
   * holds it. Null where no FIFO can be made; the run goes on without one.
   */
  static take(folder: string): RunLock | null {
    const pipe = path.join(folder, PIPE);
    const made = spawnSync('mkfifo', ['-m', '600', pipe], { stdio: 'ignore' });
    if (made.error !== undefined || made.status !== 0) return null;
    let fd: number;
    try {
      // Non-blocking: opening to read waits for no writer. Node opens with O_CLOEXEC, so no child keeps it open after this process.
      fd = openSync(pipe, constants.O_RDONLY | constants.O_NONBLOCK);
    } catch {
      return null;
    }
    const owner: Owner = { pid: process.pid, host: hostname(), boot: bootId() };
    writeFileSync(path.join(folder, OWNER), `${JSON.stringify(owner)}\n`, { flag: 'wx' });
    return new RunLock(fd);
  }

  release(): void {
    if (this.fd === -1) return;
    closeSync(this.fd);
    this.fd = -1;
  }
}

/**
 * Whether a live run holds `folder` (a staging folder found in --out). `pidAlive` judges a
 * folder without a FIFO (made by an earlier traces, or where none can be made) by its pid.
 */
export function holderOf(folder: string, pid: number | null, pidAlive: (pid: number) => boolean): Holder {
  const pipe = path.join(folder, PIPE);
  let isPipe = false;
  try {
    isPipe = lstatSync(pipe).isFIFO();
  } catch {
    isPipe = false;
  }
  if (!isPipe) {
    // This process made no staging folder yet: one named with its pid is another's, dead (its pid is now this process's).
    if (pid === null || pid === process.pid) return 'dead';
    return pidAlive(pid) ? 'unknown' : 'dead';
  }
  const owner = ownerOf(folder);
  const boot = bootId();
  if (owner !== null && owner.boot !== null && boot !== null && owner.boot !== boot) {
    // Another kernel: this machine since a reboot (every process then is gone), or another machine (unknowable from here).
    return owner.host === hostname() ? 'dead' : 'unknown';
  }
  if (owner !== null && (owner.boot === null || boot === null) && owner.host !== hostname()) return 'unknown';
  try {
    closeSync(openSync(pipe, constants.O_WRONLY | constants.O_NONBLOCK));
    return 'live';
  } catch (error) {
    // ENXIO: no process holds the pipe open to read, so the run that made it is gone.
    return (error as NodeJS.ErrnoException).code === 'ENXIO' ? 'dead' : 'unknown';
  }
}
