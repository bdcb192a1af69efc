/**
 * The exclusion file: one call_id per line, `#` starts a comment, blank lines ignored.
 * `--exclude FILE` of dedupe, filter and export reads the same format.
 */
import { closeSync, existsSync, openSync, readFileSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { UserError } from '../errors.js';
import { idsOfText, isWellFormedId, readIdFileText } from '../pipeline/id-list.js';
import { tempStem } from '../output/entry.js';
import { checkOutputPath } from '../output/output-path.js';
import { writeAll } from '../output/write-all.js';

export const DEFAULT_EXCLUDE_FILE = 'traces-exclude.txt';

/** The call_ids of an exclusion file's text, read as `--exclude` reads it (`idsOfText`). */
export function parseExcludeText(text: string): string[] {
  return idsOfText(text).map(({ id }) => id);
}

/**
 * The call_ids of an existing exclusion file, or an empty set when there is none. browse
 * writes this file back when asked to, so a file that is no list of call_ids (another file
 * named by mistake: a line with spaces, quotes or brackets) is refused here, before anything
 * could be written over it.
 */
/**
 * What this process last read from or wrote to each exclusion file (null: there was none).
 * The file is written over only while it still holds that: a list edited elsewhere meanwhile
 * (another editor, another browse) is never lost.
 */
const lastSeen = new Map<string, string | null>();

function currentText(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

export function readExcludeFile(file: string, flag = '--exclude'): Set<string> {
  if (!existsSync(file)) {
    lastSeen.set(path.resolve(file), null);
    return new Set();
  }
  const text = readIdFileText(flag, file);
  lastSeen.set(path.resolve(file), text);
  const ids = parseExcludeText(text);
  const stray = ids.find((id) => !isWellFormedId(id));
  if (stray !== undefined) {
    throw new UserError(
      `${flag} ${file} exists and is not a list of call_ids (${JSON.stringify(stray.slice(0, 60))} is no call_id); browse writes this file when you press w: name a new file, or a list traces wrote`,
    );
  }
  return new Set(ids);
}

/** The header line naming the trees a list was written for: `# for: ["/abs/root", …]`. */
const FOR_LINE = '# for: ';

export function formatExcludeText(callIds: readonly string[], now = new Date(), roots: readonly string[] = []): string {
  const header = [
    '# traces browse: call_ids marked for exclusion, one per line.',
    '# Leave them out with: traces export|dedupe|filter ... --exclude <this file>',
    `# ${callIds.length} call_id${callIds.length === 1 ? '' : 's'}, written ${now.toISOString()}`,
    // The trees browse read: a list belongs to them, and a browse of another tree says so.
    ...(roots.length > 0 ? [`${FOR_LINE}${JSON.stringify(roots)}`] : []),
  ];
  return `${[...header, ...callIds].join('\n')}\n`;
}

/**
 * Writes through a temporary file and a rename, so a reader never sees half a list. The
 * path passes the output checks (no link, not a folder, not one of the trees browse reads:
 * w's prompt can name any path). It replaces only the list browse read or wrote, as it was
 * then: any other existing file (a name typed at the prompt) is kept as it is.
 */
/** The trees an exclusion file was written for (its `# for:` line), or null when it names none. */
export function excludeFileRoots(text: string): string[] | null {
  const line = text.split('\n').find((l) => l.startsWith(FOR_LINE));
  if (line === undefined) return null;
  try {
    const roots = JSON.parse(line.slice(FOR_LINE.length)) as unknown;
    return Array.isArray(roots) && roots.every((r) => typeof r === 'string') ? (roots as string[]) : null;
  } catch {
    return null;
  }
}

/** The text of an exclusion file as `readExcludeFile` read it (null: there was none, or it was not read). */
export function readText(file: string): string | null {
  return lastSeen.get(path.resolve(file)) ?? null;
}

/**
 * What browse says at start of the call_ids an exclusion file lists: they are marked where
 * this tree holds them (the title counts those), and kept when `w` rewrites the file; and when
 * the file names other trees than these, that it was written for them.
 */
export function preloadMessage(file: string, listed: number, text: string | null, roots: readonly string[]): string | undefined {
  if (listed === 0) return undefined;
  const ids = `${listed} call_id${listed === 1 ? '' : 's'} listed in ${path.basename(file)}`;
  const writtenFor = text === null ? null : excludeFileRoots(text);
  const same = writtenFor === null || roots.length === 0 || (writtenFor.length === roots.length && writtenFor.every((r, i) => r === roots[i]));
  const other = same ? '' : `, written for ${writtenFor!.join(' ')} (not this tree)`;
  return `${ids}${other}: marked where this tree holds them, kept when w rewrites the file`;
}

export function writeExcludeFile(file: string, text: string, inputs: readonly string[] = []): void {
  const target = checkOutputPath({ flag: '--exclude', given: file, kind: 'file', inputs, force: true }).absolute;
  const seen = lastSeen.get(path.resolve(file));
  const now = currentText(target);
  // browse says which file it could not write: the reason alone, so the status line holds it.
  if (seen === undefined && now !== null) {
    throw new UserError('it exists and is not the list browse started with, so it is kept as it is: name a new file, or start browse with --exclude <it> to add to it');
  }
  if (seen !== undefined && now !== null && now !== seen) {
    throw new UserError('it changed on disk since browse read it, and is kept as it is: rename or remove it, then write again');
  }
  const temporary = path.join(path.dirname(target), `.${tempStem(path.basename(target))}.traces-partial-${process.pid}`);
  rmSync(temporary, { force: true });
  const fd = openSync(temporary, 'wx');
  try {
    writeAll(fd, text, target);
  } catch (error) {
    closeSync(fd);
    rmSync(temporary, { force: true });
    throw error;
  }
  closeSync(fd);
  renameSync(temporary, target);
  lastSeen.set(path.resolve(file), text);
}
