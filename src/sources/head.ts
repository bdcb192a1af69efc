/**
 * A file's first bytes, which detection and the sources that peek at a file read; apart from
 * detect.ts so that a source can read them without importing the registry that lists it.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { decodeString, skipString, skipValue, skipWhitespace } from '../canonical/scan.js';

const HEAD_BYTES = 64 * 1024;

/** The first `bytes` of the file at `path`, or null when it cannot be read. */
export function readHead(path: string, bytes = HEAD_BYTES): Buffer | null {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return null;
  }
  try {
    const buffer = Buffer.allocUnsafe(bytes);
    return buffer.subarray(0, readSync(fd, buffer, 0, bytes, 0));
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

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
