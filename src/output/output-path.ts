/**
 * The one check every path a run writes passes (`--out`, `--manifest`, browse's exclusion
 * file, any file inside an output folder): never an input, inside one or around one,
 * compared by real path and by what each is on disk; never through a symbolic link; never
 * over an existing file without `--force`; never under a regular file.
 */
import { lstatSync, realpathSync, statSync, type Stats } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { UserError } from '../errors.js';

export interface OutputTarget {
  /** The flag naming the path, for messages: `--out`, `--manifest`, `--exclude`. */
  flag: string;
  /** The path as the user gave it. */
  given: string;
  kind: 'folder' | 'file';
  /** Real paths of what the run reads: the output may be none of them, inside one or around one. */
  inputs: readonly string[];
  /** An existing file may be replaced (a folder may be non-empty: the caller decides what that means). */
  force: boolean;
  /** What `--force` is called for this path, when the user can give it (browse's file has none). */
  forceHint?: string | null;
}

export interface CheckedPath {
  absolute: string;
  /** The path with every existing folder on the way resolved: what comparisons use. */
  real: string;
  /** lstat of the path itself, or null when nothing is there. */
  existing: Stats | null;
}

export function isInside(child: string, parent: string): boolean {
  const relative = path.relative(parent, child);
  return relative === '' || (!relative.startsWith('..' + path.sep) && relative !== '..' && !path.isAbsolute(relative));
}

function lstatOrNull(file: string): Stats | null {
  try {
    return lstatSync(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null;
    if (code === 'ENOTDIR') return null; // a component is a file: found by the walk below
    throw error;
  }
}

/**
 * Links above the home folder are the system's layout (`/home -> /usr/home`): not a
 * link the user put on the way.
 */
function isSystemLink(component: string): boolean {
  const home = path.resolve(homedir());
  return component !== home && isInside(home, component);
}

/** What a path is on disk (device and inode, links followed), or null when nothing is there. */
export function identityOf(file: string): string | null {
  try {
    return identityOfStats(statSync(file));
  } catch {
    return null;
  }
}

/** The identity `identityOf` gives, from a stat already at hand. */
export function identityOfStats(info: { dev: number; ino: number }): string {
  return `${info.dev}:${info.ino}`;
}

/** The identities of a path and of every folder above it, nearest first. */
function identitiesUp(file: string): string[] {
  const identities: string[] = [];
  for (let at = path.resolve(file); ; at = path.dirname(at)) {
    const identity = identityOf(at);
    if (identity !== null) identities.push(identity);
    if (path.dirname(at) === at) return identities;
  }
}

/**
 * What the run reads: its trace roots (noted by discovery) and whatever every option naming a
 * path that is not an output names (`src/commands/path-options.ts`). No path the run
 * writes may be one, be inside one or contain one either, whichever flag names it. Real
 * paths, as `inputs`.
 */
const knownInputs = new Set<string>();

/** Notes a file or folder the run reads (see `knownInputs`); its readers call this. */
export function readsAlso(file: string): void {
  for (const real of realInputs([file])) knownInputs.add(real);
}

/**
 * Refuses a temporary folder inside what the run reads (TMPDIR set to a folder of traces):
 * its scratch files would appear among the user's traces while it runs.
 */
export function checkTempFolder(folder: string): void {
  const real = realInputs([folder])[0]!;
  for (const input of knownInputs) {
    if (real === input || isInside(real, input)) {
      throw new UserError(`the temporary folder ${folder} (TMPDIR) is inside the input ${input}: traces never writes into what it reads; set TMPDIR to a folder outside it`);
    }
  }
}

/** Resolves, checks and describes an output path, or throws a UserError (exit 2) saying what to do. */
export function checkOutputPath(target: OutputTarget): CheckedPath {
  const { flag, given } = target;
  // path.resolve('') is the current folder: an unset shell variable would write there.
  if (given.trim() === '') throw new UserError(`${flag} is an empty path: name the ${target.kind} to write (is a shell variable unset?)`);
  const absolute = path.resolve(given);
  // Walk down from the file-system root: every existing component is a real folder, the last one may be the target.
  const parts = absolute.split(path.sep).filter((p) => p !== '');
  let current = path.parse(absolute).root;
  let existing: Stats | null = null;
  let missingFrom = parts.length;
  for (let i = 0; i < parts.length; i++) {
    const next = path.join(current, parts[i]);
    const info = lstatOrNull(next);
    if (info === null) {
      missingFrom = i;
      break;
    }
    const isTarget = i === parts.length - 1;
    if (info.isSymbolicLink()) {
      if (isTarget || !isSystemLink(next)) {
        let to = '';
        try {
          to = ` (it points to ${realpathSync(next)})`;
        } catch {
          to = ' (a dangling link)';
        }
        throw new UserError(`${flag} ${given}: ${next} is a symbolic link${to}; traces never writes through a link: give a real ${isTarget ? (target.kind === 'folder' ? 'folder' : 'file') : 'path'} instead`);
      }
    } else if (!isTarget && !info.isDirectory()) {
      throw new UserError(`${flag} ${given}: ${next} is a file, not a folder: choose a path that is not under a file`);
    }
    current = next;
    if (isTarget) existing = info;
  }
  if (parts.length === 0) existing = lstatOrNull(current);
  // The deepest existing component, resolved, plus the parts still to be created.
  const real = path.join(realpathSync(current), ...parts.slice(missingFrom));

  // A folder mounted twice (a bind mount) has two real paths: each path is also compared by what it is on disk.
  const above = identitiesUp(current);
  const own = existing !== null ? above[0] : null;
  for (const input of [...target.inputs, ...knownInputs]) {
    let where = real === input ? 'is' : isInside(real, input) ? 'is inside' : isInside(input, real) ? 'contains' : null;
    const inputIdentity = where === null ? identityOf(input) : null;
    if (inputIdentity !== null) {
      if (own === inputIdentity) where = 'is';
      else if (above.includes(inputIdentity)) where = 'is inside';
      else if (own !== null && existing!.isDirectory() && identitiesUp(input).includes(own)) where = 'contains';
    }
    if (where !== null) {
      throw new UserError(`${flag} ${given} ${where} the input ${input}: traces never writes into what it reads; choose a path outside its inputs (the traces, and the files and folders other flags name)`);
    }
  }
  if (existing !== null) {
    if (target.kind === 'folder' && !existing.isDirectory()) throw new UserError(`${flag} ${given} exists and is not a folder: choose a folder`);
    if (target.kind === 'file') {
      if (existing.isDirectory()) throw new UserError(`${flag} ${given} is a folder: give a file name`);
      if (!existing.isFile()) throw new UserError(`${flag} ${given} exists and is not a regular file: choose another name`);
      if (!target.force) {
        const hint = target.forceHint === null ? 'choose another name' : `pass ${target.forceHint ?? '--force'} to replace it, or choose another name`;
        throw new UserError(`${flag} ${given} already exists: ${hint}`);
      }
    }
  }
  return { absolute, real, existing };
}

/**
 * Two outputs of one run named as one path (or one inside the other): the second would replace
 * the first (with --force) or be refused as having appeared during the run, after the first
 * was written. Refused before anything is written, naming both flags.
 */
export function checkDistinctOutputs(outputs: readonly { flag: string; given: string; checked: CheckedPath }[]): void {
  for (let i = 0; i < outputs.length; i++) {
    for (let j = i + 1; j < outputs.length; j++) {
      const [a, b] = [outputs[i]!, outputs[j]!];
      const where = a.checked.real === b.checked.real ? 'the same path as' : isInside(b.checked.real, a.checked.real) ? 'inside' : isInside(a.checked.real, b.checked.real) ? 'around' : null;
      if (where !== null) throw new UserError(`${b.flag} ${b.given} is ${where} ${a.flag} ${a.given}: each output needs a path of its own`);
    }
  }
}

/** Real paths of what a run reads, for `inputs`: the paths named and every folder a trace file was found in. */
export function realInputs(paths: Iterable<string>): string[] {
  const seen = new Set<string>();
  for (const p of paths) {
    try {
      seen.add(realpathSync.native(p));
    } catch {
      seen.add(path.resolve(p));
    }
  }
  return [...seen];
}
