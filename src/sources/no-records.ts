/**
 * What a run that read no record says. A file of other JSON lines (an exported dataset, plain
 * text named .jsonl) gives nothing but damaged lines: an empty dataset or a table of zeros with
 * exit 0 would read as success, so every reading command says instead what it found, and
 * whether the file looks like one traces wrote (lines with `messages` and no `call_id`).
 */
import { sourceLabels, sourceOf } from './registry.js';
import { closeSync, openSync, readSync } from 'node:fs';
import { plural, printable } from '../format.js';
import type { DamagedLine } from '../record.js';
import { UserError } from '../errors.js';
import { defaultRoot, type Discovery, type TraceFile } from './discover.js';

/** A first line longer than this is read only this far: a dataset's first example fits. */
const PROBE_BYTES = 1 << 20;
/** Files probed: enough to find a dataset among a few files, cheap on a tree of thousands. */
const PROBED_FILES = 20;

/** The first non-blank line of a file, as far as PROBE_BYTES reaches (null when unreadable). */
function firstLine(file: string): string | null {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return null;
  }
  try {
    const buffer = Buffer.alloc(PROBE_BYTES);
    const read = readSync(fd, buffer, 0, PROBE_BYTES, 0);
    const text = buffer.subarray(0, read).toString('utf8');
    return text.split('\n').find((line) => line.trim() !== '') ?? null;
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/** Whether a line is an example as traces exports it: a JSON object with `messages` and no `call_id`. */
export function looksLikeExample(line: string): boolean {
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === 'object' && value !== null && !Array.isArray(value) && 'messages' in value && !('call_id' in value);
  } catch {
    return false;
  }
}

/** The first of the files whose first line is an exported example, as shown to the user. */
export function datasetAmong(files: readonly TraceFile[]): string | null {
  for (const file of files.slice(0, PROBED_FILES)) {
    const line = firstLine(file.path);
    if (line !== null && looksLikeExample(line)) return file.display;
  }
  return null;
}

/** What the files that gave nothing hold, as their sources describe them (span files: their spans by kind); null when none can say. */
function unreadDescribed(files: readonly TraceFile[]): string | null {
  const said: string[] = [];
  for (const file of files.slice(0, PROBED_FILES)) {
    const text = sourceOf(file.source)?.describeUnread?.(file) ?? null;
    if (text !== null) said.push(files.length === 1 ? text : `${printable(file.display)}: ${text}`);
  }
  return said.length > 0 ? said.join('; ') : null;
}

/**
 * `no record read from ROOTS (1 file: 14 damaged lines, the first …)` and what to do: one
 * line, said on stderr by every reading command, which then exits 2. `damagedLines` null: not
 * counted by the command (runs).
 */
export function noRecordsMessage(where: string, files: readonly TraceFile[], damagedLines: number | null, firstDamaged?: DamagedLine): string {
  const lines = damagedLines === null ? '' : `: ${damagedLines === 0 ? (unreadDescribed(files) ?? 'no line in them') : plural(damagedLines, 'damaged line')}`;
  const found = `${plural(files.length, 'file')}${lines}`;
  const first = firstDamaged !== undefined ? `, the first ${printable(firstDamaged.file)}:${firstDamaged.line}: ${firstDamaged.reason}` : '';
  const dataset = datasetAmong(files);
  const advice =
    dataset !== null
      ? `${printable(dataset)} looks like an exported dataset (its lines have "messages" and no "call_id"), not recorded traces: check a dataset with traces validate ${printable(dataset)} --format openai|nemo|nemo-customizer`
      : `name a Synalinks trace folder (<root>/<program>/<module>/<module>_<timestamp>.jsonl) or a file of another recorder (${sourceLabels(false)})`;
  return `no record read from ${where} (${found}${first}): ${advice}`;
}

/** The roots as messages name them: the default root by its folder, said to be the default. */
export function rootsNamed(roots: readonly string[]): string {
  return printable(roots.length > 0 ? roots.join(' ') : `${defaultRoot()} (the default root: $SYNALINKS_HOME, else ~/.synalinks)`);
}

/**
 * A run that read no record stops with one line saying what it found instead (see
 * noRecordsMessage): exit 2, and nothing written (the caller aborts its output on the throw).
 */
export function refuseNoRecords(discovery: Discovery, records: number, damagedLines: number | null, firstDamaged?: DamagedLine): void {
  if (records > 0) return;
  // With inputs that could not be read, those are the problem the run found: exit 1, as when records were read beside them.
  const unreadable = (discovery.unreadable?.length ?? 0) > 0;
  throw new UserError(noRecordsMessage(discovery.where ?? rootsNamed([]), discovery.files, damagedLines, firstDamaged), unreadable ? 1 : 2);
}
