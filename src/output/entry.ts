/** What holds a name on disk, not following a link there. */
import { lstatSync, type Stats } from 'node:fs';

/** The name's lstat, or null when nothing (that this process can see) holds it. */
export function lstatOrNull(file: string): Stats | null {
  try {
    return lstatSync(file);
  } catch {
    return null;
  }
}
