/**
 * One output that another program writes (DuckDB writes the index's Parquet): written under
 * a scratch folder beside its final name and renamed into place on success. The path itself
 * passes `checkOutputPath` (output-path.ts) first, like every path a run writes; the scratch
 * folder is removed on a signal or a crash, like every temporary of the run (cleanup.ts).
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { whileRunning } from './cleanup.js';
import { lstatOrNull, tempStem } from './entry.js';
import { checkTempFolder } from './output-path.js';
import { publishAll } from './publish.js';

const SCRATCH_PREFIX = '.traces-tmp-';

/**
 * Removes a folder and what it holds. On a signal, worker threads still write into it until
 * the process ends (index rows: a new file per share): a file made between the listing and the
 * removal of its folder fails that removal, and a second pass takes it.
 */
export function removeFolder(dir: string): void {
  for (let pass = 1; ; pass++) {
    try {
      rmSync(dir, { recursive: true, force: true });
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOTEMPTY' || pass === 3) throw error;
    }
  }
}

/** A scratch folder beside `finalPath` for what is written before the rename; removed by `discard`. */
export class Scratch {
  private readonly release: () => void;

  private constructor(readonly dir: string) {
    this.release = whileRunning(() => removeFolder(dir));
  }

  static beside(finalPath: string): Scratch {
    mkdirSync(path.dirname(finalPath), { recursive: true });
    return new Scratch(mkdtempSync(path.join(path.dirname(finalPath), `${SCRATCH_PREFIX}${tempStem(path.basename(finalPath))}-`)));
  }

  /** A scratch folder in the system's temporary folder, which must not be inside an input. */
  static inTemp(): Scratch {
    checkTempFolder(tmpdir());
    return new Scratch(mkdtempSync(path.join(tmpdir(), SCRATCH_PREFIX)));
  }

  /** A name for a scratch folder in the temporary folder, made later (`at`), by another process. */
  static nameInTemp(): string {
    return path.join(tmpdir(), `${SCRATCH_PREFIX}${randomBytes(6).toString('hex')}`);
  }

  /** The scratch folder named `dir` (`nameInTemp`), made now: its temporary folder must not be inside an input. */
  static at(dir: string): Scratch {
    checkTempFolder(path.dirname(dir));
    mkdirSync(dir, { mode: 0o700 });
    return new Scratch(dir);
  }

  file(name: string): string {
    return path.join(this.dir, name);
  }

  /**
   * Renames `name` (a file or a folder) to `finalPath`. A folder replaced under --force is
   * moved aside first and removed only once the new one is in place. Without `replace`
   * (--force), a file that appeared at `finalPath` since the run checked it stays, and
   * `onTaken` says so; a folder's rename can only replace an empty folder.
   */
  commit(name: string, finalPath: string, replace: boolean, onTaken: () => Error): void {
    if (replace && lstatOrNull(finalPath)?.isDirectory()) {
      renameSync(finalPath, this.file('replaced'));
      renameSync(this.file(name), finalPath);
    } else if (lstatOrNull(this.file(name))?.isDirectory()) this.renameFolder(name, finalPath, onTaken);
    else publishAll([[this.file(name), finalPath]], replace, onTaken);
    this.discard();
  }

  /** A folder's rename, which fails rather than replace a folder that holds anything. */
  private renameFolder(name: string, finalPath: string, onTaken: () => Error): void {
    try {
      renameSync(this.file(name), finalPath);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOTEMPTY' || code === 'EEXIST' || code === 'ENOTDIR') throw onTaken();
      throw error;
    }
  }

  discard(): void {
    removeFolder(this.dir);
    this.release();
  }
}
