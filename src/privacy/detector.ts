/** What a built-in detector is, and the loop that runs one over a text. */
import type { Kind } from './types.js';

export interface Detector {
  readonly name: string;
  readonly kind: Kind;
  /** Higher wins when two findings overlap (more specific detectors rank higher). */
  readonly rank: number;
  /** A cheap test (substring checks) that gates the regex, which is the expensive part. */
  readonly mayMatch: (text: string) => boolean;
  /** Must carry the 'g' flag, and 'd' when valueGroups is set. Shared: only used synchronously. */
  readonly pattern: RegExp;
  /** Capture groups (index or name) holding the sensitive part; the first that took part wins. Whole match otherwise. */
  readonly valueGroups?: readonly (number | string)[];
  /** For spans no single group covers (a local part captured in a lookbehind). Wins over valueGroups. */
  readonly span?: (match: RegExpExecArray) => [number, number] | undefined;
  /** Second opinion on a regex match (checksums, entropy, context). */
  readonly accept?: (value: string, match: RegExpExecArray, text: string) => boolean;
}

export interface Candidate {
  readonly detector: string;
  readonly kind: Kind;
  readonly rank: number;
  readonly start: number;
  readonly end: number;
}

export function includesAny(needles: readonly string[]): (text: string) => boolean {
  return (text) => {
    for (const needle of needles) if (text.includes(needle)) return true;
    return false;
  };
}


function valueSpan(match: RegExpExecArray, groups: readonly (number | string)[] | undefined): [number, number] | undefined {
  if (groups === undefined) return [match.index, match.index + match[0].length];
  const indices = match.indices;
  if (indices === undefined) throw new Error('detector with valueGroups needs the d flag');
  for (const group of groups) {
    const span = typeof group === 'number' ? indices[group] : indices.groups?.[group];
    if (span !== undefined) return span;
  }
  return undefined;
}

/** Runs `pattern` over `text`, pushing accepted spans shifted by `offset` (the text may be a slice). */
export function collectMatches(
  source: Pick<Detector, 'name' | 'kind' | 'rank' | 'pattern' | 'valueGroups' | 'span' | 'accept'>,
  text: string,
  offset: number,
  out: Candidate[],
): void {
  const re = source.pattern;
  re.lastIndex = 0;
  let match: RegExpExecArray | null;
  while ((match = re.exec(text)) !== null) {
    if (match[0].length === 0) {
      re.lastIndex++;
      continue;
    }
    const span = source.span !== undefined ? source.span(match) : valueSpan(match, source.valueGroups);
    if (span !== undefined && span[1] > span[0] && (source.accept?.(text.slice(span[0], span[1]), match, text) ?? true)) {
      out.push({ detector: source.name, kind: source.kind, rank: source.rank, start: span[0] + offset, end: span[1] + offset });
    } else {
      // A rejected candidate may hide a valid one starting inside it.
      re.lastIndex = match.index + 1;
    }
  }
}
