/**
 * Finds the trace files under the roots a user names. A Synalinks root also holds config,
 * dataset caches and knowledge bases; only the two layouts Synalinks writes count as traces.
 * Files outside that layout may be other recorders' (Ask recordings, klieo runs): their
 * format is told by their content's shape, read from the first bytes, never by name, so
 * Synalinks files pay nothing for it. `--source` forces one format for every file.
 */
import { stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import fg from 'fast-glob';
import { UserError } from '../errors.js';
import type { SourceKind } from '../record.js';
import { detectSource } from './detect.js';

export interface TraceFile {
  /** Absolute path. */
  path: string;
  /** Path shown to users: relative to the current folder when inside it. */
  display: string;
  root: string;
  /** The recorder that wrote the file. */
  source: SourceKind;
}

export interface DiscoverOptions {
  /** Read every file as this format instead of detecting it. */
  source?: SourceKind;
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

/** Extensions of files that may hold another recorder's JSON (Ask writes JSON into `.yml`). */
const OTHER_CANDIDATE = /\.(json|jsonl|yml|yaml)$/i;

/** Which format a file outside the Synalinks layout holds: forced, or from its content. */
async function otherSource(full: string, forced: SourceKind | undefined): Promise<SourceKind | null> {
  if (forced !== undefined) return forced === 'synalinks' ? null : OTHER_CANDIDATE.test(full) ? forced : null;
  if (!OTHER_CANDIDATE.test(full)) return null;
  const kind = await detectSource(full);
  return kind === 'synalinks' ? null : kind;
}

async function discoverRoot(root: string, into: Discovery, options: DiscoverOptions): Promise<void> {
  const absolute = path.resolve(root);
  const info = await stat(absolute).catch(() => null);
  if (info === null) throw new UserError(`${root}: no such file or folder (give a trace folder or file: Synalinks, Ask recording, klieo run)`);
  if (info.isFile()) {
    const file = { path: absolute, display: displayPath(absolute), root: path.dirname(absolute) };
    if (options.source !== undefined) {
      into.files.push({ ...file, source: options.source });
      return;
    }
    // A file named directly is read as Synalinks unless its content is another recorder's;
    // a non-JSONL file of no known shape is reported rather than read.
    const detected = TRACE_FILE_NAME.test(path.basename(absolute)) ? 'synalinks' : await detectSource(absolute);
    if (detected !== null) into.files.push({ ...file, source: detected });
    else if (absolute.endsWith('.jsonl')) into.files.push({ ...file, source: 'synalinks' });
    else into.skipped.push({ path: file.display, reason: 'no known recorder format (Synalinks, Ask, klieo)' });
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
    if (reason === null && (options.source === undefined || options.source === 'synalinks')) {
      into.files.push({ path: full, display: displayPath(full), root: absolute, source: 'synalinks' });
      continue;
    }
    const other = reason === 'dataset cache' ? null : await otherSource(full, options.source);
    if (other !== null) into.files.push({ path: full, display: displayPath(full), root: absolute, source: other });
    else if (reason === null) into.skipped.push({ path: displayPath(full), reason: `not read as ${options.source} (--source)` });
    else if (options.source === undefined && reason !== 'dataset cache' && OTHER_CANDIDATE.test(full)) into.skipped.push({ path: displayPath(full), reason: `${reason}; no known recorder format (Ask, klieo)` });
    else into.skipped.push({ path: displayPath(full), reason });
  }
}

export async function discover(roots: readonly string[], options: DiscoverOptions = {}): Promise<Discovery> {
  const result: Discovery = { files: [], skipped: [] };
  for (const root of roots.length > 0 ? roots : [defaultRoot()]) await discoverRoot(root, result, options);
  const seen = new Set<string>();
  result.files = result.files.filter((f) => !seen.has(f.path) && seen.add(f.path));
  return result;
}
