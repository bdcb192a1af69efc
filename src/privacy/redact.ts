/**
 * Redaction: replaces each finding with [REDACTED:<detector>] in text, and in JSON values:
 * every string and object key, decoded, at any depth, JSON held in strings included.
 */
import { findAll } from './detectors.js';
import { applyFindings, walkValue, type RedactionCounts } from './walk.js';
import type { PrivacyOptions } from './types.js';
import { addCount } from '../own.js';

export { scanValue, type PathFinding } from './scan.js';
export { redactionMarker, type RedactionCounts } from './walk.js';

export interface RedactedText {
  text: string;
  counts: RedactionCounts;
}

export interface RedactedValue<T> {
  value: T;
  counts: RedactionCounts;
}

/** Plain text, judged as it stands (no JSON decoding). */
export function redactText(text: string, options: PrivacyOptions): RedactedText {
  const counts: RedactionCounts = {};
  const findings = findAll(text, options.kinds, options.rules);
  for (const f of findings) addCount(counts, f.detector);
  return { text: applyFindings(text, findings), counts };
}

/**
 * Redacts every string value and object key in a JSON value. Strings holding JSON are
 * redacted structurally and only the redacted strings re-encoded, so tool-call arguments
 * stay valid JSON with every number's recorded text. Unchanged subtrees are shared with the
 * input rather than copied: do not mutate the result in place expecting the input to stay intact.
 */
export function redactValue<T>(value: T, options: PrivacyOptions): RedactedValue<T> {
  const counts: RedactionCounts = {};
  return { value: walkValue(value, options, counts, undefined, null) as T, counts };
}

/**
 * For a string that holds JSON (OpenAI `arguments`): its decoded strings redacted in place,
 * every other byte kept; text redaction when it does not parse.
 */
export function redactJsonString(text: string, options: PrivacyOptions): RedactedText {
  const counts: RedactionCounts = {};
  return { text: walkValue(text, options, counts, undefined, null) as string, counts };
}
