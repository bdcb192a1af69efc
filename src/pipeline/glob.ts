/**
 * Glob matching for `--program`/`--module`/`--model` and an hf card's `data_files`: picomatch
 * (the matcher fast-glob uses) reads every part of a glob that has a fixed width (literals,
 * `?`, `[abc]`, `[!a-z]`, escapes). What this module adds is how those parts are placed around
 * the stars, because every regular-expression translation of a glob, picomatch's included,
 * backtracks on `*a*a*a…*b` against a name of many `a`s (exponentially in the stars: hours at
 * twenty), and a data_files glob comes from a folder anyone may have written. As Python's
 * fnmatch does with atomic groups: between two stars, a part is placed at its first match
 * and never moved; only the last part is placed at the end. Each test is then at most the
 * name's length times the glob's.
 */
import picomatch from 'picomatch';
import { UserError } from '../errors.js';

/** Python's glob: `[!a]` negates, no braces or extglobs, a leading dot is a character like any other. */
const OPTIONS: picomatch.PicomatchOptions = { dot: true, posix: true, nobrace: true, noextglob: true, nonegate: true, strictSlashes: true };

export interface Glob {
  readonly text: string;
  test(name: string): boolean;
}

/** A run of fixed-width glob parts, as a sticky regular expression (picomatch's translation). */
function fixedPart(text: string): RegExp {
  if (text === '') return /(?:)/y;
  const { output } = picomatch.parse(text, OPTIONS);
  return new RegExp(`(?:${output})`, 'sy');
}

/** The glob text between its stars: `*` outside `[...]` and not escaped; runs of stars are one. */
function splitAtStars(glob: string): string[] {
  const parts: string[] = [];
  let start = 0;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '\\') i++;
    else if (c === '[') {
      const close = glob.indexOf(']', i + 2);
      if (close !== -1) i = close;
    } else if (c === '*') {
      parts.push(glob.slice(start, i));
      while (glob[i + 1] === '*') i++;
      start = i + 1;
    }
  }
  parts.push(glob.slice(start));
  return parts;
}

/** Where `part` matches in `name` at `at`: the end, or -1. */
function endAt(part: RegExp, name: string, at: number): number {
  part.lastIndex = at;
  return part.test(name) ? part.lastIndex : -1;
}

/** One name (a path's segment, or a whole name) against the fixed parts around its stars. */
function matchesParts(parts: readonly RegExp[], name: string): boolean {
  const last = parts.length - 1;
  let at = endAt(parts[0]!, name, 0);
  if (at === -1) return false;
  if (last === 0) return at === name.length;
  // Each middle part at its first match: a later one could only leave less room for the rest.
  for (let p = 1; p < last; p++) {
    let found = -1;
    for (let from = at; from <= name.length && found === -1; from++) found = endAt(parts[p]!, name, from);
    if (found === -1) return false;
    at = found;
  }
  for (let from = at; from <= name.length; from++) if (endAt(parts[last]!, name, from) === name.length) return true;
  return false;
}

function compiledName(glob: string): RegExp[] {
  return splitAtStars(glob).map(fixedPart);
}

/**
 * A glob over whole names (`--model openai/*`): `*` matches any text, `/` included; `flag`
 * names it in the error of a glob that is none (`[z-a]`).
 */
export function nameGlob(glob: string, flag: string): Glob {
  const parts = compiled(glob, flag, compiledName);
  return { text: glob, test: (name) => matchesParts(parts, name) };
}

/**
 * A glob of `/`-separated paths as Python's glob (and fsspec's, which `datasets` resolves
 * data_files with) reads one: `*`, `?` and `[...]` stay within a name, and a name that is `**`
 * alone stands for any number of folders, none included.
 */
export function pathGlob(glob: string, flag: string): Glob {
  const segments = compiled(glob, flag, (text) => text.split('/').map((segment) => (segment === '**' ? null : compiledName(segment))));
  return { text: glob, test: (name) => matchesPath(segments, name.split('/')) };
}

/** Segments against names, `**` (null) taking any number of them; each pair of places is tried once. */
function matchesPath(segments: readonly (RegExp[] | null)[], names: readonly string[]): boolean {
  const failed = new Set<number>();
  const from = (s: number, n: number): boolean => {
    const key = s * (names.length + 1) + n;
    if (failed.has(key)) return false;
    let ok: boolean;
    if (s === segments.length) ok = n === names.length;
    else if (segments[s] === null) {
      // Last, `**` is everything below; else any number of folders, then the rest.
      ok = s === segments.length - 1 ? n < names.length : false;
      for (let skip = n; !ok && skip < names.length; skip++) ok = from(s + 1, skip);
    } else ok = n < names.length && matchesParts(segments[s]!, names[n]!) && from(s + 1, n + 1);
    if (!ok) failed.add(key);
    return ok;
  };
  return from(0, 0);
}

function compiled<T>(glob: string, flag: string, compile: (glob: string) => T): T {
  try {
    return compile(glob);
  } catch (error) {
    throw new UserError(`${flag} ${JSON.stringify(glob)}: not a valid pattern (${(error as Error).message.replace(/^Invalid regular expression: \/.*\/[a-z]*: /, '')}): use *, ? and [abc] or [a-z]`);
  }
}
