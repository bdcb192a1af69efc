/** Folder names built from record fields, made safe: they can never leave the output folder. */
import { createHash } from 'node:crypto';
import path from 'node:path';
import { META_DIR } from './output-dir.js';

const UNSAFE = /[^A-Za-z0-9._-]/g;
const MAX_KEPT = 120;

/**
 * One path segment from a program or module name: no separators, no `..`, never empty, and
 * never the segment of another name. A name that is not already safe keeps its safe
 * characters and gains `-` and 8 hex digits of its sha256: without them `翻訳` and `要約`
 * (both `__`), or `a/b` and `a_b`, shared one folder, and two modules' examples one dataset.
 */
export function safeSegment(name: string): string {
  let segment = name.replace(UNSAFE, '_').slice(0, MAX_KEPT);
  if (segment === '' || /^\.+$/.test(segment)) segment = `_${segment}`;
  // Hidden folders are easy to miss, and `.` prefixes are how `..` sneaks in.
  if (segment.startsWith('.')) segment = `_${segment.slice(1)}`;
  if (segment === name && !isReservedName(segment) && !isWindowsDeviceName(segment)) return segment;
  return `${segment}-${shortHash(name)}`;
}

/**
 * Names Windows cannot give a folder: its device names, alone or before an extension (`con`,
 * `aux.txt`), in any case, and names ending in a dot or space (it drops them, so `a.` would
 * be `a`). An output copied there, or written to a share Windows serves, would fail or land
 * on the device: such a name gains a hash as an unsafe one does.
 */
const WINDOWS_DEVICE = /^(con|prn|aux|nul|com[1-9]|lpt[1-9])(\..*)?$/i;
export function isWindowsDeviceName(segment: string): boolean {
  return WINDOWS_DEVICE.test(segment) || /[. ]$/.test(segment);
}

/** Longest joined segment kept whole: well under the 255 bytes file systems allow a name. */
const MAX_JOINED = 200;

/**
 * One path segment for several names, each made safe (`safeSegment`) and joined by `__`. Two
 * long names joined came to 262 bytes, which no file system takes (ENAMETOOLONG): a joined
 * name past MAX_JOINED is cut, and gains 8 hex digits of the sha256 of all the names.
 */
export function joinedSegment(names: readonly string[]): string {
  const joined = names.map(safeSegment).join('__');
  return joined.length <= MAX_JOINED ? joined : `${joined.slice(0, MAX_KEPT)}-${shortHash(names.join('\0'))}`;
}

/** The export's report, at the top of its output folder. */
export const REPORT_FILE = 'report.json';

/**
 * Names traces keeps for itself at the top of an output folder: its bookkeeping (`_traces/`),
 * its staging (`.traces-partial-<pid>`) and the export's report. A program so named gets a
 * folder of another name, or its records would be written among the run's own files.
 */
export function isReservedName(segment: string): boolean {
  // In any case: on macOS and Windows `_Traces` is the same folder.
  const name = segment.toLowerCase();
  return name === META_DIR || name === REPORT_FILE || name.startsWith('.traces-');
}

/** A path below an output folder whose first folder is not one of traces' own (see `isReservedName`). */
export function outsideReserved(relative: string): string {
  const [first, ...rest] = relative.split(path.sep);
  return isReservedName(first) ? path.join(`${first}-${shortHash(first)}`, ...rest) : relative;
}

function shortHash(name: string): string {
  return createHash('sha256').update(name).digest('hex').slice(0, 8);
}

/**
 * Output names that stay apart where case does not (macOS, Windows, and any copy of the
 * output there): of `Gen` and `gen`, the second to come gains 8 hex digits of its sha256,
 * as `safeSegment` does. Otherwise one dataset would land on the other.
 */
export class CaseDistinctNames {
  private readonly chosen = new Map<string, string>();
  private readonly folded = new Set<string>();

  nameFor(name: string): string {
    let unique = this.chosen.get(name);
    if (unique === undefined) {
      unique = this.folded.has(name.toLowerCase()) ? `${name}-${shortHash(name)}` : name;
      this.chosen.set(name, unique);
      this.folded.add(unique.toLowerCase());
    }
    return unique;
  }
}
