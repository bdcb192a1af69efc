/**
 * One output file that another program writes (DuckDB writes the index's Parquet): the same
 * rules as an output folder. The file is written under a scratch folder beside its final
 * name and renamed into place on success; it never replaces an existing file without
 * --force, never goes through a link, and never lands inside an input.
 */
import { lstatSync, mkdirSync, mkdtempSync, renameSync, rmSync, statSync, existsSync } from 'node:fs';
import path from 'node:path';
import { UserError } from '../errors.js';
import { isInside } from './output-dir.js';

const SCRATCH_PREFIX = '.traces-tmp-';

export interface OutputFileOptions {
  force: boolean;
  /** What the run reads: the output may not be inside one, nor hold one. */
  roots: readonly string[];
  /** The flag that named the path, for messages. */
  flag: string;
}

function lstatOrNull(file: string) {
  try {
    return lstatSync(file);
  } catch {
    return null;
  }
}

/** Refuses a path the run may not write; returns it absolute. */
export function checkOutputPath(target: string, options: OutputFileOptions): string {
  const absolute = path.resolve(target);
  for (const root of options.roots) {
    const rootPath = path.resolve(root);
    const rootDir = existsSync(rootPath) && statSync(rootPath).isFile() ? path.dirname(rootPath) : rootPath;
    if (isInside(absolute, rootDir) || isInside(rootDir, absolute)) {
      throw new UserError(`${options.flag} ${target} is inside (or holds) the input ${root}: choose a path outside the traces being read`);
    }
  }
  const existing = lstatOrNull(absolute);
  if (existing !== null) {
    if (existing.isSymbolicLink()) throw new UserError(`${options.flag} ${target} is a symbolic link: traces never writes through a link; remove it or choose another path`);
    if (!options.force) throw new UserError(`${options.flag} ${target} exists: pass --force to replace it, or choose another path`);
  }
  const parent = lstatOrNull(path.dirname(absolute));
  if (parent?.isSymbolicLink()) throw new UserError(`${options.flag} ${target}: its folder is a symbolic link: traces never writes through a link`);
  return absolute;
}

/** A scratch folder beside `finalPath` for what is written before the rename; removed by `discard`. */
export class Scratch {
  private static readonly open = new Set<Scratch>();
  private static signalsInstalled = false;

  private constructor(readonly dir: string) {}

  static beside(finalPath: string): Scratch {
    mkdirSync(path.dirname(finalPath), { recursive: true });
    const scratch = new Scratch(mkdtempSync(path.join(path.dirname(finalPath), `${SCRATCH_PREFIX}${path.basename(finalPath)}-`)));
    Scratch.open.add(scratch);
    Scratch.installSignalCleanup();
    return scratch;
  }

  static in(folder: string): Scratch {
    const scratch = new Scratch(mkdtempSync(path.join(folder, SCRATCH_PREFIX)));
    Scratch.open.add(scratch);
    Scratch.installSignalCleanup();
    return scratch;
  }

  private static installSignalCleanup(): void {
    if (Scratch.signalsInstalled) return;
    Scratch.signalsInstalled = true;
    for (const [signal, code] of [
      ['SIGINT', 130],
      ['SIGTERM', 143],
      ['SIGHUP', 129],
    ] as const) {
      process.on(signal, () => {
        for (const scratch of Scratch.open) scratch.discard();
        process.stderr.write(`\ntraces: interrupted; no output was written\n`);
        process.exit(code);
      });
    }
  }

  file(name: string): string {
    return path.join(this.dir, name);
  }

  /**
   * Renames `name` (a file or a folder) to `finalPath`. A folder replaced under --force is
   * moved aside first and removed only once the new one is in place.
   */
  commit(name: string, finalPath: string): void {
    const existing = lstatOrNull(finalPath);
    if (existing?.isDirectory()) {
      const aside = this.file('replaced');
      renameSync(finalPath, aside);
      renameSync(this.file(name), finalPath);
    } else renameSync(this.file(name), finalPath);
    this.discard();
  }

  discard(): void {
    rmSync(this.dir, { recursive: true, force: true });
    Scratch.open.delete(this);
  }
}
