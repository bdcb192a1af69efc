/**
 * Finds the trace files under the roots a user names, at any depth: a user names the folder
 * they have (a project, the folder above a Synalinks root), not the one a layout expects.
 * A Synalinks root also holds config, dataset caches and knowledge bases; only the two
 * layouts Synalinks writes count as its traces, and which tree a file belongs to (so which
 * folder is its program's) is told by what its records say, one look per folder, so
 * Synalinks files stay cheap. Other files may be other recorders' (Ask recordings, klieo
 * runs): their format is told by their content's shape, read from the first bytes, never by
 * name. `--source` forces one format for every file.
 */
import { accessSync, constants, readdirSync, statSync, type Stats } from 'node:fs';
import { stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import { UserError } from '../errors.js';
import { identityOfStats, isInside, readsAlso, realInputs } from '../output/output-path.js';
import type { SourceKind } from '../record.js';
import { detectSource } from './detect.js';
import { headText, startsAsJson } from './head.js';
import { readHead } from './head.js';
import type { TraceFile } from './trace-file.js';
import { printable } from '../format.js';
import { fileStamp } from './lines.js';
import { SOURCES, sourceLabels } from './registry.js';

export type { TraceFile } from './trace-file.js';

export interface DiscoverOptions {
  /** Read every file as this format instead of detecting it. */
  source?: SourceKind;
}

export interface SkippedFile {
  path: string;
  reason: string;
}

/** A file or folder under a root that could not be read: reported like a damaged line, never silently dropped. */
export interface UnreadableInput {
  path: string;
  reason: string;
}

export interface Discovery {
  files: TraceFile[];
  skipped: SkippedFile[];
  /** Files and folders that could not be read (permissions, I/O errors): their records are missing. */
  unreadable?: UnreadableInput[];
  /** Real paths of the roots named: what an output may not be, be inside or contain. */
  inputs?: string[];
  /** The roots as a message names them: those given, or the default root's folder. */
  where?: string;
  /** Folders of trace files whose records name no program, so which tree they are in is unknown. */
  unattributed?: Set<string>;
  /** Hidden folders passed over (`.git`, `.cache`): not the recorders' own (`HOME_FOLDERS`). */
  hidden?: string[];
}

/**
 * The hidden folders recorders keep their files in, as paths below a home folder: Synalinks'
 * root and each source's `homeFolders` (`.claude/projects`). A walk that meets the first
 * folder of one enters it, and below it only the path named (an agent's folder also holds its
 * settings and caches, which are no traces); every other hidden folder is passed over.
 */
const HOME_FOLDERS: readonly string[][] = ['.synalinks', ...SOURCES.flatMap((source) => source.homeFolders ?? [])].map((folder) => folder.split('/'));

// `s`: a module name may hold any character, a line break too (`.` alone stops at one).
const TRACE_FILE_NAME = /^(?<stem>.+)_(?<ts>\d{8}-\d{6})\.jsonl$/s;

/** The same lookup Synalinks does for its own root. */
export function defaultRoot(env: NodeJS.ProcessEnv = process.env): string {
  return env.SYNALINKS_HOME ? env.SYNALINKS_HOME : path.join(homedir(), '.synalinks');
}

export function displayPath(absolute: string): string {
  const relative = path.relative(process.cwd(), absolute);
  return relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative) ? relative : absolute;
}

const COMPRESSED = /\.jsonl?\.(gz|zst|zstd|bz2|xz|lz4)$/i;
const DECOMPRESS: Record<string, string> = { gz: 'gunzip -k', zst: 'zstd -d', zstd: 'zstd -d', bz2: 'bunzip2 -k', xz: 'unxz -k', lz4: 'lz4 -d' };

/**
 * Why a compressed JSON Lines file is not read, or null for any other name. Such a file holds
 * records traces does not count, so the reason is said on stderr without -v (see `SKIPPED_ALOUD`).
 */
function compressedReason(name: string): string | null {
  const kind = COMPRESSED.exec(name)?.[1]?.toLowerCase();
  if (kind === undefined) return null;
  return `compressed (.${kind}), not read: its records are not counted; decompress it (${DECOMPRESS[kind]} FILE) and rerun`;
}

/** The start of a skip reason worth saying without -v: the file may hold records that are then missing. */
export const SKIPPED_ALOUD = /^(?:no known recorder format|compressed )/;

/** Why a file's name, in its folder, is not a Synalinks trace file's, or null when it is one. */
function whyNotTraceName(folder: string, name: string): string | null {
  if (!name.endsWith('.jsonl')) return compressedReason(name) ?? 'not a .jsonl file';
  const match = TRACE_FILE_NAME.exec(name);
  if (match === null) return 'name is not <module>_YYYYmmdd-HHMMSS.jsonl';
  if (match.groups!.stem !== folder) return 'file name does not match its folder';
  return null;
}

/**
 * Why a path relative to a root is not a trace file, or null when it is one:
 * `<program>/<module>/<module>_<ts>.jsonl` or `<program>/<program>_<ts>.jsonl`.
 */
export function whyNotTraceFile(relative: string): string | null {
  const parts = relative.split('/');
  if (parts[0] === 'datasets') return 'dataset cache';
  const name = parts[parts.length - 1];
  if (!name.endsWith('.jsonl')) return compressedReason(name) ?? 'not a .jsonl file';
  if (parts.length < 2 || parts.length > 3) return 'not at <program>/<module>/ depth';
  return whyNotTraceName(parts[parts.length - 2], name);
}

/** Extensions of files that may hold another recorder's records (Ask writes JSON into `.yml`; platform exports are CSV and Parquet too). */
const OTHER_CANDIDATE = /\.(json|jsonl|ndjson|yml|yaml|csv|parquet)$/i;
/** Tables, not JSON: a forced format reads them whatever their first byte. */
const TABLE_FILE = /\.(csv|parquet)$/i;

/**
 * Which format a file outside the Synalinks layout holds: forced, or from its content. Forced,
 * a file that is not JSON at all (a project's YAML config beside its recordings) is still none.
 */
async function otherSource(full: string, forced: SourceKind | undefined): Promise<SourceKind | null> {
  if (forced !== undefined) {
    if (forced === 'synalinks' || !OTHER_CANDIDATE.test(full)) return null;
    const head = readHead(full);
    return head === null || head.length === 0 || startsAsJson(head) || TABLE_FILE.test(full) ? forced : null;
  }
  if (!OTHER_CANDIDATE.test(full)) return null;
  const kind = await detectSource(full);
  return kind === 'synalinks' ? null : kind;
}

/**
 * A name that is not UTF-8 on disk reaches a string path with U+FFFD in place of its bad
 * bytes, and that path names nothing: such a file or folder must be reported, not passed over.
 */
function notUtf8Name(target: string): boolean {
  return target.includes('\uFFFD');
}

/** Why a file cannot be read, in words, or null when it can. */
export function unreadableReason(error: unknown, target?: string): string {
  const e = error as NodeJS.ErrnoException;
  if (e?.code === 'ENOENT' && target !== undefined && notUtf8Name(target)) {
    return 'cannot read: its name is not valid UTF-8, and Node cannot open anything by such a name: rename it (ENOENT)';
  }
  const words: Record<string, string> = {
    EACCES: 'permission denied',
    EPERM: 'not permitted',
    EIO: 'input/output error',
    ELOOP: 'too many symbolic links',
    EMFILE: 'too many open files',
    ENOENT: 'it disappeared while being read',
    ENOTDIR: 'not a folder',
    EISDIR: 'a folder, not a file',
  };
  return typeof e?.code === 'string' ? `cannot read: ${words[e.code] ?? e.message} (${e.code})` : `cannot read: ${String(error)}`;
}

function readable(file: string): string | null {
  try {
    accessSync(file, constants.R_OK);
    return null;
  } catch (error) {
    return unreadableReason(error, file);
  }
}

/** Enough of a Synalinks line to hold its first keys (`program` and `module` come early, in a fixed order). */
const PEEK_BYTES = 8192;

export interface PeekedNames {
  program: string | null;
  module: string | null;
}

/** What a Synalinks file's first record says of itself, from its first bytes. */
export function peekNames(file: string): PeekedNames {
  const head = readHead(file, PEEK_BYTES);
  if (head === null) return { program: null, module: null };
  return { program: headText(head, 'program'), module: headText(head, 'module') };
}

/**
 * The root of the tree a trace file sits in, from what its record says:
 * `<root>/<program>/<module>/<module>_ts.jsonl`, or `<root>/<program>/<program>_ts.jsonl`
 * for a program's own records (program and module one, or the file named for the program).
 * Null when the file's name does not match its folder.
 */
function treeRootOf(file: string, said: PeekedNames = peekNames(file)): string | null {
  const match = TRACE_FILE_NAME.exec(path.basename(file));
  const folder = path.dirname(file);
  if (match === null || match.groups!.stem !== path.basename(folder)) return null;
  if (said.program !== null && (said.program === match.groups!.stem || said.program === said.module)) return path.dirname(folder);
  return path.dirname(path.dirname(folder));
}

/**
 * What the trace files of `file`'s folder say of themselves (see `peekNames`). A module
 * folder holds one module's files, so the first file naming its program says it for all:
 * one look per folder, not per file. A file naming none (its first line cut) leaves it to the next.
 */
function folderNames(file: string, known: Map<string, PeekedNames>): PeekedNames {
  const folder = path.dirname(file);
  const said = known.get(folder) ?? peekNames(file);
  if (said.program !== null) known.set(folder, said);
  return said;
}

/** Trace files are at most this many folders below a tree root (`<program>/<module>/<file>`). */
const TREE_DEPTH = 3;

/**
 * Files under `absolute`, at any depth, as sorted `/`-separated relative paths; names that
 * start with a dot are passed over, as shells and git do, but for the recorders' own hidden
 * folders (`HOME_FOLDERS`), and the hidden folders passed over are noted. Links are followed, but never into
 * a folder the walk is already inside, which ends link loops. A folder or file that cannot be
 * read is noted as unreadable, never passed over; a dangling link holds nothing and is.
 */
function walk(absolute: string, into: Discovery): string[] {
  const files: string[] = [];
  const note = (target: string, error: unknown): void => {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || notUtf8Name(target)) into.unreadable!.push({ path: displayPath(target), reason: unreadableReason(error, target) });
  };
  const inside = new Set<string>();
  // `within`: below a recorder's hidden folder, the rest of the paths that may be entered (null: any).
  const visit = (folder: string, relative: string, identity: string, within: string[][] | null): void => {
    let entries;
    try {
      entries = readdirSync(folder, { withFileTypes: true });
    } catch (error) {
      note(folder, error);
      return;
    }
    inside.add(identity);
    for (const entry of entries) {
      let rest: string[][] | null = null;
      if (within !== null || entry.name.startsWith('.')) {
        const paths = (within ?? HOME_FOLDERS).filter((home) => home[0] === entry.name);
        if (paths.length === 0) {
          if (within === null && entry.isDirectory()) into.hidden!.push(displayPath(path.join(folder, entry.name)));
          continue;
        }
        rest = paths.some((home) => home.length === 1) ? null : paths.map((home) => home.slice(1));
        // A recorder's own files lie at or below the end of its path, never beside it.
        if (rest !== null && !entry.isDirectory() && !entry.isSymbolicLink()) continue;
      }
      const full = path.join(folder, entry.name);
      const below = relative === '' ? entry.name : `${relative}/${entry.name}`;
      // A plain file needs no stat of its own: on a tree of thousands, that is a call per file saved.
      if (entry.isFile()) {
        files.push(below);
        continue;
      }
      let info: Stats;
      try {
        info = statSync(full);
      } catch (error) {
        note(full, error);
        continue;
      }
      if (info.isDirectory()) {
        if (!inside.has(identityOfStats(info))) visit(full, below, identityOfStats(info), rest);
      } else if (info.isFile() && rest === null) files.push(below);
    }
    inside.delete(identity);
  };
  visit(absolute, '', identityOfStats(statSync(absolute)), null);
  return files.sort();
}

/** A folder whose place in a tree its records do not say: which folder to name instead, in one line. */
function unattributedMessage(folder: string): string {
  const [above, twoAbove] = [path.dirname(folder), path.dirname(path.dirname(folder))];
  return (
    `${printable(displayPath(folder))}: its trace files name no program, so whether it is a program or a module folder cannot be told: ` +
    `name the Synalinks root it is in: ${printable(displayPath(twoAbove))}, or ${printable(displayPath(above))} if ${printable(path.basename(folder))} is a program folder`
  );
}

async function discoverRoot(root: string, into: Discovery, options: DiscoverOptions): Promise<void> {
  const absolute = path.resolve(root);
  let info;
  try {
    info = await stat(absolute);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new UserError(`${root}: no such file or folder (give a trace folder or file: ${sourceLabels()})`);
    into.unreadable!.push({ path: displayPath(absolute), reason: unreadableReason(error) });
    return;
  }
  if (info.isFile()) {
    const unreadable = readable(absolute);
    if (unreadable !== null) {
      into.unreadable!.push({ path: displayPath(absolute), reason: unreadable });
      return;
    }
    const file = { path: absolute, display: displayPath(absolute), root: path.dirname(absolute) };
    if (options.source !== undefined) {
      into.files.push({ ...file, source: options.source });
      return;
    }
    // A file named directly is read as Synalinks unless its content is another recorder's;
    // a non-JSONL file of no known shape is reported rather than read.
    const detected = TRACE_FILE_NAME.test(path.basename(absolute)) ? 'synalinks' : await detectSource(absolute);
    // Inside a tree, it keeps its place there, as in an output tree of dedupe or filter.
    if (detected === 'synalinks' || (detected === null && absolute.endsWith('.jsonl'))) into.files.push({ ...file, root: treeRootOf(absolute) ?? file.root, source: 'synalinks' });
    else if (detected !== null) into.files.push({ ...file, source: detected });
    else into.skipped.push({ path: file.display, reason: compressedReason(path.basename(absolute)) ?? `no known recorder format (${sourceLabels()})` });
    return;
  }
  if (!info.isDirectory()) throw new UserError(`${root}: not a file or folder (give a trace folder or file: ${sourceLabels()})`);
  const entries = walk(absolute, into);
  // A program or module folder named as the root: its trace files sit above the depth a tree root has.
  const insideTree = entries.some((relative) => !relative.includes('/') && TRACE_FILE_NAME.exec(relative)?.groups?.stem === path.basename(absolute));
  const said = new Map<string, PeekedNames>();
  for (const relative of entries) {
    const full = path.join(absolute, relative);
    const unreadable = readable(full);
    if (unreadable !== null) {
      into.unreadable!.push({ path: displayPath(full), reason: unreadable });
      continue;
    }
    const parts = relative.split('/');
    const depth = parts.length;
    let reason = depth <= TREE_DEPTH ? whyNotTraceFile(relative) : whyNotTraceName(parts[depth - 2], parts[depth - 1]);
    let fileRoot = absolute;
    if (depth === 1 && insideTree && reason === 'not at <program>/<module>/ depth') {
      // A module folder (or a program's own files) named as the root.
      const treeRoot = treeRootOf(full);
      if (treeRoot !== null) [reason, fileRoot] = [null, treeRoot];
    } else if (depth === 2 && reason === null) {
      // `<x>/<x>_ts.jsonl` is a program's own file under a tree root, or a module's file under
      // a program folder named as the root: the record's program tells which.
      const { program } = folderNames(full, said);
      if (program !== null && program !== parts[0] && program === path.basename(absolute)) fileRoot = path.dirname(absolute);
    } else if (depth >= TREE_DEPTH && reason === null) {
      // Below the root named, the record says which tree the file is in: the folders are only
      // where the recorder put it. At the tree's own depth, the root named is the tree's.
      const names = folderNames(full, said);
      if (names.program === null && depth > TREE_DEPTH && statSync(full).size > 0) {
        into.unattributed!.add(path.dirname(full));
        continue;
      }
      fileRoot = treeRootOf(full, names)!;
      reason = whyNotTraceFile(path.relative(fileRoot, full).split(path.sep).join('/'));
    }
    if (reason === null && (options.source === undefined || options.source === 'synalinks')) {
      into.files.push({ path: full, display: displayPath(full), root: fileRoot, source: 'synalinks' });
      continue;
    }
    const other = reason === 'dataset cache' ? null : await otherSource(full, options.source);
    if (other !== null) into.files.push({ path: full, display: displayPath(full), root: absolute, source: other });
    else if (reason === null) into.skipped.push({ path: displayPath(full), reason: `not read as ${options.source} (--source)` });
    else if (options.source === undefined && reason !== 'dataset cache' && OTHER_CANDIDATE.test(full)) into.skipped.push({ path: displayPath(full), reason: `${reason}; no known recorder format (${sourceLabels(false)})` });
    else if (options.source !== 'synalinks' && reason !== 'dataset cache' && OTHER_CANDIDATE.test(full)) into.skipped.push({ path: displayPath(full), reason: `${reason}; not JSON, so no ${options.source} file` });
    else into.skipped.push({ path: displayPath(full), reason });
  }
}

export async function discover(roots: readonly string[], options: DiscoverOptions = {}): Promise<Discovery> {
  const result: Discovery = { files: [], skipped: [], unreadable: [], unattributed: new Set(), hidden: [] };
  const named = roots.length > 0 ? roots : [defaultRoot()];
  // path.resolve('') is the current folder: an unset shell variable would read it, and write beside it.
  if (named.some((root) => root.trim() === '')) throw new UserError('a root is an empty path: name a trace folder or file (is a shell variable unset?)');
  for (const root of named) await discoverRoot(root, result, options);
  // Read under a guessed program, its records would count, export and copy under a wrong name.
  const unattributed = [...result.unattributed!];
  if (unattributed.length > 0) throw new UserError(unattributedMessage(unattributed[0]!) + (unattributed.length > 1 ? ` (and ${unattributed.length - 1} more such folders)` : ''));
  result.inputs = realInputs(named);
  // A trace file reached through a link inside a root is an input where it really is.
  const named_ = result.inputs;
  const realFolders = new Map<string, string>();
  for (const file of result.files) {
    const folder = path.dirname(file.path);
    let real = realFolders.get(folder);
    if (real === undefined) realFolders.set(folder, (real = realInputs([folder])[0]!));
    if (!named_.some((input) => isInside(path.join(real!, path.basename(file.path)), input)) && !result.inputs.includes(real)) result.inputs.push(real);
  }
  result.files = oncePerFile(result.files, (file) => realFolders.get(path.dirname(file.path)) === path.dirname(file.path));
  for (const source of SOURCES) source.gather?.(result.files);
  for (const input of result.inputs) readsAlso(input);
  return result;
}


/**
 * Each file once, in discovery order, though reached by several paths (a root named twice, a
 * root inside another, a link to a folder inside a root): read twice, its records would count
 * twice and a tree copy would hold them twice. Of its paths, one with no link on the way wins.
 */
function oncePerFile(files: readonly TraceFile[], isRealPath: (file: TraceFile) => boolean): TraceFile[] {
  // What a file is on disk, whatever the path to it (the path itself when it cannot be read).
  // The one stat per file also gives its size, which planning the shares needs next.
  const identities = files.map((file) => {
    let info: Stats;
    try {
      info = statSync(file.path);
    } catch {
      return file.path;
    }
    file.size = info.size;
    file.stamp = fileStamp(info);
    return identityOfStats(info);
  });
  const chosen = new Map<string, TraceFile>();
  files.forEach((file, i) => {
    const kept = chosen.get(identities[i]);
    if (kept === undefined || (!isRealPath(kept) && isRealPath(file))) chosen.set(identities[i], file);
  });
  return files.filter((file, i) => chosen.get(identities[i]) === file);
}
