/**
 * Per-record selection: which records a run looks at, before dedupe and collapse.
 * Each test says why it drops a record, so the manifest can explain every drop.
 */
import { nameGlob, type Glob } from './glob.js';
import { writeJson } from '../canonical/json-value.js';
import type { Message, Status, TraceRecord } from '../record.js';
import { epochSecondsOf } from '../time.js';
import { versionNameOf } from '../sources/registry.js';
import { costOver, secondsOver } from './limit-text.js';

export interface Selection {
  statuses: ReadonlySet<Status>;
  /** Globs (`nameGlob`), as text: a selection travels to worker threads, which compile them once each. */
  programs: string[];
  modules: string[];
  models: string[];
  versions: VersionRange[];
  /** Epoch seconds, inclusive. */
  since: number | null;
  /** Epoch seconds, exclusive. */
  until: number | null;
  minTokens: number | null;
  maxTokens: number | null;
  maxCost: number | null;
  maxDuration: number | null;
  grep: RegExp | null;
}

export interface VersionRange {
  operator: '<' | '<=' | '>' | '>=' | '=';
  version: number[];
}

export function everything(statuses: Iterable<Status>): Selection {
  return {
    statuses: new Set(statuses),
    programs: [],
    modules: [],
    models: [],
    versions: [],
    since: null,
    until: null,
    minTokens: null,
    maxTokens: null,
    maxCost: null,
    maxDuration: null,
    grep: null,
  };
}

export function parseVersion(text: string): number[] | null {
  if (!/^\d+(\.\d+)*$/.test(text)) return null;
  return text.split('.').map(Number);
}

export function compareVersions(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** `0.9.014`, `>=0.9.010`, `>=0.9,<0.10`: null when the text is not a version spec. */
export function parseVersionSpec(spec: string): VersionRange[] | null {
  const ranges: VersionRange[] = [];
  for (const part of spec.split(',').map((p) => p.trim())) {
    const match = /^(<=|>=|<|>|==|=)?\s*(.+)$/.exec(part);
    const version = match && parseVersion(match[2]);
    if (!match || !version) return null;
    const operator = (match[1] === '==' || match[1] === undefined ? '=' : match[1]) as VersionRange['operator'];
    ranges.push({ operator, version });
  }
  return ranges;
}

function versionMatches(text: string | null, ranges: readonly VersionRange[]): boolean {
  const version = text === null ? null : parseVersion(text);
  if (version === null) return false;
  return ranges.every(({ operator, version: bound }) => {
    const d = compareVersions(version, bound);
    switch (operator) {
      case '<':
        return d < 0;
      case '<=':
        return d <= 0;
      case '>':
        return d > 0;
      case '>=':
        return d >= 0;
      case '=':
        return d === 0;
    }
  });
}

/**
 * Digits that ISO 8601 reads as a calendar date: a year (`2026`) or a basic date (`20260707`).
 * As epoch seconds they would be moments of 1970-1973, before any recorded call, so
 * `--since 20260707` kept everything while the user meant July 7th.
 */
const DIGITS_AS_DATE = /^(\d{4})(?:(\d{2})(\d{2}))?$/;

/**
 * ISO 8601 date or date-time (without a zone, UTC: a date alone is UTC midnight), a month
 * (`2026-07`) or a year (`2026`) meaning its first day, a basic date (`20260707`), or epoch
 * seconds; null when none of these.
 */
export function parseTime(text: string): number | null {
  const asDate = DIGITS_AS_DATE.exec(text);
  if (asDate !== null) return epochSecondsOf(`${asDate[1]}-${asDate[2] ?? '01'}-${asDate[3] ?? '01'}`);
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text);
  if (/^\d{4}-\d{2}$/.test(text)) return epochSecondsOf(`${text}-01`);
  if (!/^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(text)) return null;
  return epochSecondsOf(text);
}

/** The texts `--grep` searches: contents, reasoning and tool-call arguments. */
export function* messageTexts(messages: readonly Message[]): Generator<string> {
  for (const message of messages) {
    const { content } = message;
    if (typeof content === 'string') yield content;
    else if (content !== undefined && content !== null) yield writeJson(content);
    if (typeof message.reasoning_content === 'string') yield message.reasoning_content;
    for (const call of message.tool_calls ?? []) {
      const args = call.function?.arguments;
      yield typeof args === 'string' ? args : writeJson(args ?? null);
    }
  }
}

const compiledGlobs = new Map<string, Glob>();

function anyMatches(globs: readonly string[], value: string | null, flag: string): boolean {
  if (value === null) return false;
  return globs.some((text) => {
    let glob = compiledGlobs.get(text);
    if (glob === undefined) compiledGlobs.set(text, (glob = nameGlob(text, flag)));
    return glob.test(value);
  });
}

/** Why the selection drops the record (`status` or `filter` with a detail), or null to keep it. */
export function selectionVerdict(selection: Selection, record: TraceRecord): { reason: 'status' | 'filter'; detail: string } | null {
  const status = record.status;
  if (!selection.statuses.has(status)) return { reason: 'status', detail: status };
  const filter = (detail: string) => ({ reason: 'filter' as const, detail });
  if (selection.programs.length > 0 && !anyMatches(selection.programs, record.program, '--program')) return filter(`program ${record.program}`);
  if (selection.modules.length > 0 && !anyMatches(selection.modules, record.module, '--module')) return filter(`module ${record.module}`);
  if (selection.models.length > 0 && !anyMatches(selection.models, record.model, '--model')) return filter(`model ${record.model ?? 'unknown'}`);
  if (selection.versions.length > 0) {
    // A record of a source that records no Synalinks version is of none asked for: said as such, not as an unknown version.
    if (versionNameOf(record.source) !== 'synalinks') return filter(`no synalinks version: ${record.source} records carry none`);
    if (!versionMatches(record.version, selection.versions)) return filter(`synalinks version ${record.version ?? 'unknown'}`);
  }
  if (selection.since !== null || selection.until !== null) {
    const t = record.timestamp;
    if (t === null) return filter('no timestamp');
    if (selection.since !== null && t < selection.since) return filter('before --since');
    if (selection.until !== null && t >= selection.until) return filter('not before --until');
  }
  if (selection.minTokens !== null || selection.maxTokens !== null) {
    const total = record.usage?.total_tokens ?? null;
    if (total === null) return filter('tokens unknown');
    if (selection.minTokens !== null && total < selection.minTokens) return filter(`${total} tokens < --min-tokens ${selection.minTokens}`);
    if (selection.maxTokens !== null && total > selection.maxTokens) return filter(`${total} tokens > --max-tokens ${selection.maxTokens}`);
  }
  if (selection.maxCost !== null) {
    const cost = record.cost;
    if (cost === null) return filter('cost unknown');
    if (cost > selection.maxCost) return filter(`cost ${costOver(cost, selection.maxCost)} > --max-cost ${selection.maxCost}`);
  }
  if (selection.maxDuration !== null) {
    const duration = record.duration;
    if (duration === null) return filter('duration unknown');
    if (duration > selection.maxDuration) return filter(`duration ${secondsOver(duration, selection.maxDuration)} > --max-duration ${selection.maxDuration}`);
  }
  if (selection.grep !== null) {
    const grep = selection.grep;
    let found = false;
    for (const text of messageTexts(record.messages())) {
      grep.lastIndex = 0;
      if (grep.test(text)) {
        found = true;
        break;
      }
    }
    if (!found) return filter('no message matches --grep');
  }
  return null;
}
