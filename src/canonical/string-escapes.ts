/**
 * A string token's escapes rewritten byte by byte, never through a JavaScript string: a
 * recorded text may be longer than a string can be (about 512 MiB), and its hash must still
 * come out as orjson's. The token is taken to be validated already (`checkTextRules`): its
 * raw bytes are valid UTF-8 without control characters, and every escape is well formed.
 */
import type { ByteSink } from './byte-sink.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const HEX = '0123456789abcdef';

/** orjson's two-character escapes, by the code they stand for. */
const SHORT_ESCAPE = new Map<number, number>([
  [0x08, 0x62],
  [0x09, 0x74],
  [0x0a, 0x6e],
  [0x0c, 0x66],
  [0x0d, 0x72],
  [QUOTE, QUOTE],
  [BACKSLASH, BACKSLASH],
]);

/** What each one-letter escape stands for. */
const ESCAPED_CODE = new Map<number, number>([
  [0x22, 0x22],
  [0x5c, 0x5c],
  [0x2f, 0x2f],
  [0x62, 0x08],
  [0x66, 0x0c],
  [0x6e, 0x0a],
  [0x72, 0x0d],
  [0x74, 0x09],
]);

function hexDigit(c: number): number {
  return c <= 0x39 ? c - 0x30 : (c | 0x20) - 0x57;
}

function hex4(b: Uint8Array, at: number): number {
  return (hexDigit(b[at]) << 12) | (hexDigit(b[at + 1]) << 8) | (hexDigit(b[at + 2]) << 4) | hexDigit(b[at + 3]);
}

function writeUtf8(code: number, out: ByteSink): void {
  if (code < 0x80) {
    out.byte(code);
  } else if (code < 0x800) {
    out.byte(0xc0 | (code >> 6));
    out.byte(0x80 | (code & 0x3f));
  } else if (code < 0x10000) {
    out.byte(0xe0 | (code >> 12));
    out.byte(0x80 | ((code >> 6) & 0x3f));
    out.byte(0x80 | (code & 0x3f));
  } else {
    out.byte(0xf0 | (code >> 18));
    out.byte(0x80 | ((code >> 12) & 0x3f));
    out.byte(0x80 | ((code >> 6) & 0x3f));
    out.byte(0x80 | (code & 0x3f));
  }
}

/** `\u` and four lowercase hex digits, as JSON.stringify and orjson write what has no short form. */
function writeUnicodeEscape(code: number, out: ByteSink): void {
  out.byte(BACKSLASH);
  out.byte(0x75);
  for (let shift = 12; shift >= 0; shift -= 4) out.byte(HEX.charCodeAt((code >> shift) & 0xf));
}

function writeEscapedCode(code: number, out: ByteSink): void {
  const short = SHORT_ESCAPE.get(code);
  if (short !== undefined) {
    out.byte(BACKSLASH);
    out.byte(short);
  } else if (code < 0x20 || (code >= 0xd800 && code < 0xe000)) {
    // A lone surrogate never gets past the text rules; JSON.stringify would write it so.
    writeUnicodeEscape(code, out);
  } else {
    writeUtf8(code, out);
  }
}

/** The code point of the escape at `k` (a backslash) and the index past it. */
function readEscape(b: Uint8Array, k: number): [code: number, next: number] {
  const letter = b[k + 1];
  if (letter !== 0x75) return [ESCAPED_CODE.get(letter) ?? letter, k + 2];
  const code = hex4(b, k + 2);
  if (code >= 0xd800 && code < 0xdc00 && b[k + 6] === BACKSLASH && b[k + 7] === 0x75) {
    const low = hex4(b, k + 8);
    if (low >= 0xdc00 && low < 0xe000) return [0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00), k + 12];
  }
  return [code, k + 6];
}

/**
 * Writes the string token at [start, end) (quotes included) as orjson writes its text: escapes
 * decoded, then only `"`, `\` and control characters escaped again, with orjson's forms.
 */
export function writeCanonicalString(b: Buffer, start: number, end: number, out: ByteSink): void {
  out.byte(QUOTE);
  rewrite(b, start, end, out, writeEscapedCode);
  out.byte(QUOTE);
}

/** The UTF-8 bytes of the string token's text (what orjson sorts keys by), without quotes or escapes. */
export function decodedStringBytes(b: Buffer, start: number, end: number, out: ByteSink): void {
  rewrite(b, start, end, out, (code) => writeUtf8(code >= 0xd800 && code < 0xe000 ? 0xfffd : code, out));
}

function rewrite(b: Buffer, start: number, end: number, out: ByteSink, writeCode: (code: number, out: ByteSink) => void): void {
  const last = end - 1;
  let run = start + 1;
  for (let k = b.indexOf(BACKSLASH, run); k !== -1 && k < last; k = b.indexOf(BACKSLASH, run)) {
    if (k > run) out.copy(b, run, k);
    const [code, next] = readEscape(b, k);
    writeCode(code, out);
    run = next;
  }
  if (last > run) out.copy(b, run, last);
}
