import { tmpdir } from 'node:os';
import path from 'node:path';

/** Errors whose message is meant for the user; the CLI prints them without a stack. */
export class UserError extends Error {
  constructor(
    message: string,
    /** 2: bad usage or input the user must fix; 1: the run found problems. */
    readonly exitCode: 1 | 2 = 2,
  ) {
    super(message);
  }
}

/**
 * A file the run listed, gone by the time it was read: said as such, since the generic line
 * (`no such file or folder`, check the path) would point at a path the user never typed.
 */
export function listedFileGone(error: unknown, path: string): unknown {
  if ((error as NodeJS.ErrnoException | null)?.code !== 'ENOENT') return error;
  return new UserError(
    `${path}: it disappeared after traces listed it (ENOENT): another program moved or removed it while traces ran; ` +
      'this run stopped and wrote nothing: rerun once nothing moves the trace files',
  );
}

/** File-system error codes that come from the user's files or disks, not from a bug in traces. */
const FILE_SYSTEM_CODES: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ENOENT: 'no such file or folder',
  ENOTDIR: 'a part of the path is a file, not a folder',
  EISDIR: 'a folder where a file was expected',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'disk quota exceeded',
  EROFS: 'read-only file system',
  ELOOP: 'too many symbolic links',
  EMFILE: 'too many open files',
  ENFILE: 'too many open files in the system',
  EIO: 'input/output error',
  EEXIST: 'a file already exists there',
  ENAMETOOLONG: 'file name too long',
  EXDEV: 'cannot move across devices',
  EFBIG: 'file too large (the file-size limit, ulimit -f, or the file system)',
  EBUSY: 'resource busy',
  ETXTBSY: 'file busy',
  ESTALE: 'stale file handle (a network file system)',
  ENXIO: 'no such device',
  ENODEV: 'no such device',
  EOVERFLOW: 'file too large to read here',
};

/** A file of a run's own temporary folder (`RunTempDir`, pipeline/spill.ts): the plan's rows and the spills. */
function isRunTempFile(file: string): boolean {
  return path.relative(tmpdir(), file).startsWith(RUN_TEMP_PREFIX);
}

/** A run's temporary folder in the system's temp folder is `traces-spill-<pid>-XXXXXX`: the pid tells a later run whether its maker is gone. */
export const RUN_TEMP_PREFIX = 'traces-spill-';

/**
 * One line for a file-system error (`<path>: <what happened> (CODE): <what to do>`), or null
 * when the error is not one: those are bugs, and keep their stack.
 */
export function describeFileSystemError(error: unknown): string | null {
  const e = error as NodeJS.ErrnoException | null;
  if (e === null || typeof e !== 'object' || typeof e.code !== 'string' || !Object.hasOwn(FILE_SYSTEM_CODES, e.code)) return null;
  const dest = (e as { dest?: unknown }).dest;
  const where = typeof e.path === 'string' ? `${e.path}${typeof dest === 'string' ? ` -> ${dest}` : ''}: ` : '';
  const full = e.code === 'ENOSPC' || e.code === 'EDQUOT';
  const todo = full
    ? typeof e.path === 'string' && isRunTempFile(e.path)
      ? 'the temporary folder is full: free some space there or set TMPDIR to a folder with room (a run keeps about 100 bytes a record there until it ends)'
      : 'free some space or write elsewhere'
    : e.code === 'EMFILE' || e.code === 'ENFILE'
      ? 'raise the open-file limit (ulimit -n) and rerun'
      : e.code === 'EFBIG'
        ? 'raise the file-size limit (ulimit -f), write smaller files (export --max-file-mb) or write elsewhere'
        : 'check the path and its permissions, then rerun';
  return `${where}${FILE_SYSTEM_CODES[e.code]} (${e.code}${typeof e.syscall === 'string' ? ` in ${e.syscall}` : ''}): ${todo}`;
}
