/** `--scrub` and `--drop-on secrets` as every export format applies them. */
import { compareText } from '../order.js';
import { DETECTORS, redactValue, type PrivacyOptions } from './index.js';
import { uuidWords } from '../uuid-words.js';

export interface ScrubSettings {
  options: PrivacyOptions;
  /** Drop an example holding a secret (reason `secret`) instead of redacting it. */
  dropOnSecrets: boolean;
}

/**
 * `--scrub secrets`, every command's default: the paths discovery names for a caller that
 * gives no scrub of its own, and the call_ids a keep-list over a default index holds.
 */
export const SECRETS_SCRUB: ScrubSettings = { options: { kinds: new Set(['secret']) }, dropOnSecrets: false };

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

/**
 * A name taken from a record (a program, module or tool name), as every text derived from it
 * must start: scrubbed as the record's text is. Folder names, class names and report fields
 * are re-cased, joined and cut from it, which no detector would see through afterwards
 * (`Ask::Tools::SkLive…` is a Stripe key no longer found), so they are made from this.
 */
export function scrubbedName(name: string, scrub: ScrubSettings | null): string {
  if (scrub === null) return name;
  // Names repeat (every drop of a file names its folders; details are a few fixed phrases).
  return remembered(scrubbedNames, scrub, name, () => redactValue(name, scrub.options).value as string);
}

const SCRUBBED_TEXTS_LIMIT = 4096;
const scrubbedNames = new WeakMap<PrivacyOptions, Map<string, string>>();

/**
 * `scrub(text)` judged once per option set and text; bounded (cleared when full), so distinct
 * texts cannot grow it for ever.
 */
function remembered(memo: WeakMap<PrivacyOptions, Map<string, string>>, settings: ScrubSettings, text: string, scrub: () => string): string {
  let known = memo.get(settings.options);
  if (known === undefined) memo.set(settings.options, (known = new Map()));
  let scrubbed = known.get(text);
  if (scrubbed === undefined) {
    scrubbed = scrub();
    if (known.size >= SCRUBBED_TEXTS_LIMIT) known.clear();
    known.set(text, scrubbed);
  }
  return scrubbed;
}

/** A file name's ending that is no part of a name: a Synalinks file's `_<date>-<time>` and any extensions. */
const FILE_NAME_ENDING = /^(.*?)((?:_\d{8}-\d{6})?(?:\.[A-Za-z0-9]+)*)$/s;

/**
 * A recorded file's path, scrubbed folder by folder: a Synalinks tree names its folders after
 * the program and module and its files `<module>_<date>-<time>.jsonl`. The name before that
 * ending is scrubbed alone, since a key followed by `_2026…` reads to a detector as a longer
 * word that is no key.
 */
export function scrubbedPath(file: string, scrub: ScrubSettings | null): string {
  if (scrub === null) return file;
  // Every drop of a file names it: its segments are split and scrubbed once.
  return remembered(scrubbedPaths, scrub, file, () =>
    file.replace(/[^/\\]+/g, (segment) => {
      const [, stem, ending] = FILE_NAME_ENDING.exec(segment)!;
      return `${scrubbedName(stem, scrub)}${ending}`;
    }),
  );
}

/**
 * A call_id as export writes it (manifest, examples.jsonl, report.json): recorded text like any
 * other, and Ask and klieo ids are whatever the program chose (`run:<token>:3`), so it is
 * scrubbed as the records are. A lowercase uuid, nearly every id, is 32 hex digits and 4 dashes,
 * which no built-in secret detector matches (the tests hold every detector to that); personal
 * data detectors and custom rules could (a phone number of digits and dashes), so with those it
 * is scrubbed too.
 */
export function scrubbedCallId(callId: string, scrub: ScrubSettings | null): string {
  if (scrub === null) return callId;
  if (uuidWords(callId, uuidScratch) && secretsOnly(scrub.options)) return callId;
  return redactValue(callId, scrub.options).value as string;
}

const uuidScratch = new Uint32Array(4);

function secretsOnly(options: PrivacyOptions): boolean {
  return !options.kinds.has('pii') && (options.rules === undefined || options.rules.length === 0);
}

/** Paths scrubbed, per option set (drops come in key order, not file by file). */
const scrubbedPaths = new WeakMap<PrivacyOptions, Map<string, string>>();

/**
 * A drop as the manifest writes it: its detail may quote the record (a tool name, a role)
 * and its file path holds the program and module folders, so both are scrubbed.
 */
export function scrubbedDrop<T extends { file?: string; detail?: string; call_id?: string; kept?: string }>(drop: T, scrub: ScrubSettings | null): T {
  if (scrub === null) return drop;
  const file = drop.file !== undefined ? scrubbedPath(drop.file, scrub) : undefined;
  const detail = drop.detail !== undefined ? scrubbedName(drop.detail, scrub) : undefined;
  const callId = drop.call_id !== undefined ? scrubbedCallId(drop.call_id, scrub) : undefined;
  const kept = drop.kept !== undefined ? scrubbedCallId(drop.kept, scrub) : undefined;
  // Nearly always nothing was redacted: the drop is then written as it is, not copied.
  if (file === drop.file && detail === drop.detail && callId === drop.call_id && kept === drop.kept) return drop;
  return {
    ...drop,
    ...(file !== undefined ? { file } : {}),
    ...(detail !== undefined ? { detail } : {}),
    ...(callId !== undefined ? { call_id: callId } : {}),
    ...(kept !== undefined ? { kept } : {}),
  };
}

/**
 * A damaged line as a report lists it: its file path holds the program and module folders, and
 * its reason may quote the record (an Ask interaction's unknown type), so both are scrubbed.
 */
export function scrubbedDamage<T extends { file: string; reason: string }>(line: T, scrub: ScrubSettings | null): T {
  if (scrub === null) return line;
  const file = scrubbedPath(line.file, scrub);
  const reason = scrubbedName(line.reason, scrub);
  return file === line.file && reason === line.reason ? line : { ...line, file, reason };
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

/** What report.json's `quality` section quotes of recorded text: the overlaps with evaluation files. */
interface QuotedOverlaps {
  evaluation_files: { overlaps: { call_id: string; ngram: string }[] }[];
}

/** report.json's `quality` section: the overlaps it quotes are recorded user text, redacted as the examples are. */
export function scrubbedQualityReport<Report extends QuotedOverlaps>(report: Report | null, scrub: ScrubSettings | null): Report | null {
  if (report === null || scrub === null) return report;
  return {
    ...report,
    evaluation_files: report.evaluation_files.map((file) => ({
      ...file,
      overlaps: file.overlaps.map((overlap) => ({ ...overlap, call_id: scrubbedCallId(overlap.call_id, scrub), ngram: redactValue(overlap.ngram, scrub.options).value })),
    })),
  };
}
