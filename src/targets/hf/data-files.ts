/**
 * A dataset card's `configs: data_files` resolved to files the way `datasets` resolves them
 * (huggingface/datasets `src/datasets/data_files.py`, `resolve_pattern` and
 * `DataFilesList.from_patterns`, read at 00724a7db15e), so `validate DIR --format hf` checks the
 * files a loader of the card reads:
 *
 * - each entry is a path or a glob relative to the folder, matched by fsspec's glob (Python's
 *   glob: `*` and `?` within a name, `[...]`, a name that is `**` for any folders);
 * - only files count, and a link whose target is a file (fsspec's `islink` with the target a
 *   file): a link to a shard is read through it;
 * - hidden names (`.x`) and folders named `__x` are left out unless the pattern names them as
 *   many times; README.md, dataset_info.json, dataset_infos.json, config.json, dummy_data.zip and
 *   dataset_dict.json are left out unless the pattern names that file;
 * - an entry with no glob character that matches nothing fails the load (FileNotFoundError); a
 *   glob that matches nothing is passed over;
 * - every pattern's files are added to the split in turn: a file two patterns match is read twice.
 */
import { lstatSync, readdirSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { pathGlob, type Glob } from '../../pipeline/glob.js';
import { compareText } from '../../order.js';

/** Names `resolve_pattern` passes over unless the pattern is that name (data_files.py `FILES_TO_IGNORE`). */
const FILES_TO_IGNORE = ['README.md', 'config.json', 'dataset_info.json', 'dataset_infos.json', 'dummy_data.zip', 'dataset_dict.json'];

/** A file of the folder, by its `/` path from the folder. */
export interface FolderFile {
  path: string;
  /** The symbolic link its path goes through (itself, a link to a file, or a linked folder above it), or null. */
  link: string | null;
}

/** Python's glob.has_magic: whether a pattern holds a glob character. */
export function hasMagic(pattern: string): boolean {
  return /[*?[]/.test(pattern);
}

/**
 * Every file of the folder at any depth, sorted as fsspec sorts them; links to files included,
 * and the files of a linked folder (a glob goes through it, as Python's does), each marked `link`
 * (its path goes through one). A folder met twice (a link to a parent) is walked once.
 */
export function folderFiles(dir: string): FolderFile[] {
  const files: FolderFile[] = [];
  const walked = new Set<string>();
  const walk = (rel: string, viaLink: string | null): void => {
    let names: string[];
    try {
      const real = realpathSync(path.join(dir, rel));
      if (walked.has(real)) return;
      walked.add(real);
      names = readdirSync(path.join(dir, rel));
    } catch {
      return;
    }
    for (const name of names) {
      const at = rel === '' ? name : `${rel}/${name}`;
      let stat;
      try {
        stat = lstatSync(path.join(dir, at));
      } catch {
        continue;
      }
      if (stat.isDirectory()) walk(at, viaLink);
      else if (stat.isFile()) files.push({ path: at, link: viaLink });
      else if (stat.isSymbolicLink()) {
        try {
          const target = statSync(realpathSync(path.join(dir, at)));
          if (target.isFile()) files.push({ path: at, link: at });
          else if (target.isDirectory()) walk(at, viaLink ?? at);
        } catch {
          // A dangling link is no file to a loader.
        }
      }
    }
  };
  walk('', null);
  return files.sort((a, b) => compareText(a.path, b.path));
}

const hiddenParts = (p: string): number => p.split('/').filter((part) => part.startsWith('.') && !/^\.+$/.test(part)).length;
const specialFolders = (p: string): number => p.split('/').slice(0, -1).filter((part) => part.startsWith('__')).length;

/**
 * The files one data_files entry names, in order, or why the load fails on it. `files`: the
 * folder's (folderFiles).
 */
export function resolvePattern(pattern: string, files: readonly FolderFile[]): FolderFile[] | string {
  const relative = pattern.replace(/^\.\//, '');
  if (path.isAbsolute(relative) || /^[a-z][a-z0-9+.-]*:\/\//i.test(relative)) return `names ${pattern}, which is outside the folder: a copy of it on the Hub has no such file`;
  let matcher: Glob;
  try {
    matcher = pathGlob(relative, 'data_files');
  } catch {
    return `names ${JSON.stringify(pattern)}, which is no glob datasets can resolve`;
  }
  const ignored = new Set(FILES_TO_IGNORE.filter((name) => name !== path.posix.basename(relative)));
  const matched = files.filter(
    (f) =>
      matcher.test(f.path) &&
      !ignored.has(path.posix.basename(f.path)) &&
      specialFolders(f.path) === specialFolders(relative) &&
      hiddenParts(f.path) === hiddenParts(relative),
  );
  if (matched.length === 0 && !hasMagic(pattern)) return `declares ${pattern}, which does not exist`;
  return matched;
}

/** A split's entries resolved in turn: its files (repeats kept, as datasets reads them), and the entries a load fails on. */
export function resolveSplit(patterns: readonly string[], files: readonly FolderFile[]): { files: FolderFile[]; problems: string[] } {
  const resolved: FolderFile[] = [];
  const problems: string[] = [];
  for (const pattern of patterns) {
    const found = resolvePattern(pattern, files);
    if (typeof found === 'string') problems.push(found);
    else resolved.push(...found);
  }
  return { files: resolved, problems };
}

/** datasets' SPLIT_PATTERN_SHARDED: the files a card without data_files is read from, by split. */
const SHARDED = /^data\/([^/]+?)-[0-9]{5}-of-[0-9]{5}[^/]*\.[^/]*$/;

/**
 * The splits a loader finds in a folder whose card names no data_files (data_files.py
 * `get_data_patterns`): the sharded shape `data/{split}-00000-of-00001.*` first, each split the
 * pattern with its name; null when no file has that shape (datasets then tries keyword patterns,
 * which traces never writes).
 */
export function defaultSplits(files: readonly FolderFile[]): Map<string, string[]> | null {
  const splits = new Set<string>();
  for (const f of files) {
    const match = SHARDED.exec(f.path);
    if (match !== null && hiddenParts(f.path) === 0) splits.add(match[1]!);
  }
  if (splits.size === 0) return null;
  const order = ['train', 'validation', 'test'];
  const sorted = [...order.filter((s) => splits.has(s)), ...[...splits].filter((s) => !order.includes(s)).sort(compareText)];
  return new Map(sorted.map((split) => [split, [`data/${split}-[0-9][0-9][0-9][0-9][0-9]-of-[0-9][0-9][0-9][0-9][0-9]*.*`]]));
}
