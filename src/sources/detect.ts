/**
 * Which recorder wrote a file, from the shape of its content: the keys of its top-level
 * object (or of the first element of a top-level array, or of its first line), read from
 * the first bytes only. File names do not count: Ask writes JSON into `recording.yml`.
 */
import type { SourceKind } from '../record.js';
import { decodeString, skipString, skipValue, skipWhitespace } from '../canonical/scan.js';
import { SOURCES } from './registry.js';
import { readHead } from './head.js';

export { SOURCE_KINDS } from './registry.js';

/** Where the first value in `head` starts, past white space and a byte order mark. */
function contentStart(head: Buffer): number {
  const p = skipWhitespace(head, 0, head.length);
  return head[p] === 0xef && head[p + 1] === 0xbb && head[p + 2] === 0xbf ? skipWhitespace(head, p + 3, head.length) : p;
}

/** Whether `head` starts as a JSON object or list would: what every recorder writes, and YAML or a config file does not. */
export function startsAsJson(head: Buffer): boolean {
  const p = contentStart(head);
  return head[p] === 0x7b || head[p] === 0x5b;
}

/**
 * Top-level members of the first object in `head`, in order, as far as the bytes go: each
 * key with where its value lies, or null for a value cut off by the end of the head.
 */
function headMembers(head: Buffer): { key: string; value: [number, number] | null }[] {
  const members: { key: string; value: [number, number] | null }[] = [];
  let p = contentStart(head);
  // A list of runs: look at its first element.
  if (head[p] === 0x5b) p = skipWhitespace(head, p + 1, head.length);
  if (head[p] !== 0x7b) return members;
  p = skipWhitespace(head, p + 1, head.length);
  try {
    while (p < head.length && head[p] === 0x22) {
      const keyEnd = skipString(head, p, head.length);
      const member: { key: string; value: [number, number] | null } = { key: decodeString(head, p, keyEnd), value: null };
      members.push(member);
      p = skipWhitespace(head, keyEnd, head.length);
      if (head[p] !== 0x3a) break;
      const start = skipWhitespace(head, p + 1, head.length);
      p = skipValue(head, start, head.length);
      member.value = [start, p];
      p = skipWhitespace(head, p, head.length);
      if (head[p] !== 0x2c) break;
      p = skipWhitespace(head, p + 1, head.length);
    }
  } catch {
    // The head ends inside a value: the members so far are what we know.
  }
  return members;
}

/** Top-level keys of the first object in `head`: a value cut off by the end of the head still counts its key. */
export function headKeys(head: Buffer): string[] {
  return headMembers(head).map((member) => member.key);
}

/** The top-level string `key` of the first object in `head`, or null (absent, not a string, cut off). */
export function headText(head: Buffer, key: string): string | null {
  const value = headMembers(head).find((member) => member.key === key)?.value;
  if (value == null || head[value[0]] !== 0x22) return null;
  try {
    return decodeString(head, value[0], value[1]);
  } catch {
    return null;
  }
}

/** The recorder whose shape these top-level keys (of `head`, when known) have, or null. */
export function kindOfKeys(keys: readonly string[], head: Buffer = Buffer.alloc(0)): SourceKind | null {
  if (keys.includes('synalinks_version')) return 'synalinks';
  return SOURCES.find((source) => source.detect(keys, head))?.kind ?? null;
}

/** The first bytes of every Parquet file (and its last four). */
export const PARQUET_MAGIC = Buffer.from('PAR1');

/** The column names of a CSV file's header, from its first bytes (empty when it has none). */
export function csvHeader(head: Buffer): string[] {
  const end = head.indexOf(0x0a);
  const first = (end === -1 ? head : head.subarray(0, end)).toString('utf8').replace(/^\uFEFF/, '').replace(/\r$/, '');
  const names: string[] = [];
  // Names are quoted or bare, never holding a line break: split as CSV does.
  for (const match of first.matchAll(/"((?:[^"]|"")*)"|([^,]+)/g)) names.push((match[1] ?? match[2] ?? '').replaceAll('""', '"').trim());
  return names;
}

/** The column names of a Parquet file, or none when the engine cannot read its schema. */
async function parquetColumns(path: string): Promise<string[]> {
  try {
    return await (await import('../engine/duckdb.js')).parquetColumnNames(path);
  } catch {
    return [];
  }
}

/**
 * The recorder that wrote the file at `path`, from its first bytes (a table's column names:
 * a CSV file's header, a Parquet file's schema); null when none matches.
 */
export async function detectSource(path: string): Promise<SourceKind | null> {
  const head = readHead(path);
  if (head === null) return null;
  if (head.subarray(0, 4).equals(PARQUET_MAGIC)) return kindOfKeys(await parquetColumns(path), head);
  if (path.toLowerCase().endsWith('.csv')) return kindOfKeys(csvHeader(head), head);
  return kindOfKeys(headKeys(head), head);
}
