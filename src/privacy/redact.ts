/**
 * Redaction: replaces each finding with [REDACTED:<detector>] in text, in JSON values
 * (string values only; keys are schema and stay), and in strings that hold JSON.
 */
import { writeJson } from '../canonical/json-value.js';
import { findAll, findAllInField } from './detectors.js';
import { isPlainObject, parseEmbeddedJson } from './json-walk.js';
import type { Finding, PrivacyOptions } from './types.js';

export { scanValue, type PathFinding } from './scan.js';

/** Findings per detector name. */
export type RedactionCounts = Record<string, number>;

export interface RedactedText {
  text: string;
  counts: RedactionCounts;
}

export interface RedactedValue<T> {
  value: T;
  counts: RedactionCounts;
}

export function redactionMarker(detector: string): string {
  return `[REDACTED:${detector}]`;
}

/** `findings` must be sorted and non-overlapping, as findAll returns them. */
function applyFindings(text: string, findings: readonly Finding[], counts: RedactionCounts): string {
  let out = '';
  let cursor = 0;
  for (const f of findings) {
    out += text.slice(cursor, f.start) + redactionMarker(f.detector);
    cursor = f.end;
    counts[f.detector] = (counts[f.detector] ?? 0) + 1;
  }
  return out + text.slice(cursor);
}

function addCounts(into: RedactionCounts, from: RedactionCounts): void {
  for (const [detector, n] of Object.entries(from)) into[detector] = (into[detector] ?? 0) + n;
}

const isEmpty = (counts: RedactionCounts): boolean => Object.keys(counts).length === 0;

/** A string inside a JSON value; `key` is its property name when it has one. */
function redactString(text: string, key: string | undefined, options: PrivacyOptions, counts: RedactionCounts): string {
  const findings = key === undefined ? findAll(text, options.kinds, options.rules) : findAllInField(key, text, options.kinds, options.rules);
  if (findings.length === 0) return text;
  // Redacting embedded JSON structurally keeps it parseable; only when that finds nothing
  // (the hit lies in a key, say) fall back to text, so a finding is never dropped.
  const embedded = parseEmbeddedJson(text);
  if (embedded !== undefined) {
    const inner: RedactionCounts = {};
    const redacted = redactNode(embedded, undefined, options, inner);
    if (!isEmpty(inner)) {
      addCounts(counts, inner);
      return writeJson(redacted);
    }
  }
  return applyFindings(text, findings, counts);
}

// Copy-on-write: containers are copied only when something inside changed.
function redactNode(node: unknown, key: string | undefined, options: PrivacyOptions, counts: RedactionCounts): unknown {
  if (typeof node === 'string') return redactString(node, key, options, counts);
  if (Array.isArray(node)) {
    let copy: unknown[] | undefined;
    node.forEach((item: unknown, i) => {
      const redacted = redactNode(item, undefined, options, counts);
      if (redacted !== item) (copy ??= [...node])[i] = redacted;
    });
    return copy ?? node;
  }
  if (isPlainObject(node)) {
    let copy: Record<string, unknown> | undefined;
    for (const [k, v] of Object.entries(node)) {
      const redacted = redactNode(v, k, options, counts);
      if (redacted !== v) (copy ??= { ...node })[k] = redacted;
    }
    return copy ?? node;
  }
  return node;
}

export function redactText(text: string, options: PrivacyOptions): RedactedText {
  const counts: RedactionCounts = {};
  return { text: applyFindings(text, findAll(text, options.kinds, options.rules), counts), counts };
}

/**
 * Redacts every string value in a JSON value (object keys are left as they are). Strings
 * holding JSON are redacted structurally, so tool-call arguments stay valid JSON.
 * Unchanged subtrees are shared with the input rather than copied: do not mutate the result
 * in place expecting the input to stay intact.
 */
export function redactValue<T>(value: T, options: PrivacyOptions): RedactedValue<T> {
  const counts: RedactionCounts = {};
  return { value: redactNode(value, undefined, options, counts) as T, counts };
}

/**
 * For a string that holds JSON (OpenAI `arguments`): parse, redact values, re-stringify
 * (compact) when something was redacted; text redaction when it does not parse.
 */
export function redactJsonString(text: string, options: PrivacyOptions): RedactedText {
  const counts: RedactionCounts = {};
  return { text: redactString(text, undefined, options, counts), counts };
}
