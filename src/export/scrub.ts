/** `--scrub` and `--drop-on secrets` as every export format applies them. */
import { compareText } from '../order.js';
import { DETECTORS, redactValue, type PrivacyOptions } from '../privacy/index.js';
import type { QualityReport } from '../pipeline/curate.js';

export interface ScrubSettings {
  options: PrivacyOptions;
  /** Drop an example holding a secret (reason `secret`) instead of redacting it. */
  dropOnSecrets: boolean;
}

const SECRET_DETECTORS = new Set(DETECTORS.filter((d) => d.kind === 'secret').map((d) => d.name));

/** Whether redaction counts include a secret (a built-in secret detector, or a custom rule of kind secret): what `--drop-on secrets` drops. */
export function holdsSecret(counts: Record<string, number>, scrub: ScrubSettings): boolean {
  return Object.keys(counts).some(
    (name) => SECRET_DETECTORS.has(name) || scrub.options.rules?.some((rule) => rule.name === name && (rule.kind ?? 'secret') === 'secret'),
  );
}

/**
 * A conversation as an export writes it: redacted, with what was redacted by detector (null
 * when nothing was); or, when `--drop-on secrets` drops it, the detectors that found something.
 */
export function scrubbed<T>(value: T, scrub: ScrubSettings): { value: T; redactions: Record<string, number> | null } | { secret: string } {
  const redacted = redactValue(value, scrub.options);
  if (Object.keys(redacted.counts).length === 0) return { value, redactions: null };
  if (scrub.dropOnSecrets && holdsSecret(redacted.counts, scrub)) return { secret: foundBy(redacted.counts) };
  return { value: redacted.value as T, redactions: redacted.counts };
}

/** The detectors of redaction counts, as a drop's detail names them. */
export function foundBy(counts: Record<string, number>): string {
  return Object.keys(counts).sort().join(', ');
}

/** report.json's `scrub` section: what was asked and what was redacted, by detector. */
export function scrubReport(scrub: ScrubSettings | null, redactions: Record<string, number>): Record<string, unknown> | null {
  if (scrub === null) return null;
  return {
    kinds: [...scrub.options.kinds].map((k) => (k === 'secret' ? 'secrets' : k)),
    custom_rules: (scrub.options.rules ?? []).map((r) => r.name),
    drop_on_secrets: scrub.dropOnSecrets,
    redactions: Object.fromEntries(Object.entries(redactions).sort(([a], [b]) => compareText(a, b))),
  };
}

/** report.json's `quality` section: the overlaps it quotes are recorded user text, redacted as the examples are. */
export function scrubbedQualityReport(report: QualityReport | null, scrub: ScrubSettings | null): QualityReport | null {
  if (report === null || scrub === null) return report;
  return {
    ...report,
    evaluation_files: report.evaluation_files.map((file) => ({
      ...file,
      overlaps: file.overlaps.map((overlap) => ({ ...overlap, ngram: redactValue(overlap.ngram, scrub.options).value })),
    })),
  };
}
