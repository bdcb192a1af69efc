/** Writing a whole buffer by descriptor: a write may take fewer bytes than asked. */
import { writeSync } from 'node:fs';

/**
 * Writes `bytes` (the first `length`) to `fd`. A write by descriptor names no file when it
 * fails (a full disk, a file-size limit): the error is given `file`, the name to tell the user.
 */
export function writeAll(fd: number, bytes: Uint8Array | string, file: string, length?: number, position?: number): void {
  const data = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes;
  const end = length ?? data.length;
  try {
    for (let done = 0; done < end; ) done += writeSync(fd, data, done, end - done, position === undefined ? null : position + done);
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    if (typeof e.code === 'string' && e.path === undefined) e.path = file;
    throw error;
  }
}
