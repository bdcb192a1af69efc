/** Writing a whole buffer by descriptor: a write may take fewer bytes than asked. */
import { writeSync } from 'node:fs';

export function writeAll(fd: number, bytes: Uint8Array, length = bytes.length): void {
  for (let done = 0; done < length; ) done += writeSync(fd, bytes, done, length - done);
}
