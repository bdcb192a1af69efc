/** Shared vocabulary of the privacy module: what a detector reports and how callers choose detectors. */

export type Kind = 'secret' | 'pii';
export const KINDS: readonly Kind[] = ['secret', 'pii'];

/** One sensitive span. start/end cover only the sensitive part (e.g. the password of a URL), so redaction replaces exactly [start, end). */
export interface Finding {
  detector: string;
  kind: Kind;
  start: number;
  end: number;
  /** Masked: at most two real characters at each end, so a report never leaks the value. */
  preview: string;
}

/**
 * A user-supplied pattern. A named group `value` narrows the redacted span to that group.
 * kind defaults to 'secret'.
 */
export interface CustomRule {
  name: string;
  pattern: RegExp;
  kind?: Kind;
}

export interface PrivacyOptions {
  readonly kinds: ReadonlySet<Kind>;
  /** Custom rules always run, whatever `kinds` says: supplying them is the request. */
  readonly rules?: readonly CustomRule[];
}
