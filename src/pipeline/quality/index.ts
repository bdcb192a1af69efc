/**
 * The quality stages: failures a recorder does not see (the call returned, the answer is
 * still no good). Each is a module of its own; this composes them for one record, in the
 * order below, the first that drops deciding the reason. Refusal and identity phrases are
 * flagged (counted, listed, kept) unless `--drop` names them.
 */
import type { Message, TraceRecord } from '../../record.js';
import { brokenDetail } from './broken.js';
import { contaminationIn, type EvalIndex, type EvalMatch } from './contamination.js';
import { emptyDetail } from './empty.js';
import { phraseIn } from './phrases.js';
import { repetitionDetail } from './repetition.js';
import { contentText, foldForPhrases, reasoningText } from './text.js';
import { truncatedDetail, truncationUnchecked } from './truncated.js';

/** The filters `--quality` lists, in the order they are applied. `contaminated` runs when `--decontaminate` gives evaluation sets. */
export const QUALITY_FILTERS = ['truncated', 'broken', 'empty', 'repetition', 'refusal', 'identity'] as const;
export type QualityFilter = (typeof QUALITY_FILTERS)[number];
/** The drop reasons of the quality stages (a filter's name, and `contaminated`). */
export const QUALITY_REASONS = [...QUALITY_FILTERS, 'contaminated'] as const;
export type QualityReason = (typeof QUALITY_REASONS)[number];

export type QualityMode = 'drop' | 'flag' | 'off';

/**
 * What runs without `--quality`: truncated, broken and empty drop; refusal and identity flag.
 * Repetition is off: it dropped 1.48% of the bench generator's normal records (the target was
 * under 0.5%) and is the dearest stage (docs/quality-filters.md has the figures).
 */
export const DEFAULT_MODES: Readonly<Record<QualityFilter, QualityMode>> = {
  truncated: 'drop',
  broken: 'drop',
  empty: 'drop',
  repetition: 'off',
  refusal: 'flag',
  identity: 'flag',
};

/** How each filter is meant to run, and what it needs. Plain values: it crosses to worker threads. */
export interface QualitySettings {
  modes: Record<QualityFilter, QualityMode>;
  /** `--max-completion-tokens`: for records without a stop reason. */
  maxCompletionTokens: number | null;
  /** Folded phrases (phrases.ts). */
  refusalPhrases: string[];
  identityPhrases: string[];
  evals: EvalIndex | null;
}

export interface QualityVerdict {
  reason: QualityReason;
  detail: string;
  /** For `contaminated`: the evaluation file (index into `evals.files`), item line and shared n-gram. */
  match?: EvalMatch;
}

export interface QualityResult {
  drop: QualityVerdict | null;
  flags: QualityVerdict[] | null;
  /** True when the truncated stage ran and nothing the record holds could tell it (no stop reason, no token limit). */
  truncationUnchecked: boolean;
}

/** True when no stage would look at a record. */
export function qualityIsOff(settings: QualitySettings): boolean {
  return settings.evals === null && QUALITY_FILTERS.every((name) => settings.modes[name] === 'off');
}

function userTexts(messages: readonly Message[]): string[] {
  return messages.filter((m) => m.role === 'user').map(contentText);
}

/** The quality verdict of an ok record: the first drop, and the flags raised before it. */
export function qualityOf(record: TraceRecord, settings: QualitySettings): QualityResult {
  const result: QualityResult = { drop: null, flags: null, truncationUnchecked: false };
  const { modes } = settings;
  const raise = (reason: QualityFilter, detail: string | null): boolean => {
    if (detail === null || modes[reason] === 'off') return false;
    if (modes[reason] === 'drop') {
      result.drop = { reason, detail };
      return true;
    }
    (result.flags ??= []).push({ reason, detail });
    return false;
  };
  // The stop reason and usage are at hand: the completion is only parsed past this.
  if (modes.truncated !== 'off') {
    if (raise('truncated', truncatedDetail(record, settings.maxCompletionTokens))) return result;
    result.truncationUnchecked = truncationUnchecked(record, settings.maxCompletionTokens);
  }
  const completion = record.completion();
  if (completion === null) return result;
  if (modes.broken !== 'off' && raise('broken', brokenDetail(completion))) return result;
  if (modes.empty !== 'off' && raise('empty', emptyDetail(completion))) return result;
  if (modes.repetition !== 'off') {
    const content = repetitionDetail(contentText(completion));
    if (raise('repetition', content === null ? null : `content: ${content}`)) return result;
    const reasoning = repetitionDetail(reasoningText(completion));
    if (raise('repetition', reasoning === null ? null : `reasoning: ${reasoning}`)) return result;
  }
  if (settings.evals !== null) {
    for (const text of userTexts(record.messages())) {
      const match = contaminationIn(text, settings.evals);
      if (match === null) continue;
      result.drop = {
        reason: 'contaminated',
        detail: `user text shares ${JSON.stringify(match.ngram)} with ${settings.evals.files[match.file]} item at line ${match.line}`,
        match,
      };
      return result;
    }
  }
  if (modes.refusal !== 'off' || modes.identity !== 'off') {
    const folded = foldForPhrases(contentText(completion));
    if (modes.refusal !== 'off') {
      const phrase = phraseIn(folded, settings.refusalPhrases);
      if (raise('refusal', phrase === null ? null : `answer says ${JSON.stringify(phrase)}`)) return result;
    }
    if (modes.identity !== 'off') {
      const phrase = phraseIn(folded, settings.identityPhrases);
      if (raise('identity', phrase === null ? null : `answer says ${JSON.stringify(phrase)}`)) return result;
    }
  }
  return result;
}
