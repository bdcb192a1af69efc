/**
 * The exclusion file: one call_id per line, `#` starts a comment, blank lines ignored.
 * `--exclude FILE` of dedupe, filter and export reads the same format.
 */
import { closeSync, existsSync, openSync, readFileSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { checkOutputPath } from '../output/output-path.js';
import { writeAll } from '../output/write-all.js';

export const DEFAULT_EXCLUDE_FILE = 'traces-exclude.txt';

export function parseExcludeText(text: string): string[] {
  const ids: string[] = [];
  // As commands/curation-options.ts reads it: `#` starts a comment, anywhere on a line.
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/#.*/, '').trim();
    if (line !== '') ids.push(line);
  }
  return ids;
}

/** The call_ids of an existing exclusion file, or an empty set when there is none. */
export function readExcludeFile(file: string): Set<string> {
  if (!existsSync(file)) return new Set();
  return new Set(parseExcludeText(readFileSync(file, 'utf8')));
}

export function formatExcludeText(callIds: readonly string[], now = new Date()): string {
  const header = [
    '# traces browse: call_ids marked for exclusion, one per line.',
    '# Leave them out with: traces export|dedupe|filter ... --exclude <this file>',
    `# ${callIds.length} call_id${callIds.length === 1 ? '' : 's'}, written ${now.toISOString()}`,
  ];
  return `${[...header, ...callIds].join('\n')}\n`;
}

/**
 * Writes through a temporary file and a rename, so a reader never sees half a list. The
 * path passes the output checks (no link, not a folder; browse checked it against its
 * inputs when it started); the list replaces the one browse read, so an existing file is expected.
 */
export function writeExcludeFile(file: string, text: string, inputs: readonly string[] = []): void {
  const target = checkOutputPath({ flag: '--exclude', given: file, kind: 'file', inputs, force: true }).absolute;
  const temporary = path.join(path.dirname(target), `.${path.basename(target)}.traces-partial-${process.pid}`);
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
}
