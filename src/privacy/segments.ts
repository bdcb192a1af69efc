/**
 * Splits text around long base64 runs (data-URL images, b64_json fields). They are encoded
 * binary, never prose: skipping them avoids false alarms and keeps megabyte images cheap.
 */

/** Below this a run may still be a token or a word-ish identifier, so it is scanned. */
const MIN_BLOB = 512;

// The native regex loop outruns a charCodeAt loop over megabyte blobs.
const BASE64_TAIL = /[A-Za-z0-9+/]*/y;

export interface Segment {
  readonly start: number;
  readonly end: number;
}

function isBase64Char(code: number): boolean {
  return (
    (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || (code >= 48 && code <= 57) || code === 43 || code === 47
  );
}

/** The first probe index at or after `from`: probes sit at MIN_BLOB-1, 2*MIN_BLOB-1, … */
function nextProbe(from: number): number {
  return from + ((MIN_BLOB - 1 - (from % MIN_BLOB) + MIN_BLOB) % MIN_BLOB);
}

export function scannableSegments(text: string): Segment[] {
  const length = text.length;
  if (length < MIN_BLOB) return [{ start: 0, end: length }];
  const segments: Segment[] = [];
  let cursor = 0;
  // Every run of MIN_BLOB or more covers a probe index, so probing only those and growing
  // runs around hits finds them all while reading a small fraction of ordinary text.
  let probe = MIN_BLOB - 1;
  while (probe < length) {
    if (!isBase64Char(text.charCodeAt(probe))) {
      probe += MIN_BLOB;
      continue;
    }
    let start = probe;
    while (start > cursor && isBase64Char(text.charCodeAt(start - 1))) start--;
    BASE64_TAIL.lastIndex = probe;
    let end = probe + (BASE64_TAIL.exec(text)?.[0].length ?? 0);
    if (end - start >= MIN_BLOB) {
      if (start > cursor) segments.push({ start: cursor, end: start });
      while (end < length && text.charCodeAt(end) === 61) end++; // '=' padding
      cursor = end;
    }
    probe = nextProbe(end + 1);
  }
  if (cursor < length || segments.length === 0) segments.push({ start: cursor, end: length });
  return segments;
}
