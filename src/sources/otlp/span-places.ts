/**
 * Where a span stands in an OTLP file, from its bytes alone: the places before it, a place being
 * an opening brace `{`. Every span is a JSON object, and a brace is never escaped, so a line
 * holds at least as many places as spans however its keys are spelled (a span without a raw
 * `"spanId"` key, or with one written with `\u` escapes, still has its brace). The spans of a
 * line are numbered from the places before the line: the numbers leave gaps, but are unique,
 * grow with the file, and are the same in a read of the whole file and in a work share reading
 * the lines of a range, at the cost of one scan of what lies before the range (remembered per
 * thread, so the shares of a file handed to one thread in order scan it once in all).
 */
import { closeSync, readSync } from 'node:fs';
import { openListedFile } from '../lines.js';

const BRACE = 0x7b;
const CHUNK = 4 << 20;

/** The places (opening braces) in [from, to) of `b`. */
export function spanPlaces(b: Buffer, from: number, to: number): number {
  let n = 0;
  const end = Math.min(to, b.length);
  for (let i = b.indexOf(BRACE, from); i !== -1 && i < end; i = b.indexOf(BRACE, i + 1)) n++;
  return n;
}

/** The places in [start, end) of the file at `path`. */
export function spanPlacesInFile(path: string, start: number, end: number): number {
  if (end <= start) return 0;
  const fd = openListedFile(path);
  const buffer = Buffer.allocUnsafe(CHUNK);
  let n = 0;
  try {
    for (let pos = start; pos < end; pos += CHUNK) {
      const want = Math.min(end - pos, CHUNK);
      let got = 0;
      while (got < want) {
        const r = readSync(fd, buffer, got, want - got, pos + got);
        if (r === 0) break;
        got += r;
      }
      n += spanPlaces(buffer, 0, got);
    }
  } finally {
    closeSync(fd);
  }
  return n;
}

/** The last place a count is known at in a file, per thread. */
let known: { path: string; offset: number; places: number } | null = null;

/** Notes that `places` places lie before byte `offset` of the file. */
export function rememberPlaces(path: string, offset: number, places: number): void {
  known = { path, offset, places };
}

/** The places before byte `offset` of the file, going on from the count last known before it. */
export function spanPlacesBefore(path: string, offset: number): number {
  if (offset === 0) return 0;
  const from = known !== null && known.path === path && known.offset <= offset ? known : { offset: 0, places: 0 };
  const places = from.places + spanPlacesInFile(path, from.offset, offset);
  known = { path, offset, places };
  return places;
}
