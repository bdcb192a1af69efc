/**
 * Where a span stands in an OTLP file, from its bytes alone: the `"spanId"` (or `"span_id"`)
 * member keys before it. Every span has one, and inside a JSON string the quotes would be
 * escaped (`\"spanId\"`), so counting the keys not preceded by a backslash counts spans (and
 * the links that name one) in any byte range; a line cannot split a key. A work share reading
 * the lines of a range numbers its spans from the keys before the range, the same numbers a
 * read of the whole file gives, at the cost of one scan of what lies before (remembered per
 * thread, so the shares of a file handed to one thread in order scan it once in all).
 */
import { closeSync, readSync } from 'node:fs';
import { openListedFile } from '../lines.js';

const KEYS = [Buffer.from('"spanId"'), Buffer.from('"span_id"')];
/** What every key starts with. */
const PREFIX = Buffer.from('"span');
const BACKSLASH = 0x5c;
const CHUNK = 4 << 20;
const LONGEST = Math.max(...KEYS.map((k) => k.length));

/** The keys starting in [from, to) of `b` (a key may run past `to`; the byte before `from` is looked at). */
export function spanKeys(b: Buffer, from: number, to: number): number {
  // One search for what both keys start with, each key then counted as its own search would
  // (no two matches of one key overlapping): one pass over the line instead of two.
  let n = 0;
  const ends = KEYS.map(() => 0);
  for (let i = b.indexOf(PREFIX, from); i !== -1 && i < to; i = b.indexOf(PREFIX, i + 1)) {
    for (let k = 0; k < KEYS.length; k++) {
      const key = KEYS[k];
      if (i < ends[k] || !startsWith(b, i, key)) continue;
      ends[k] = i + key.length;
      if (i === 0 || b[i - 1] !== BACKSLASH) n++;
    }
  }
  return n;
}

function startsWith(b: Buffer, at: number, key: Buffer): boolean {
  if (at + key.length > b.length) return false;
  for (let j = PREFIX.length; j < key.length; j++) if (b[at + j] !== key[j]) return false;
  return true;
}

/** The keys starting in [start, end) of the file at `path`. */
export function spanKeysInFile(path: string, start: number, end: number): number {
  if (end <= start) return 0;
  const fd = openListedFile(path);
  const buffer = Buffer.allocUnsafe(CHUNK + LONGEST + 1);
  let n = 0;
  try {
    for (let pos = start; pos < end; pos += CHUNK) {
      // One byte before (is the key escaped?) and a key's length after (a key across the cut).
      const from = pos > 0 ? pos - 1 : 0;
      const want = Math.min(end - pos, CHUNK) + (pos - from) + LONGEST;
      let got = 0;
      while (got < want) {
        const r = readSync(fd, buffer, got, want - got, from + got);
        if (r === 0) break;
        got += r;
      }
      const view = buffer.subarray(0, got);
      n += spanKeys(view, pos - from, pos - from + Math.min(end - pos, CHUNK));
    }
  } finally {
    closeSync(fd);
  }
  return n;
}

/** The last place a count is known at in a file, per thread. */
let known: { path: string; offset: number; keys: number } | null = null;

/** Notes that `keys` keys lie before byte `offset` of the file. */
export function rememberKeys(path: string, offset: number, keys: number): void {
  known = { path, offset, keys };
}

/** The keys before byte `offset` of the file, going on from the count last known before it. */
export function spanKeysBefore(path: string, offset: number): number {
  if (offset === 0) return 0;
  const from = known !== null && known.path === path && known.offset <= offset ? known : { offset: 0, keys: 0 };
  const keys = from.keys + spanKeysInFile(path, from.offset, offset);
  known = { path, offset, keys };
  return keys;
}
