/**
 * The one walk behind redaction and `scan`. Every string of a JSON value is judged on its
 * decoded text, object keys included, at any depth; a string that holds JSON (a structured
 * output, tool-call arguments, JSON inside those) is walked in turn, so an escape before a
 * secret (`\n`, `\"`, `\u0020`, one inside the secret) hides nothing. Redaction rewrites
 * only the strings that hold findings: the rest of embedded JSON keeps its recorded bytes.
 */
import { findAll, findAllInField } from './detectors.js';
import { embeddedJson, looksLikeContainer, spliceTokens, type StringToken } from './json-text.js';
import { childPath, isPlainObject } from './json-walk.js';
import type { Finding, PrivacyOptions } from './types.js';
import { addCount, setOwn } from '../own.js';

/** Findings per detector name. */
export type RedactionCounts = Record<string, number>;

/** Receives each finding with the path of the string it sits in (start/end are offsets in that decoded string). */
export type FindingSink = (finding: Finding, path: string) => void;

/**
 * JSON in a string in a string … is walked this deep; deeper text is judged as it stands.
 * Each level at least doubles the backslashes, so real data never comes near.
 */
const MAX_EMBEDDING = 16;

interface Walk {
  readonly options: PrivacyOptions;
  readonly counts: RedactionCounts;
  /** Findings so far; tells a caller whether a sub-walk found anything. */
  found: number;
  readonly sink: FindingSink | undefined;
}

export function redactionMarker(detector: string): string {
  return `[REDACTED:${detector}]`;
}

/** `findings` must be sorted and non-overlapping, as findAll returns them. */
export function applyFindings(text: string, findings: readonly Finding[]): string {
  let out = '';
  let cursor = 0;
  for (const f of findings) {
    out += text.slice(cursor, f.start) + redactionMarker(f.detector);
    cursor = f.end;
  }
  return out + text.slice(cursor);
}

function record(walk: Walk, findings: readonly Finding[], path: string | null): void {
  for (const f of findings) {
    addCount(walk.counts, f.detector);
    walk.found++;
    walk.sink?.(f, path ?? '');
  }
}

function detect(text: string, key: string | undefined, options: PrivacyOptions): Finding[] {
  return key === undefined ? findAll(text, options.kinds, options.rules) : findAllInField(key, text, options.kinds, options.rules);
}

// Object keys repeat (role, content, tool_calls, …) and almost never hold anything: remember
// the answer per option set. Bounded, so a stream of distinct keys cannot grow it for ever.
const KEY_CACHE_LIMIT = 4096;
const keyCaches = new WeakMap<PrivacyOptions, Map<string, readonly Finding[]>>();

function keyFindings(key: string, options: PrivacyOptions): readonly Finding[] {
  let cache = keyCaches.get(options);
  if (cache === undefined) keyCaches.set(options, (cache = new Map()));
  let findings = cache.get(key);
  if (findings === undefined) {
    findings = findAll(key, options.kinds, options.rules);
    if (cache.size >= KEY_CACHE_LIMIT) cache.clear();
    cache.set(key, findings);
  }
  return findings;
}

/** A string value; `key` is its property name when it has one. Returns the redacted text. */
function walkString(text: string, key: string | undefined, path: string | null, depth: number, walk: Walk): string {
  if (depth < MAX_EMBEDDING && looksLikeContainer(text)) {
    const redacted = walkJsonCandidate(text, key, path, depth, walk);
    if (redacted !== undefined) return redacted;
  }
  const findings = detectText(text, key, walk.options);
  if (findings.length === 0) return text;
  record(walk, findings, path);
  return applyFindings(text, findings);
}

/** `\uXXXX` can spell any character of a secret, `\/` one of an AWS secret's. */
const SPELLING_ESCAPE = /\\[u/]/;
const LENIENT_ESCAPE = /\\(?:u([0-9A-Fa-f]{4})|(["\\/bfnrt]))/g;

/**
 * Text that is not JSON but holds JSON escapes (truncated arguments, code, logs): judged as
 * it stands, and, when an escape could spell part of a secret, decoded as well, with those
 * findings mapped back onto the escaped text. Only then: decoding `C:\\bob` would hide a name.
 */
function detectText(text: string, key: string | undefined, options: PrivacyOptions): Finding[] {
  const findings = detect(text, key, options);
  if (!SPELLING_ESCAPE.test(text)) return findings;
  const decodedFindings = detect(text.replace(LENIENT_ESCAPE, unescapeMatch), key, options);
  if (decodedFindings.length === 0) return findings;
  // Rare from here on: where each decoded character starts in the escaped text.
  const starts: number[] = [];
  let cursor = 0;
  for (const match of text.matchAll(LENIENT_ESCAPE)) {
    for (let i = cursor; i <= match.index; i++) starts.push(i);
    cursor = match.index + match[0].length;
  }
  for (let i = cursor; i <= text.length; i++) starts.push(i);
  const extra = decodedFindings
    .map((f) => ({ ...f, start: starts[f.start], end: starts[f.end] }))
    .filter((f) => !findings.some((g) => g.start < f.end && f.start < g.end));
  return extra.length === 0 ? findings : [...findings, ...extra].sort((x, y) => x.start - y.start);
}

function unescapeMatch(_: string, hex: string | undefined, short: string | undefined): string {
  return hex !== undefined ? String.fromCharCode(parseInt(hex, 16)) : UNESCAPED[short!];
}

// JSON's two-character escapes and what they stand for.
const SHORT_ESCAPE = /\\(["\\/bfnrt])/g;
const UNESCAPED: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
const FIELD_KEY_END = /(?:pass(?:wd|word|phrase)?|pwd|secret|token|credentials?|key)$/i;
const LONGEST_FIELD_KEY_END = 'credentials'.length;

/**
 * Whether a member's name may let a field detector judge its value alone ({"api_key": "…"}).
 * A loop over the colons: one regex over the whole text costs several times more.
 */
function hasFieldMember(view: string): boolean {
  for (let colon = view.indexOf(':'); colon !== -1; colon = view.indexOf(':', colon + 1)) {
    let quote = colon - 1;
    while (quote > 0 && (view[quote] === ' ' || view[quote] === '\n' || view[quote] === '\t' || view[quote] === '\r')) quote--;
    if (view[quote] === '"' && FIELD_KEY_END.test(view.slice(Math.max(0, quote - LONGEST_FIELD_KEY_END), quote))) return true;
  }
  return false;
}

/**
 * Text shaped like a JSON container. Decoding each string costs more than judging the whole
 * text once, and nearly every such text holds nothing: so unless it has `\uXXXX` escapes
 * (which may spell any character, inside a secret too), its strings are first decoded in
 * place and the whole judged at once. Each string's decoded text sits in that view between
 * quotes, which bound a token as a string's ends do, so a view without findings and without
 * a member a field detector could flag means no string has any. Undefined: judge it as text.
 */
function walkJsonCandidate(text: string, key: string | undefined, path: string | null, depth: number, walk: Walk): string | undefined {
  const escaped = text.includes('\\');
  if (!escaped || !text.includes('\\u')) {
    const view = escaped ? text.replace(SHORT_ESCAPE, (_, c: string) => UNESCAPED[c]) : text;
    if (detect(view, key, walk.options).length === 0 && !hasFieldMember(view)) return text;
  }
  const before = walk.found;
  const redacted = walkJsonText(text, path, depth, walk);
  // Not JSON, or a finding the structure does not show (one spanning two strings): judged as text.
  return redacted !== undefined && walk.found > before ? redacted : undefined;
}

/** JSON text: each decoded key and string judged on its own; undefined when the text is not JSON. */
function walkJsonText(text: string, path: string | null, depth: number, walk: Walk): string | undefined {
  const json = embeddedJson(text, path, (key) => applyFindings(key, keyFindings(key, walk.options)));
  if (json === undefined) return undefined;
  let replacements: { token: StringToken; text: string }[] | undefined;
  for (const token of json.tokens) {
    let redacted: string;
    if (token.isKey) {
      const findings = keyFindings(token.text, walk.options);
      if (findings.length === 0) continue;
      record(walk, findings, token.path);
      redacted = applyFindings(token.text, findings);
    } else {
      redacted = walkString(token.text, token.key, token.path, depth + 1, walk);
    }
    if (redacted !== token.text) (replacements ??= []).push({ token, text: redacted });
  }
  return replacements === undefined ? text : spliceTokens(json, replacements);
}

type Container = unknown[] | Record<string, unknown>;

interface Frame {
  readonly node: Container;
  /** Object keys in order; null for an array. */
  readonly keys: readonly string[] | null;
  readonly path: string | null;
  /** Next child to visit. */
  next: number;
  /** New values by child index, when any changed. */
  changed: Map<number, unknown> | undefined;
  /** New names of keys that held findings, by child index. */
  renamed: Map<number, string> | undefined;
}

function isContainer(value: unknown): value is Container {
  return Array.isArray(value) || isPlainObject(value);
}

function openFrame(node: Container, path: string | null): Frame {
  return { node, keys: Array.isArray(node) ? null : Object.keys(node), path, next: 0, changed: undefined, renamed: undefined };
}

/** The frame's container, copied with its changes when it has any (the input is never mutated). */
function closeFrame(frame: Frame): unknown {
  if (frame.changed === undefined && frame.renamed === undefined) return frame.node;
  if (frame.keys === null) {
    const copy = [...(frame.node as unknown[])];
    for (const [i, value] of frame.changed!) copy[i] = value;
    return copy;
  }
  const source = frame.node as Record<string, unknown>;
  const copy: Record<string, unknown> = Object.getPrototypeOf(source) === null ? Object.create(null) : {};
  frame.keys.forEach((key, i) => {
    let name = frame.renamed?.get(i) ?? key;
    // Two redacted keys may read alike: number them rather than lose a member.
    for (let n = 2; Object.prototype.hasOwnProperty.call(copy, name); n++) name = `${frame.renamed?.get(i) ?? key} #${n}`;
    setOwn(copy, name, frame.changed?.has(i) ? frame.changed.get(i) : source[key]);
  });
  return copy;
}

/**
 * Walks `value` (iteratively: nesting depth costs no stack), recording findings in `counts`
 * and `sink`; returns the redacted value, sharing untouched subtrees with the input.
 * `rootPath` null skips building paths (redaction needs none).
 */
export function walkValue(value: unknown, options: PrivacyOptions, counts: RedactionCounts, sink: FindingSink | undefined, rootPath: string | null): unknown {
  const walk: Walk = { options, counts, found: 0, sink };
  if (typeof value === 'string') return walkString(value, undefined, rootPath, 0, walk);
  if (!isContainer(value)) return value;
  const stack: Frame[] = [openFrame(value, rootPath)];
  for (;;) {
    const frame = stack[stack.length - 1];
    const length = frame.keys === null ? (frame.node as unknown[]).length : frame.keys.length;
    if (frame.next === length) {
      stack.pop();
      const done = closeFrame(frame);
      const parent = stack[stack.length - 1];
      if (parent === undefined) return done;
      if (done !== frame.node) (parent.changed ??= new Map()).set(parent.next - 1, done);
      continue;
    }
    const i = frame.next++;
    const key = frame.keys === null ? undefined : frame.keys[i];
    const child = key === undefined ? (frame.node as unknown[])[i] : (frame.node as Record<string, unknown>)[key];
    let name: string | number = key ?? i;
    if (key !== undefined) {
      const findings = keyFindings(key, options);
      if (findings.length > 0) {
        // Paths show keys redacted: a report must not print a secret key.
        name = applyFindings(key, findings);
        (frame.renamed ??= new Map()).set(i, name);
        record(walk, findings, frame.path === null ? null : `${childPath(frame.path, name)} (key)`);
      }
    }
    const path = frame.path === null ? null : childPath(frame.path, name);
    if (typeof child === 'string') {
      const redacted = walkString(child, key, path, 0, walk);
      if (redacted !== child) (frame.changed ??= new Map()).set(i, redacted);
    } else if (isContainer(child)) {
      stack.push(openFrame(child, path));
    }
  }
}
