/**
 * JSON held inside a string: Synalinks' structured outputs, OpenAI `arguments`, tool results
 * written as text. Its strings are found with the canonical scanner, which keeps every other
 * byte as recorded, so a redacted text can be spliced back together without re-serializing
 * anything else (`JSON.stringify(JSON.parse(…))` would rewrite numbers and escapes).
 */
import { decodeString, isWhitespace, skipString, skipValue, skipWhitespace } from '../canonical/scan.js';
import { childPath } from './json-walk.js';

/** A string token of the JSON text: a key or a string value. */
export interface StringToken {
  /** Byte range of the token in the text's UTF-8, quotes included. */
  readonly start: number;
  readonly end: number;
  /** The decoded text. */
  readonly text: string;
  readonly isKey: boolean;
  /** For a value directly under an object member: the member's (decoded) name. */
  readonly key: string | undefined;
  /** Where the token sits below `basePath` (a key's ends in ` (key)`), or null when paths were not asked for. */
  readonly path: string | null;
}

export interface EmbeddedJson {
  readonly bytes: Buffer;
  readonly tokens: readonly StringToken[];
}

const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;

/** Cheap test before any parsing: only strings shaped like a container can hold JSON worth walking. */
export function looksLikeContainer(text: string): boolean {
  let i = 0;
  while (i < text.length && isWhitespace(text.charCodeAt(i))) i++;
  const first = text.charCodeAt(i);
  if (first !== OPEN_OBJECT && first !== OPEN_ARRAY) return false;
  let j = text.length - 1;
  while (j > i && isWhitespace(text.charCodeAt(j))) j--;
  const last = text.charCodeAt(j);
  return (first === OPEN_OBJECT && last === 0x7d) || (first === OPEN_ARRAY && last === 0x5d);
}

interface Frame {
  readonly path: string | null;
  readonly isObject: boolean;
  index: number;
  key: string | undefined;
  pathKey: string;
}

function valuePath(top: Frame | undefined, basePath: string | null): string | null {
  if (top === undefined) return basePath;
  if (top.path === null) return null;
  return top.isObject ? childPath(top.path, top.pathKey) : childPath(top.path, top.index);
}

/**
 * The string tokens of `text` when it is one JSON object or array (surrounding whitespace
 * allowed), else undefined. Iterative, so nesting depth costs no stack.
 */
export function embeddedJson(text: string, basePath: string | null, pathKey: (key: string) => string = (key) => key): EmbeddedJson | undefined {
  if (!looksLikeContainer(text)) return undefined;
  // A lone surrogate has no UTF-8 form: the byte round trip would alter text nobody redacted.
  if (!(text as string & { isWellFormed(): boolean }).isWellFormed()) return undefined;
  const b = Buffer.from(text, 'utf8');
  const end = b.length;
  const first = skipWhitespace(b, 0, end);
  try {
    if (skipWhitespace(b, skipValue(b, first, end), end) !== end) return undefined;
    const tokens: StringToken[] = [];
    const frames: Frame[] = [];
    let expectKey = false;
    for (let p = first; p < end; ) {
      const c = b[p];
      const top = frames[frames.length - 1];
      if (c === 0x22) {
        const tokenEnd = skipString(b, p, end);
        const decoded = decodeString(b, p, tokenEnd);
        if (expectKey && top !== undefined) {
          // Paths name keys as `pathKey` shows them: a report must not print a secret key.
          top.key = decoded;
          top.pathKey = top.path === null ? '' : pathKey(decoded);
          const path = top.path === null ? null : `${childPath(top.path, top.pathKey)} (key)`;
          tokens.push({ start: p, end: tokenEnd, text: decoded, isKey: true, key: undefined, path });
          expectKey = false;
        } else {
          const key = top?.isObject ? top.key : undefined;
          tokens.push({ start: p, end: tokenEnd, text: decoded, isKey: false, key, path: valuePath(top, basePath) });
        }
        p = tokenEnd;
      } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
        frames.push({ path: valuePath(top, basePath), isObject: c === OPEN_OBJECT, index: 0, key: undefined, pathKey: '' });
        expectKey = c === OPEN_OBJECT;
        p++;
      } else if (c === 0x7d || c === 0x5d) {
        frames.pop();
        expectKey = false;
        p++;
      } else if (c === 0x2c) {
        if (top !== undefined) {
          top.index++;
          expectKey = top.isObject;
        }
        p++;
      } else if (c === 0x3a || isWhitespace(c)) {
        p++;
      } else {
        p = skipValue(b, p, end); // a number or a literal
      }
    }
    return { bytes: b, tokens };
  } catch {
    // Not JSON after all (or nested beyond what the validator walks): judged as plain text.
    return undefined;
  }
}

/**
 * The text with the given tokens replaced by the JSON encoding of their new text; every
 * other byte (numbers, whitespace, key order, other strings' escapes) stays as it was.
 */
export function spliceTokens(json: EmbeddedJson, replacements: readonly { token: StringToken; text: string }[]): string {
  const parts: Buffer[] = [];
  let cursor = 0;
  for (const { token, text } of replacements) {
    parts.push(json.bytes.subarray(cursor, token.start), Buffer.from(JSON.stringify(text), 'utf8'));
    cursor = token.end;
  }
  parts.push(json.bytes.subarray(cursor));
  return Buffer.concat(parts).toString('utf8');
}
