/**
 * A file's first bytes, which detection and the sources that peek at a file read; apart from
 * detect.ts so that a source can read them without importing the registry that lists it.
 */
import { closeSync, openSync, readSync } from 'node:fs';

const HEAD_BYTES = 64 * 1024;

/** The first `bytes` of the file at `path`, or null when it cannot be read. */
export function readHead(path: string, bytes = HEAD_BYTES): Buffer | null {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return null;
  }
  try {
    const buffer = Buffer.allocUnsafe(bytes);
    return buffer.subarray(0, readSync(fd, buffer, 0, bytes, 0));
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}
