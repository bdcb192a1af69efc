/**
 * A file read whole that may be anything a folder holds: a card, a registry, a report. Read by
 * size and kind, never on trust: a FIFO would wait for ever, a link to /dev/zero would read
 * without end, a 600 MB README would be held whole. The open does not wait (O_NONBLOCK), the
 * kind and size are those of what was opened (fstat), and no more than the limit is read.
 */
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import { describeFileSystemError } from './errors.js';
import { formatBytes } from './format.js';

function kindOf(info: Stats): string {
  if (info.isDirectory()) return 'a folder';
  if (info.isFIFO()) return 'a FIFO (named pipe)';
  if (info.isCharacterDevice() || info.isBlockDevice()) return 'a device';
  if (info.isSocket()) return 'a socket';
  return 'not a regular file';
}

/** The file's bytes, or why they are not read (one phrase, to follow the file's name). */
export function readSmallFile(file: string, limit: number): { bytes: Buffer } | { problem: string } {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    return { problem: `cannot be read: ${describeFileSystemError(error) ?? (error as Error).message}` };
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) return { problem: `is ${kindOf(info)}, not a regular file: only files are read` };
    if (info.size > limit) return { problem: `is ${formatBytes(info.size)}, more than the ${formatBytes(limit)} read of such a file` };
    const buffer = Buffer.alloc(Math.min(info.size, limit) + 1);
    let n = 0;
    for (let got; n < buffer.length && (got = readSync(fd, buffer, n, buffer.length - n, n)) > 0; ) n += got;
    if (n > limit) return { problem: `grew past ${formatBytes(limit)} while it was read` };
    return { bytes: buffer.subarray(0, n) };
  } catch (error) {
    return { problem: `cannot be read: ${describeFileSystemError(error) ?? (error as Error).message}` };
  } finally {
    closeSync(fd);
  }
}
