/** User-defined patterns from a JSON rules file: {"rules":[{"name","pattern"}]} or a bare array. */
import { readFileSync } from 'node:fs';
import type { CustomRule, Kind } from './types.js';

export class RulesFileError extends Error {
  override name = 'RulesFileError';
}

// The name ends up inside [REDACTED:<name>], so it must not break the marker or JSON.
const RULE_NAME = /^[A-Za-z0-9_.-]{1,64}$/;
// g and d are ours to add: g to find every match, d to locate a `value` group.
const USER_FLAGS = /^[imsuv]*$/;

const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error));

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Compiles a pattern the way rule files are compiled (global, with match indices). */
export function compileRulePattern(pattern: string, flags = ''): RegExp {
  return new RegExp(pattern, flags + 'gd');
}

/**
 * Validates parsed rule-file JSON. `source` names the file in errors.
 * `reservedNames` are built-in detector names a rule may not reuse (reports would be ambiguous).
 */
export function parseRules(json: unknown, source: string, reservedNames: ReadonlySet<string> = new Set()): CustomRule[] {
  const entries = Array.isArray(json) ? json : isRecord(json) ? json.rules : undefined;
  if (!Array.isArray(entries)) {
    throw new RulesFileError(`${source}: expected {"rules": [...]} or an array of {"name", "pattern"} objects`);
  }
  const seen = new Set<string>();
  return entries.map((entry: unknown, index): CustomRule => {
    const label = isRecord(entry) && typeof entry.name === 'string' ? `rule ${index + 1} ("${entry.name}")` : `rule ${index + 1}`;
    const fail = (problem: string): never => {
      throw new RulesFileError(`${source}: ${label}: ${problem}`);
    };
    if (!isRecord(entry)) return fail('must be an object with "name" and "pattern"');
    const { name, pattern, flags, kind } = entry;
    if (typeof name !== 'string' || !RULE_NAME.test(name)) return fail('"name" must be 1-64 characters of letters, digits, _ . -');
    if (reservedNames.has(name)) return fail(`"name" clashes with the built-in detector "${name}"`);
    if (seen.has(name)) return fail(`duplicate name "${name}"`);
    seen.add(name);
    if (typeof pattern !== 'string' || pattern === '') return fail('"pattern" must be a non-empty string');
    if (flags !== undefined && (typeof flags !== 'string' || !USER_FLAGS.test(flags))) return fail('"flags" may only contain i, m, s, u, v');
    if (kind !== undefined && kind !== 'secret' && kind !== 'pii') return fail('"kind" must be "secret" or "pii"');
    let compiled: RegExp;
    try {
      compiled = compileRulePattern(pattern, typeof flags === 'string' ? [...new Set(flags)].join('') : '');
    } catch (error) {
      return fail(`invalid regex ${JSON.stringify(pattern)}: ${describe(error)}`);
    }
    const emptyMatch = compiled.exec('');
    compiled.lastIndex = 0;
    if (emptyMatch !== null) return fail(`pattern ${JSON.stringify(pattern)} matches the empty string`);
    return { name, pattern: compiled, kind: (kind as Kind | undefined) ?? 'secret' };
  });
}

/** Reads and validates a rules file; every error names the file (and the rule at fault). */
export function loadRulesFile(path: string, reservedNames?: ReadonlySet<string>): CustomRule[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new RulesFileError(`${path}: cannot read rules file: ${describe(error)}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new RulesFileError(`${path}: not valid JSON: ${describe(error)}`);
  }
  return parseRules(json, path, reservedNames);
}
