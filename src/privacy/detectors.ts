/**
 * The detector registry and the entry point that runs it: findAll reports non-overlapping,
 * masked findings for the chosen kinds plus any custom rules.
 */
import { compileRulePattern, loadRulesFile as loadRulesFileWith, parseRules as parseRulesWith } from './custom-rules.js';
import { collectMatches, type Candidate, type Detector } from './detector.js';
import { maskPreview } from './mask.js';
import { PII_DETECTORS } from './pii-detectors.js';
import { FIELD_DETECTORS, SECRET_DETECTORS } from './secret-detectors.js';
import { scannableSegments } from './segments.js';
import type { CustomRule, Finding, Kind } from './types.js';

export type { CustomRule, Finding, Kind, PrivacyOptions } from './types.js';
export { KINDS } from './types.js';
export { RulesFileError } from './custom-rules.js';

export const DETECTORS: readonly Detector[] = [...SECRET_DETECTORS, ...PII_DETECTORS];
export const DETECTOR_NAMES: ReadonlySet<string> = new Set(DETECTORS.map((d) => d.name));

/** Custom rules outrank every built-in detector: the user wrote them for their own data. */
const CUSTOM_RULE_RANK = 100;
/** No built-in detector matches fewer characters (a@b.co); shorter strings skip all work. */
const MIN_BUILTIN_MATCH = 6;

/** Reads a rules file; rule names may not reuse built-in detector names. */
export function loadRulesFile(path: string): CustomRule[] {
  return loadRulesFileWith(path, DETECTOR_NAMES);
}

/** Validates already-parsed rules JSON (e.g. from a config object); `source` names it in errors. */
export function parseRules(json: unknown, source: string): CustomRule[] {
  return parseRulesWith(json, source, DETECTOR_NAMES);
}

// Callers pass the same Set for every string, so cache by identity; the string key catches equal Sets.
const activeBySet = new WeakMap<ReadonlySet<Kind>, readonly Detector[]>();
const activeByKey = new Map<string, readonly Detector[]>();
function activeDetectors(kinds: ReadonlySet<Kind>): readonly Detector[] {
  let active = activeBySet.get(kinds);
  if (active !== undefined) return active;
  const key = [...kinds].sort().join(',');
  active = activeByKey.get(key);
  if (active === undefined) {
    active = DETECTORS.filter((d) => kinds.has(d.kind));
    activeByKey.set(key, active);
  }
  activeBySet.set(kinds, active);
  return active;
}

// Rules built in code may lack the g/d flags the match loop relies on; compile once per rule.
const ruleRegexes = new WeakMap<RegExp, RegExp>();
function ruleRegex(pattern: RegExp): RegExp {
  if (pattern.global && pattern.hasIndices && !pattern.sticky) return pattern;
  let compiled = ruleRegexes.get(pattern);
  if (compiled === undefined) {
    compiled = compileRulePattern(pattern.source, pattern.flags.replace(/[gdy]/g, ''));
    ruleRegexes.set(pattern, compiled);
  }
  return compiled;
}

function collectRule(rule: CustomRule, text: string, offset: number, out: Candidate[]): void {
  const pattern = ruleRegex(rule.pattern);
  const valueGroups = /\(\?<value>/.test(pattern.source) ? ['value'] : undefined;
  collectMatches({ name: rule.name, kind: rule.kind ?? 'secret', rank: CUSTOM_RULE_RANK, pattern, valueGroups }, text, offset, out);
}

/** Keeps the best candidates that do not overlap: higher rank first, then the longer span. Sorted by start. */
function resolveOverlaps(candidates: Candidate[]): Candidate[] {
  if (candidates.length <= 1) return candidates;
  const byPriority = [...candidates].sort(
    (a, b) => b.rank - a.rank || b.end - b.start - (a.end - a.start) || a.start - b.start,
  );
  const kept: Candidate[] = [];
  for (const c of byPriority) {
    let lo = 0;
    let hi = kept.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (kept[mid].start < c.start) lo = mid + 1;
      else hi = mid;
    }
    const before = kept[lo - 1];
    const after = kept[lo];
    if ((before !== undefined && before.end > c.start) || (after !== undefined && after.start < c.end)) continue;
    kept.splice(lo, 0, c);
  }
  return kept;
}

function toFinding(c: Candidate, text: string): Finding {
  return { detector: c.detector, kind: c.kind, start: c.start, end: c.end, preview: maskPreview(text.slice(c.start, c.end)) };
}

function collectAll(text: string, kinds: ReadonlySet<Kind>, rules: readonly CustomRule[], out: Candidate[]): void {
  if (text.length < MIN_BUILTIN_MATCH && rules.length === 0) return;
  const detectors = activeDetectors(kinds);
  for (const segment of scannableSegments(text)) {
    const slice = segment.start === 0 && segment.end === text.length ? text : text.slice(segment.start, segment.end);
    for (const detector of detectors) {
      if (detector.mayMatch(slice)) collectMatches(detector, slice, segment.start, out);
    }
    for (const rule of rules) collectRule(rule, slice, segment.start, out);
  }
}

/** All sensitive spans in `text`, non-overlapping (more specific detector first, then longer match), sorted by start. */
export function findAll(text: string, kinds: ReadonlySet<Kind>, extraRules: readonly CustomRule[] = []): Finding[] {
  const candidates: Candidate[] = [];
  collectAll(text, kinds, extraRules, candidates);
  return resolveOverlaps(candidates).map((c) => toFinding(c, text));
}

/**
 * Like findAll, for a string stored under an object key (parsed JSON), where the key is
 * the only context: {"api_key": "…"} flags the whole value as generic_secret.
 */
export function findAllInField(key: string, text: string, kinds: ReadonlySet<Kind>, extraRules: readonly CustomRule[] = []): Finding[] {
  const candidates: Candidate[] = [];
  collectAll(text, kinds, extraRules, candidates);
  if (kinds.has('secret')) {
    for (const field of FIELD_DETECTORS) {
      const candidate = field.findInField(key, text);
      if (candidate !== undefined) candidates.push(candidate);
    }
  }
  return resolveOverlaps(candidates).map((c) => toFinding(c, text));
}
