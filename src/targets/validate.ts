/**
 * `traces validate`: checks a JSONL file against a target's rules, line by
 * line without loading the file, and summarizes what a trainer would say
 * (the OpenAI cookbook's report, extended to tools and the NeMo formats).
 */
import path from 'node:path';
import { parseJsonText } from '../canonical/json-value.js';
import { isWhitespace, textTooLong, withEncodingHint } from '../canonical/scan.js';
import { lineTooLongDetail, readLineBatches } from '../sources/lines.js';
import { CountHistogram } from './distribution.js';
import { isObject } from './messages.js';
import type { ErrorClass, ErrorClassSummary, ExampleMeasure, ExampleMeter, Severity, Target, ValidationError, ValidationReport } from './target.js';
import { encodingMeter } from './meter.js';
import { plural } from '../format.js';
import { loadTokenCounter, type EncodingName, type ExampleTokens, type TokenCounter } from './tokens.js';

/** The context of the gpt-4o and gpt-4.1 families: longer examples are truncated by OpenAI. */
export const DEFAULT_TOKEN_LIMIT = 65_536;
/** Line numbers kept per error class: enough to find the pattern, small for a million-line file. */
const LINES_KEPT = 5;

export interface ValidateOptions {
  encoding?: EncodingName;
  tokenLimit?: number;
  /** An already loaded counter (saves the encoding load when validating several files). */
  counter?: TokenCounter;
  /** Counts and render checks of a model folder (`--tokenizer DIR`); replaces `encoding` and `counter`. */
  meter?: ExampleMeter;
}

/**
 * A report as `validate --json` prints it and report.json lists each file: snake_case, as every
 * JSON traces writes (docs/report.md).
 */
export function validationJson(report: ValidationReport): Record<string, unknown> {
  return {
    file: report.file,
    target: report.target,
    examples: report.examples,
    ok: report.ok,
    lines_with_errors: report.linesWithErrors,
    errors: report.errors,
    warnings: report.warnings,
    missing_system: report.missingSystem,
    missing_user: report.missingUser,
    tokens: report.tokens,
    token_limit: report.tokenLimit,
    over_token_limit: report.overTokenLimit,
  };
}

/**
 * Every line of a file as its bytes (so invalid UTF-8 is found, not replaced), blank ones
 * included, however long: a line is split at `\n` only, as trainers read JSONL. `onRead`
 * hears how many bytes each line took.
 */
export async function* fileLines(path: string, onRead?: (bytes: number) => void): AsyncGenerator<Buffer | LineTooLong> {
  for await (const batch of readLineBatches(path, { blank: true })) {
    for (const line of batch) {
      onRead?.(line.length + 1);
      yield line.tooLong ? new LineTooLong(line.length) : line.bytes;
    }
  }
}

/** A line longer than MAX_LINE_BYTES, skipped unread: its length only. */
export class LineTooLong {
  constructor(readonly length: number) {}
}

export async function validateFile(path: string, target: Target, opts: ValidateOptions = {}): Promise<ValidationReport> {
  return validateLines(fileLines(path), target, opts, path);
}

/** The same over any source of lines (each without its line end): bytes as read, or text. */
export async function validateLines(
  lines: AsyncIterable<string | Buffer | LineTooLong> | Iterable<string | Buffer | LineTooLong>,
  target: Target,
  opts: ValidateOptions = {},
  file = '<lines>',
): Promise<ValidationReport> {
  const meter = opts.meter ?? encodingMeter(opts.counter ?? (await loadTokenCounter(opts.encoding)));
  const validator = new LineValidator(target, meter, meter.name, opts.tokenLimit);
  for await (const line of lines) {
    if (typeof line === 'string') validator.addText(line);
    else if (line instanceof LineTooLong) validator.addTooLong(line.length);
    else validator.addBytes(line);
  }
  return validator.report(file);
}

/** What validation learns from one example on its own; line numbers are filled in by `LineValidator`. */
export interface Inspection {
  errors: ValidationError[];
  /** Null when the value has no messages list. */
  tokens: ExampleTokens | null;
  hasSystem: boolean;
  hasUser: boolean;
  /** Sorted top-level keys, comma-joined. */
  topLevelKeys: string | null;
}

/** `measured`: the meter's answer for this value when the caller already has it (an export measures before it writes). */
export function inspectExample(target: Target, meter: ExampleMeter, value: unknown, measured?: ExampleMeasure): Inspection {
  const errors = target.validateLine(value, 0);
  // A row of another shape (hf's prompt and completion) as the messages its trainer reads.
  const chat = isObject(value) && target.rowMessages !== undefined ? target.rowMessages(value) : value;
  if (!isObject(chat) || !Array.isArray(chat.messages)) return { errors, tokens: null, hasSystem: false, hasUser: false, topLevelKeys: null };
  const roles = new Set(chat.messages.map((m) => (isObject(m) ? m.role : undefined)));
  const { tokens, findings } = measured ?? meter.measure(chat);
  for (const f of findings) errors.push({ ...f, line: 0 });
  return {
    errors,
    tokens,
    hasSystem: roles.has('system'),
    hasUser: roles.has('user'),
    topLevelKeys: Object.keys(value as object).sort().join(','),
  };
}

/**
 * Validates examples one at a time: from text (a file being checked) or from the values
 * an export is about to write, so an export checks its own output without reading it back.
 */
export class LineValidator {
  private readonly tally = new Tally();
  private readonly totals = new CountHistogram();
  private readonly assistants = new CountHistogram();
  private examples = 0;
  private missingSystem = 0;
  private missingUser = 0;
  private lineNo = 0;
  private firstKeys: string | null = null;

  constructor(
    private readonly target: Target,
    /** Needed to check text or values here; an export hands in inspections made where the tokenizer is loaded. */
    private readonly meter: ExampleMeter | null,
    private readonly encoding: string = meter?.name ?? 'o200k_base',
    private readonly tokenLimit = DEFAULT_TOKEN_LIMIT,
    /** Counts of a model's rendered template (exact, against --max-seq-length), not the encoding's estimate. */
    private readonly exactCounts = meter?.rendersTemplate ?? false,
  ) {}

  addText(text: string): void {
    this.addBytes(Buffer.from(text, 'utf8'));
  }

  /** A line longer than MAX_LINE_BYTES, as the next line: an error, and no example a trainer could read either. */
  addTooLong(length: number): void {
    this.lineNo += 1;
    this.examples += 1;
    this.tally.add({ code: 'line_too_long', severity: 'error', line: this.lineNo, message: `${lineTooLongDetail(length)}; no trainer takes an example that long` });
  }

  /** A line's bytes (without its line end): held to the same strict reading as trace lines. */
  addBytes(bytes: Buffer): void {
    this.lineNo += 1;
    if (this.lineNo === 1 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
      this.tally.add({ code: 'bom', severity: 'error', line: 1, message: 'the file starts with a byte order mark' });
      bytes = bytes.subarray(3);
    }
    if (bytes.every(isWhitespace)) {
      this.tally.add({ code: 'blank_line', severity: 'error', line: this.lineNo, message: 'blank line' });
      return;
    }
    let value: unknown;
    try {
      // The parser of record values: numbers keep their text, so token counts are of what is written;
      // it refuses what orjson refuses (control characters, lone surrogates, invalid UTF-8, nesting
      // past its limit), which is invalid JSON to a trainer too.
      value = parseJsonText(bytes);
    } catch (e) {
      this.examples += 1;
      const tooLong = textTooLong(e);
      if (tooLong !== null) this.tally.add({ code: 'text_too_long', severity: 'error', line: this.lineNo, message: `${tooLong.message}; no trainer takes an example that long` });
      else this.tally.add({ code: 'invalid_json', severity: 'error', line: this.lineNo, message: withEncodingHint((e as Error).message, bytes) });
      return;
    }
    const separator = lineBreakingAt(bytes);
    if (separator !== null) {
      this.tally.add({
        code: 'line_separator',
        severity: 'error',
        line: this.lineNo,
        message: `a raw ${separator} inside a string: valid JSON, but a reader that splits lines as Python's splitlines() does (NeMo AutoModel) cuts the line there; write it as an escape (\\u${separator.slice(2).toLowerCase()})`,
      });
    }
    this.check(value);
  }

  /** Checks a value as the next line; returns its token counts (null when it has no messages list). */
  addValue(value: unknown): ExampleTokens | null {
    this.lineNo += 1;
    return this.check(value);
  }

  private check(value: unknown): ExampleTokens | null {
    if (this.meter === null) throw new Error('LineValidator: checking values needs a token counter');
    return this.addInspection(inspectExample(this.target, this.meter, value));
  }

  /** Adds an example inspected elsewhere (a worker thread) as the next line. */
  addInspection(inspection: Inspection, advanceLine = false): ExampleTokens | null {
    if (advanceLine) this.lineNo += 1;
    const { tally, lineNo } = this;
    this.examples += 1;
    for (const error of inspection.errors) tally.add({ ...error, line: lineNo });
    if (inspection.tokens === null) return null;
    if (!inspection.hasSystem) this.missingSystem += 1;
    if (!inspection.hasUser) this.missingUser += 1;
    const counted = inspection.tokens;
    this.totals.add(counted.total);
    this.assistants.add(counted.assistant);
    if (counted.total > this.tokenLimit) {
      tally.add({
        code: 'over_token_limit',
        severity: 'warning',
        line: lineNo,
        message: this.overLimit(counted.total),
      });
    }
    // A loader that infers one schema from the first line (NeMo Customizer's).
    if (this.target.schemaFromFirstLine === true && inspection.topLevelKeys !== null) {
      const keys = inspection.topLevelKeys;
      if (this.firstKeys === null) this.firstKeys = keys;
      else if (keys !== this.firstKeys) {
        tally.add({
          code: 'schema_varies',
          severity: 'warning',
          line: lineNo,
          message: `top-level keys {${keys}} differ from the first line's {${this.firstKeys}}: the first line decides the schema`,
        });
      }
    }
    return counted;
  }

  /** A model's own count is exact and the limit the user's --max-seq-length; an encoding's is an estimate against OpenAI's context. */
  private overLimit(total: number): string {
    return this.exactCounts
      ? `${total} tokens (the model's own count), over the ${this.tokenLimit}-token limit: trainers truncate it or, as NeMo-RL does, zero its weight`
      : `about ${total} tokens, over the ${this.tokenLimit}-token limit: trainers truncate or skip it`;
  }

  /**
   * `minimum: false` leaves the trainer's minimum unchecked: an export checks it over every
   * shard of a training split together, and says it on its last line.
   */
  report(file: string, { minimum = true }: { minimum?: boolean } = {}): ValidationReport {
    const { target, tally, examples } = this;
    if (examples === 0) {
      const problem = emptyFileProblem(target, file);
      if (problem !== null) tally.addFileLevel('no_examples', 'error', problem);
    }
    const refusal = minimum && examples > 0 && !isValidationFile(file) ? tooFewExamples(target, examples) : null;
    if (refusal !== null) tally.addFileLevel('too_few_examples', 'error', refusal);
    const errors = tally.summaries('error');
    return {
      file,
      target: target.name,
      examples,
      errors,
      warnings: tally.summaries('warning'),
      linesWithErrors: tally.linesWithErrors,
      missingSystem: this.missingSystem,
      missingUser: this.missingUser,
      tokens: { encoding: this.encoding, total: this.totals.summary(), assistant: this.assistants.summary() },
      tokenLimit: this.tokenLimit,
      overTokenLimit: tally.count('over_token_limit'),
      ok: errors.length === 0,
    };
  }
}

/**
 * Why a file with no example cannot be given to the target, or null when it can: an empty
 * training file gives a trainer nothing to train on, and every one refuses it; an empty
 * validation file is what `export --validation-fraction 0` writes for the targets that take
 * one. Which of the two a file is, its name says, as export names them (validation.jsonl,
 * validation-001.jsonl).
 */
/**
 * The first raw NEL, U+2028 or U+2029 in a line's UTF-8 bytes (`U+2028`), or null. Their
 * encodings (C2 85, E2 80 A8, E2 80 A9) stand for nothing else in valid UTF-8.
 */
function lineBreakingAt(bytes: Buffer): string | null {
  for (let at = bytes.indexOf(0xc2); at !== -1; at = bytes.indexOf(0xc2, at + 1)) {
    if (bytes[at + 1] === 0x85) return 'U+0085';
  }
  for (let at = bytes.indexOf(0xe2); at !== -1; at = bytes.indexOf(0xe2, at + 1)) {
    if (bytes[at + 1] === 0x80 && (bytes[at + 2] === 0xa8 || bytes[at + 2] === 0xa9)) return bytes[at + 2] === 0xa8 ? 'U+2028' : 'U+2029';
  }
  return null;
}

function emptyFileProblem(target: Target, file: string): string | null {
  const validation = isValidationFile(file);
  if (validation && target.rejectsEmptyValidation !== true) return null;
  return validation
    ? `the file holds no example, and ${target.name} rejects an empty validation file`
    : `the file holds no example: no trainer takes an empty training file (an empty validation file, named validation*.jsonl, is one ${target.name} ${target.rejectsEmptyValidation === true ? 'rejects too' : 'accepts'})`;
}

/** A file export names as validation data (validation.jsonl, validation-001.jsonl): no trainer's minimum applies to it. */
export function isValidationFile(file: string): boolean {
  return path.basename(file).toLowerCase().startsWith('validation');
}

/**
 * Why the trainer refuses a training file of `examples` examples, or null when it takes it:
 * the one wording `validate` and `export` use.
 */
export function tooFewExamples(target: Target, examples: number): string | null {
  if (target.minExamples === 0 || examples >= target.minExamples) return null;
  return `${plural(examples, 'training example')}: ${target.name} refuses a training file with fewer than ${target.minExamples} (a validation file, named validation*.jsonl, has no minimum)`;
}

/** Per error class: how many lines, which first, and the first message. */
class Tally {
  private readonly byClass = new Map<ErrorClass, ErrorClassSummary>();
  private lastErrorLine = 0;
  linesWithErrors = 0;

  addLine(errors: readonly ValidationError[]): void {
    for (const e of errors) this.add(e);
  }

  add(e: ValidationError): void {
    let summary = this.byClass.get(e.code);
    if (summary === undefined) {
      summary = { code: e.code, severity: e.severity, count: 0, lines: [], message: e.message };
      this.byClass.set(e.code, summary);
    }
    summary.count += 1;
    if (summary.lines.length < LINES_KEPT) summary.lines.push(e.line);
    if (e.severity === 'error' && e.line !== this.lastErrorLine) {
      this.lastErrorLine = e.line;
      this.linesWithErrors += 1;
    }
  }

  addFileLevel(code: ErrorClass, severity: Severity, message: string): void {
    this.byClass.set(code, { code, severity, count: 1, lines: [], message });
  }

  count(code: ErrorClass): number {
    return this.byClass.get(code)?.count ?? 0;
  }

  /** Map order is first-occurrence order. */
  summaries(severity: Severity): ErrorClassSummary[] {
    return [...this.byClass.values()].filter((s) => s.severity === severity);
  }
}
