/** What holds a name on disk, not following a link there, and the temporary names beside one. */
import { createHash } from 'node:crypto';
import { lstatSync, type Stats } from 'node:fs';

/** The name's lstat, or null when nothing (that this process can see) holds it. */
export function lstatOrNull(file: string): Stats | null {
  try {
    return lstatSync(file);
  } catch {
    return null;
  }
}

/** Bytes of a name kept whole in a temporary name beside it: the marks around it must fit in 255. */
const MAX_STEM_BYTES = 200;

/**
 * The part of a temporary name beside `basename` that names it: the name itself, or, for a name
 * too long to take a mark and still fit a file system's 255 bytes, its first characters and 8
 * hex digits of its sha256 (`--out` of 240 characters failed with ENAMETOOLONG in mkdtemp).
 */
export function tempStem(basename: string): string {
  if (Buffer.byteLength(basename) <= MAX_STEM_BYTES) return basename;
  let cut = '';
  for (const c of basename) {
    if (Buffer.byteLength(cut + c) > MAX_STEM_BYTES / 2) break;
    cut += c;
  }
  return `${cut}-${createHash('sha256').update(basename).digest('hex').slice(0, 8)}`;
}
