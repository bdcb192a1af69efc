/**
 * Moving a finished file to its final name. A run checks its output paths when it starts,
 * but it may run for minutes, and a rename replaces whatever holds the name by then: a file
 * the user saved there meanwhile, or a second run's output, would be lost without a word.
 * Without --force a file is published by a hard link, which fails when the name is taken,
 * and its temporary name is removed after.
 */
import { linkSync, renameSync, unlinkSync } from 'node:fs';
import { lstatOrNull } from './entry.js';
import { UserError } from '../errors.js';

/** Hard links are not every file system's (FAT, some network and FUSE mounts): there, a check just before the rename. */
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EMLINK', 'EXDEV']);

/** What the user is told when a name was taken while the run was going: what was kept, what to do. */
export function nameTakenError(flag: string, given: string, final: string): UserError {
  return new UserError(
    `${flag} ${given}: ${final} appeared while traces was running; nothing was written over it and this run's output was not kept: move it away and rerun, or rerun with --force to replace it`,
  );
}

/** Publishes `temp` as `final`, which must not exist; returns false (and leaves both as they are) when it does. */
export function publishNew(temp: string, final: string): boolean {
  try {
    linkSync(temp, final);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? '';
    if (code === 'EEXIST') return false;
    if (!NO_HARD_LINKS.has(code)) throw error;
    if (lstatOrNull(final) !== null) return false;
    renameSync(temp, final);
    return true;
  }
  unlinkSync(temp);
  return true;
}

/**
 * Publishes each `[temp, final]` pair: with `replace` (--force) by renames, else only if no
 * final name is taken, all or none. `afterFirst` runs once the first is in place (a test pause).
 */
export function publishAll(pairs: readonly (readonly [string, string])[], replace: boolean, onTaken: (final: string) => Error, afterFirst?: () => void): void {
  if (replace) {
    pairs.forEach(([temp, final], i) => {
      renameSync(temp, final);
      if (i === 0) afterFirst?.();
    });
    return;
  }
  const published: string[] = [];
  for (const [temp, final] of pairs) {
    if (!publishNew(temp, final)) {
      // Taken between the check and the link: what this run put in place goes again, as a failed run leaves nothing.
      for (const done of published) unlinkSync(done);
      throw onTaken(final);
    }
    published.push(final);
    if (published.length === 1) afterFirst?.();
  }
}
