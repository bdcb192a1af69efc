/**
 * Detectors keyed on a name: `password=…`, `"api_key": "…"`, `SecretAccessKey: …`.
 * The same key vocabulary serves raw text (key and value side by side) and parsed JSON
 * (key and value arrive separately), so both paths agree on what counts as a secret.
 */
import type { Candidate, Detector } from './detector.js';
import type { Kind } from './types.js';

export interface AssignmentSpec {
  readonly name: string;
  readonly kind: Kind;
  readonly rank: number;
  /** Key-name endings as word lists: ['api','key'] matches api_key, api-key, apiKey, API_KEY, dbApiKey. */
  readonly keys: readonly (readonly string[])[];
  readonly acceptValue: (value: string, key: string) => boolean;
}

export interface AssignmentDetector {
  readonly detector: Detector;
  /** For parsed JSON: a finding covering all of `value` when `key` names a secret and the value qualifies. */
  readonly findInField: (key: string, value: string) => Candidate | undefined;
}

function keyAlternation(keys: readonly (readonly string[])[]): string {
  // Longest first, so `passwd` is tried before `pass`.
  return keys
    .map((words) => words.join('[_-]?'))
    .sort((a, b) => b.length - a.length)
    .join('|');
}

const isLower = (c: string | undefined): boolean => c !== undefined && c >= 'a' && c <= 'z';
const isUpper = (c: string | undefined): boolean => c !== undefined && c >= 'A' && c <= 'Z';
const isAlnum = (c: string | undefined): boolean => isLower(c) || isUpper(c) || (c !== undefined && c >= '0' && c <= '9');

/**
 * The keyword must start a word: after a non-alphanumeric (DB_PASSWORD, x-api-key) or at a
 * camelCase hump (dbPassword). This rejects `bypass=` without a costly regex lookbehind.
 */
function startsWord(before: string | undefined, first: string | undefined): boolean {
  return !isAlnum(before) || (isLower(before) && isUpper(first));
}

/**
 * In text that still holds JSON escapes (not valid JSON, so not decoded) the letter before a
 * key may close an escape: `\npassword=…`, `\u0020token=…`. That starts a word too.
 */
function followsEscape(text: string, index: number): boolean {
  return text[index - 2] === '\\' || (text[index - 6] === '\\' && text[index - 5] === 'u' && /^[0-9A-Fa-f]{4}$/.test(text.slice(index - 4, index)));
}

/** Longer values are not credentials people paste; the bound also keeps scans linear on `a=a=a=…`. */
const MAX_VALUE = 512;
/** A bare value stops where values end in code, env files, and query strings. */
const BARE = `[^\\s"'\`\\\\,;&<>()[\\]{}]`;

export function makeAssignmentDetector(spec: AssignmentSpec): AssignmentDetector {
  const keys = keyAlternation(spec.keys);
  // The match starts at the operator (: = := =>, not ==) and looks back for the key: the
  // engine then only stops at ':' and '=', several times faster than trying each keyword at
  // every position. Then an optional closing quote (maybe JSON-escaped) and a quoted or bare value.
  const pattern = new RegExp(
    `[:=](?<=(${keys})(?:\\\\?["'])?[ \\t]*[:=])(?:(?<=:)=?|(?<==)(?:>|(?!=)))[ \\t]*` +
      `(?:\\\\?"([^"\\\\\\s]{1,${MAX_VALUE}})\\\\?"|'([^'\\\\\\s]{1,${MAX_VALUE}})'|(${BARE}{1,${MAX_VALUE}})(?!${BARE}))`,
    'gid',
  );
  const keyAtEnd = new RegExp(`(?:${keys})$`, 'i');

  const detector: Detector = {
    name: spec.name,
    kind: spec.kind,
    rank: spec.rank,
    mayMatch: () => true,
    pattern,
    valueGroups: [2, 3, 4],
    accept: (value, match, text) => {
      const keyStart = match.indices?.[1]?.[0] ?? match.index;
      return (startsWord(text[keyStart - 1], match[1][0]) || followsEscape(text, keyStart)) && spec.acceptValue(value, match[1]);
    },
  };

  const findInField = (key: string, value: string): Candidate | undefined => {
    const keyMatch = keyAtEnd.exec(key);
    if (keyMatch === null || !startsWord(key[keyMatch.index - 1], keyMatch[0][0])) return undefined;
    if (!spec.acceptValue(value, keyMatch[0])) return undefined;
    return { detector: spec.name, kind: spec.kind, rank: spec.rank, start: 0, end: value.length };
  };

  return { detector, findInField };
}
