/**
 * Finds the trace files under the roots a user names. A Synalinks root also holds config,
 * dataset caches and knowledge bases; only the two layouts Synalinks writes count as traces.
 */
import { stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import fg from 'fast-glob';
import { UserError } from '../errors.js';

export interface TraceFile {
  /** Absolute path. */
  path: string;
  /** Path shown to users: relative to the current folder when inside it. */
  display: string;
  root: string;
}

export interface SkippedFile {
  path: string;
  reason: string;
}

export interface Discovery {
  files: TraceFile[];
  skipped: SkippedFile[];
}

const TRACE_FILE_NAME = /^(?<stem>.+)_(?<ts>\d{8}-\d{6})\.jsonl$/;

/** The same lookup Synalinks does for its own root. */
export function defaultRoot(env: NodeJS.ProcessEnv = process.env): string {
  return env.SYNALINKS_HOME ? env.SYNALINKS_HOME : path.join(homedir(), '.synalinks');
}

export function displayPath(absolute: string): string {
  const relative = path.relative(process.cwd(), absolute);
  return relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative) ? relative : absolute;
}

/**
 * Why a path relative to a root is not a trace file, or null when it is one:
 * `<program>/<module>/<module>_<ts>.jsonl` or `<program>/<program>_<ts>.jsonl`.
 */
export function whyNotTraceFile(relative: string): string | null {
  const parts = relative.split('/');
  if (parts[0] === 'datasets') return 'dataset cache';
  const name = parts[parts.length - 1];
  if (!name.endsWith('.jsonl')) return 'not a .jsonl file';
  if (parts.length < 2 || parts.length > 3) return 'not at <program>/<module>/ depth';
  const match = TRACE_FILE_NAME.exec(name);
  if (match === null) return 'name is not <module>_YYYYmmdd-HHMMSS.jsonl';
  if (match.groups!.stem !== parts[parts.length - 2]) return 'file name does not match its folder';
  return null;
}

async function discoverRoot(root: string, into: Discovery): Promise<void> {
  const absolute = path.resolve(root);
  const info = await stat(absolute).catch(() => null);
  if (info === null) throw new UserError(`${root}: no such file or folder (give a Synalinks trace folder or a .jsonl file)`);
  if (info.isFile()) {
    into.files.push({ path: absolute, display: displayPath(absolute), root: path.dirname(absolute) });
    return;
  }
  // Depth 3 bounds the walk, so symlink loops cannot make it run forever.
  const entries = await fg(['*', '*/*', '*/*/*'], {
    cwd: absolute,
    onlyFiles: true,
    followSymbolicLinks: true,
    suppressErrors: true,
    deep: 3,
    dot: false,
  });
  entries.sort();
  for (const relative of entries) {
    const full = path.join(absolute, relative);
    const reason = whyNotTraceFile(relative);
    if (reason === null) into.files.push({ path: full, display: displayPath(full), root: absolute });
    else into.skipped.push({ path: displayPath(full), reason });
  }
}

export async function discover(roots: readonly string[]): Promise<Discovery> {
  const result: Discovery = { files: [], skipped: [] };
  for (const root of roots.length > 0 ? roots : [defaultRoot()]) await discoverRoot(root, result);
  const seen = new Set<string>();
  result.files = result.files.filter((f) => !seen.has(f.path) && seen.add(f.path));
  return result;
}
