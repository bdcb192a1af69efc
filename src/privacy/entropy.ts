/** Heuristics that tell a random-looking credential from identifiers, placeholders and words. */

export function shannonEntropy(value: string): number {
  const counts = new Map<number, number>();
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    counts.set(code, (counts.get(code) ?? 0) + 1);
  }
  let bits = 0;
  for (const n of counts.values()) {
    const p = n / value.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}

// Values people write instead of a real secret: templates, env references, masks, docs examples.
const PLACEHOLDER =
  /^(?:<[^>]*>|\$\{?[\w.]+\}?|%\w+%|\{\{.*\}\}|(.)\1*|\[REDACTED[^\]]*\])$|your|example|changeme|placeholder|redacted|dummy|xxxx|\*\*\*/i;
// Code that refers to a secret rather than containing it: obj.attr chains, CONSTANT_NAMES, snake_names.
const IDENTIFIER_SHAPED = /^(?:[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|[a-z][a-z0-9]*(?:_[a-z0-9]+)+)$/;
const PATH_OR_URL = /^(?:\.{0,2}\/|~\/)|:\/\//;

/**
 * True when `value` plausibly is a generated credential: long enough, no whitespace,
 * not a placeholder, identifier or path, mixes character classes, and has high entropy.
 */
export function looksRandom(value: string, minLength: number): boolean {
  if (value.length < minLength || /\s/.test(value)) return false;
  if (PLACEHOLDER.test(value) || IDENTIFIER_SHAPED.test(value) || PATH_OR_URL.test(value)) return false;
  let lower = 0;
  let upper = 0;
  let digit = 0;
  let symbol = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c >= 97 && c <= 122) lower++;
    else if (c >= 65 && c <= 90) upper++;
    else if (c >= 48 && c <= 57) digit++;
    else if (c !== 46 && c !== 95 && c !== 45) symbol++; // . _ - are identifier glue, not randomness
  }
  if (lower + upper === 0) return false;
  if (digit === 0 && symbol === 0) {
    // Letters only: camelCase and SHOUTING words have a lopsided case mix, random strings do not.
    const upperShare = upper / (lower + upper);
    if (value.length < 16 || upperShare < 0.2 || upperShare > 0.8) return false;
  }
  // log2(length) bounds the entropy of short strings, so the bar scales for them.
  return shannonEntropy(value) >= Math.min(3.0, 0.8 * Math.log2(value.length));
}
