/**
 * A Synalinks trace line as a record. The constructor only locates the top-level fields
 * (validating the JSON on the way); each field is decoded when first asked for, so
 * `stats` never parses the messages and `verify` never builds them as objects.
 */
import { ByteSink } from '../canonical/byte-sink.js';
import { sha256Hex, writeArray, writeCanonical } from '../canonical/canonical.js';
import { parseCheckedValue, parseJson, parsedEnd } from '../canonical/json-value.js';
import { BOM_REASON, checkTextRules, decodeString, forEachElement, forEachMember, KeyMatcher, lastSkippedElement, skipWhitespace, startsWithBom, textTooLong } from '../canonical/scan.js';
import { foldHexBytes } from '../canonical/fold-hex.js';
import { classify, isTokenCount, maxTokensOf, type Message, type SourceRef, type Status, type TraceRecord, type Usage } from '../record.js';
import { possibleDuration, possibleTime } from '../time.js';

const FIELDS = [
  'synalinks_version',
  'call_id',
  'parent_call_id',
  'program',
  'module',
  'timestamp',
  'duration',
  'usage',
  'cost',
  'messages',
  'inputs_hash',
  'outputs',
  'config',
  'config_hash',
  'exception',
] as const;
type Field = (typeof FIELDS)[number];
const FIELD_MATCHER = new KeyMatcher(FIELDS);
const F = Object.fromEntries(FIELDS.map((name, i) => [name, i])) as Record<Field, number>;

export class DamagedRecordError extends Error {}

const NULL_BYTES = Buffer.from('null');
const EMPTY = Buffer.alloc(0);

function isNullAt(b: Buffer, start: number, end: number): boolean {
  return end - start === 4 && b.compare(NULL_BYTES, 0, 4, start, end) === 0;
}

/** Config objects repeat across thousands of records: parse each distinct one once. */
const modelByConfigHash = new Map<string, { model: string | null; provider: string | null; maxTokens: number | null }>();

/** Spans of a record before its fields are located: all absent. Copied, not filled, per record. */
const NO_SPANS: readonly number[] = new Array<number>(FIELDS.length * 2).fill(-1);

/**
 * The span list `locateField` writes into: one module-level visitor rather than a closure per
 * record, since a record's constructor runs once per line of every file read.
 */
const locating: { raw: Buffer; spans: number[]; lastMessageStart: number; lastMessageEnd: number } = { raw: Buffer.alloc(0), spans: [], lastMessageStart: -1, lastMessageEnd: -1 };
const MESSAGES = F.messages;

function locateField(keyStart: number, keyEnd: number, valueStart: number, valueEnd: number): void {
  const index = FIELD_MATCHER.match(locating.raw, keyStart, keyEnd);
  if (index !== -1) {
    locating.spans[index * 2] = valueStart;
    locating.spans[index * 2 + 1] = valueEnd;
    if (index === MESSAGES) {
      // The walk that located the field skipped the list just now, and saw where its last element is
      // (unless the list was read another way: then no skip started there).
      const list = locating.raw[valueStart] === 0x5b && lastSkippedElement.container === valueStart;
      locating.lastMessageStart = list ? lastSkippedElement.start : -1;
      locating.lastMessageEnd = list ? lastSkippedElement.end : -1;
    }
  }
}

/**
 * The messages list built while the constructor validates the line (`parseMessages`), and
 * where it starts: a line's last `messages` member is the one that counts.
 */
const parsing: { raw: Buffer; messages: unknown; at: number } = { raw: Buffer.alloc(0), messages: undefined, at: -1 };

function parseMessagesMember(keyStart: number, keyEnd: number, valueStart: number, depth: number): number {
  const b = parsing.raw;
  if (b[valueStart] !== 0x5b || FIELD_MATCHER.match(b, keyStart, keyEnd) !== F.messages) return -1;
  try {
    parsing.messages = parseCheckedValue(b, valueStart, b.length, depth);
  } catch (error) {
    // A text too long to be a string: validated by the skip, refused where the messages are asked for.
    if (textTooLong(error) === null) throw error;
    return -1;
  }
  parsing.at = valueStart;
  return parsedEnd();
}

/**
 * The last text decoded for one field. Consecutive records nearly always repeat their
 * program, module, version and config hash, so each is decoded once per run of equal bytes,
 * and the same string comes back (cheap to compare and to look up).
 */
class RepeatedText {
  private bytes: Buffer = Buffer.alloc(0);
  private text = '';

  decode(b: Buffer, start: number, end: number): string {
    const length = end - start;
    const last = this.bytes;
    if (length === last.length) {
      let i = 0;
      while (i < length && b[start + i] === last[i]) i++;
      if (i === length) return this.text;
    }
    this.text = decodeString(b, start, end);
    // A copy: `b` may be a read buffer that the next chunk overwrites.
    this.bytes = Buffer.from(b.subarray(start, end));
    return this.text;
  }
}

/** Texts longer than this are decoded each time: comparing them would cost as much. */
const REPEATED_TEXT_MAX = 256;
const REPEATED_TEXTS: (RepeatedText | undefined)[] = FIELDS.map((name) =>
  ['synalinks_version', 'program', 'module', 'config_hash'].includes(name) ? new RepeatedText() : undefined,
);

const USAGE_FIELDS = ['prompt_tokens', 'completion_tokens', 'total_tokens', 'cached_tokens', 'cache_creation_tokens', 'reasoning_tokens'] as const;
const USAGE_MATCHER = new KeyMatcher(USAGE_FIELDS);

/** Powers of ten a double holds exactly. */
const EXACT_POWERS_OF_TEN = Array.from({ length: 23 }, (_, k) => 10 ** k);

/**
 * A JSON number's value, read straight from the bytes when that is exact: digits forming an
 * integer below 2^53, divided by a power of ten up to 10^22, is one correctly rounded division
 * (Clinger's fast path), so it equals `Number(text)`. Exponents and longer numbers go through
 * `Number`.
 */
function numberAt(b: Buffer, start: number, end: number): number {
  const negative = b[start] === 0x2d;
  let digits = 0;
  let fractionDigits = -1;
  let i = negative ? start + 1 : start;
  for (; i < end; i++) {
    const c = b[i];
    if (c >= 0x30 && c <= 0x39) {
      digits = digits * 10 + (c - 0x30);
      if (fractionDigits >= 0) fractionDigits++;
    } else if (c === 0x2e && fractionDigits < 0) fractionDigits = 0;
    else break;
  }
  if (i === end && digits <= Number.MAX_SAFE_INTEGER && fractionDigits <= 22) {
    const value = fractionDigits > 0 ? digits / EXACT_POWERS_OF_TEN[fractionDigits] : digits;
    return negative ? -value : value;
  }
  return Number(b.toString('latin1', start, end));
}

let usageRaw: Buffer = Buffer.alloc(0);
let usageRead: Partial<Record<keyof Usage, number>> = {};

function readUsageField(keyStart: number, keyEnd: number, valueStart: number, valueEnd: number): void {
  const index = USAGE_MATCHER.match(usageRaw, keyStart, keyEnd);
  if (index === -1) return;
  const c = usageRaw[valueStart];
  // A count is a JSON number; anything else in its place (null, text) is no count.
  const value = c === 0x2d || (c >= 0x30 && c <= 0x39) ? numberAt(usageRaw, valueStart, valueEnd) : undefined;
  usageRead[USAGE_FIELDS[index]] = isTokenCount(value) ? value : undefined;
}

/** The usage object at [start, end), its counts read from the bytes; null when it is no object. */
function readUsage(b: Buffer, start: number, end: number): Usage | null {
  if (b[start] !== 0x7b) return null;
  usageRaw = b;
  usageRead = {};
  forEachMember(b, start, end, readUsageField);
  return usageRead as Usage;
}

export class SynalinksRecord implements TraceRecord {
  readonly source = 'synalinks' as const;
  /**
   * Start and end of each known field's value in `raw`, -1 when absent. A plain array of small
   * integers: a typed array this size lives outside the heap, and cost more to make per record.
   */
  private readonly spans: number[] = NO_SPANS.slice();
  private cachedMessages: Message[] | undefined;
  /** Where the last message sits in `raw`, once a walk over the messages has found it (`lastMessageAt`); -1 until then. */
  private lastMessageStart = -1;
  private lastMessageEnd = -1;
  private cachedUsage: Usage | null | undefined;

  constructor(
    readonly raw: Buffer,
    readonly ref: SourceRef,
    /**
     * Build the messages while validating the line, rather than skip them now and parse them
     * when asked for (a second walk over most of the line): for a caller that will ask, one
     * record at a time (the lists of a batch of records built at once would all be held).
     */
    parseMessages = false,
  ) {
    const b = raw;
    // The one decision of what is damaged, shared by every command: what orjson would not load
    // (this check and the validating walk below), or not a Synalinks record.
    checkTextRules(b);
    const start = skipWhitespace(b, 0, b.length);
    if (b[start] !== 0x7b) throw new DamagedRecordError(startsWithBom(b) ? BOM_REASON : 'not a JSON object');
    locating.raw = b;
    locating.spans = this.spans;
    locating.lastMessageStart = -1;
    locating.lastMessageEnd = -1;
    lastSkippedElement.container = -1;
    let end: number;
    if (parseMessages) {
      parsing.raw = b;
      parsing.at = -1;
      end = forEachMember(b, start, b.length, locateField, 1, parseMessagesMember);
      parsing.raw = EMPTY;
      if (parsing.at !== -1 && parsing.at === this.spans[F.messages * 2]) this.cachedMessages = parsing.messages as Message[];
      parsing.messages = undefined;
    } else end = forEachMember(b, start, b.length, locateField);
    this.lastMessageStart = locating.lastMessageStart;
    this.lastMessageEnd = locating.lastMessageEnd;
    if (skipWhitespace(b, end, b.length) !== b.length) throw new DamagedRecordError('text after the JSON object');
    if (!this.has(F.synalinks_version)) throw new DamagedRecordError('no synalinks_version: not a Synalinks trace record');
    if (!this.has(F.messages) || b[this.spans[F.messages * 2]] !== 0x5b) {
      throw new DamagedRecordError('no messages list');
    }
  }

  private has(field: number): boolean {
    return this.spans[field * 2] !== -1;
  }

  private isNull(field: number): boolean {
    const start = this.spans[field * 2];
    return start === -1 || isNullAt(this.raw, start, this.spans[field * 2 + 1]);
  }

  private text(field: number): string | null {
    const start = this.spans[field * 2];
    if (start === -1) return null;
    const end = this.spans[field * 2 + 1];
    if (this.raw[start] !== 0x22) return null;
    const repeated = REPEATED_TEXTS[field];
    if (repeated !== undefined && end - start <= REPEATED_TEXT_MAX) return repeated.decode(this.raw, start, end);
    return decodeString(this.raw, start, end);
  }

  private number(field: number): number | null {
    const start = this.spans[field * 2];
    if (start === -1 || this.isNull(field)) return null;
    const value = numberAt(this.raw, start, this.spans[field * 2 + 1]);
    return Number.isFinite(value) ? value : null;
  }

  /** Folds the field's hash, read from the bytes, to key words (`foldHexBytes`); false unless it is a string of exactly 64 plain hex digits. */
  private foldHash(field: number, count: 2 | 4, into: Uint32Array, offset: number): boolean {
    const start = this.spans[field * 2];
    if (start === -1 || this.spans[field * 2 + 1] - start !== 66 || this.raw[start] !== 0x22) return false;
    return foldHexBytes(this.raw, start + 1, count, into, offset);
  }

  /**
   * The default dedupe keys straight from the recorded hashes' bytes, as `keyOf` makes them
   * from the strings: the inputs and config hashes folded to 64 bits each (`inputs,config`),
   * or the inputs hash to 128 (`inputs`). False when a hash is not 64 plain hex digits: the
   * caller then goes through the decoded strings.
   */
  hashKeyWords(kind: 'inputs,config' | 'inputs', into: Uint32Array): boolean {
    if (kind === 'inputs') return this.foldHash(F.inputs_hash, 4, into, 0);
    return this.foldHash(F.inputs_hash, 2, into, 0) && this.foldHash(F.config_hash, 2, into, 2);
  }

  /** The value of a field parsed with JSON.parse (numbers become JS numbers). */
  value(field: Field): unknown {
    const start = this.spans[F[field] * 2];
    if (start === -1) return undefined;
    return JSON.parse(this.raw.toString('utf8', start, this.spans[F[field] * 2 + 1]));
  }

  /** Byte range of a field's value in `raw`, or null when absent. */
  span(field: Field): [number, number] | null {
    const start = this.spans[F[field] * 2];
    return start === -1 ? null : [start, this.spans[F[field] * 2 + 1]];
  }

  get status(): Status {
    return classify(this.isNull(F.outputs), this.has(F.exception));
  }
  get version(): string | null {
    return this.text(F.synalinks_version);
  }
  get callId(): string {
    return this.text(F.call_id) ?? '';
  }
  get parentCallId(): string | null {
    return this.text(F.parent_call_id);
  }
  get program(): string {
    return this.text(F.program) ?? '';
  }
  get module(): string {
    return this.text(F.module) ?? '';
  }
  /** Null too when the number is no date (a Date spans ±8.64e12 seconds): `1e300` loads, but is no time. */
  get timestamp(): number | null {
    return possibleTime(this.number(F.timestamp));
  }
  /** Null too when no duration can be so: negative, or longer than any Date spans. */
  get duration(): number | null {
    return possibleDuration(this.number(F.duration));
  }
  get inputsHash(): string {
    return this.text(F.inputs_hash) ?? '';
  }
  get configHash(): string {
    return this.text(F.config_hash) ?? '';
  }
  get exception(): string | null {
    return this.text(F.exception);
  }
  get partial(): boolean {
    return false;
  }

  /** Usage and cost of records without output are left over from an earlier call. */
  get usage(): Usage | null {
    if (this.cachedUsage === undefined) {
      const start = this.spans[F.usage * 2];
      this.cachedUsage = this.status === 'ok' && start !== -1 ? readUsage(this.raw, start, this.spans[F.usage * 2 + 1]) : null;
    }
    return this.cachedUsage;
  }
  get cost(): number | null {
    return this.status === 'ok' ? this.number(F.cost) : null;
  }

  private modelInfo(): { model: string | null; provider: string | null; maxTokens: number | null } {
    const key = this.configHash;
    let info = modelByConfigHash.get(key);
    if (info === undefined) {
      const config = this.value('config') as { config?: { model?: unknown }; model?: unknown; provider?: unknown } | null | undefined;
      // Lines traces wrote for other recorders' records carry `{model, provider}` at the top.
      const model = typeof config?.config?.model === 'string' ? config.config.model : typeof config?.model === 'string' ? config.model : null;
      // LiteLLM-style names carry the provider before the first slash.
      const provider =
        typeof config?.provider === 'string' ? config.provider : model !== null && model.includes('/') ? model.slice(0, model.indexOf('/')) : null;
      info = { model, provider, maxTokens: maxTokensOf(config) };
      if (key !== '') modelByConfigHash.set(key, info);
    }
    return info;
  }
  get model(): string | null {
    return this.modelInfo().model;
  }
  get provider(): string | null {
    return this.modelInfo().provider;
  }
  /** The LanguageModel's `max_tokens` (a default generation argument its config records), or null. */
  get requestMaxTokens(): number | null {
    return this.modelInfo().maxTokens;
  }

  /** Numbers in messages keep their recorded text (`JsonNumber`): they are training data. */
  messages(): Message[] {
    const [start, end] = this.span('messages')!;
    this.cachedMessages ??= parseJson(this.raw, start, end) as Message[];
    return this.cachedMessages;
  }

  /** Synalinks records no finish or stop reason. */
  get stopReason(): null {
    return null;
  }

  /**
   * Tells the record where its last message is (a walk over the messages found it: the
   * collapse digests), so `completion` need not walk them again.
   */
  lastMessageAt(start: number, end: number): void {
    this.lastMessageStart = start;
    this.lastMessageEnd = end;
  }

  /** The appended completion, parsed alone: the quality stages read it for every record. */
  completion(): Message | null {
    if (this.status !== 'ok') return null;
    if (this.cachedMessages !== undefined) return this.cachedMessages.at(-1) ?? null;
    if (this.lastMessageStart !== -1) return parseJson(this.raw, this.lastMessageStart, this.lastMessageEnd) as Message;
    const [start, end] = this.span('messages')!;
    const last = [-1, -1];
    forEachElement(this.raw, start, end, (elementStart, elementEnd) => {
      last[0] = elementStart;
      last[1] = elementEnd;
    });
    return last[0] === -1 ? null : (parseJson(this.raw, last[0], last[1]) as Message);
  }

  /** Number of elements in the messages list, without building them. */
  messageCount(): number {
    let count = 0;
    const [start, end] = this.span('messages')!;
    forEachElement(this.raw, start, end, () => count++);
    return count;
  }

  /** Canonical bytes of the recorded inputs (messages without the completion when there is one). */
  writeCanonicalInputs(out: ByteSink): void {
    const [start, end] = this.span('messages')!;
    writeArray(this.raw, start, end, out, !this.isNull(F.outputs));
  }

  /** Recomputes both hashes from the recorded values, byte for byte as Synalinks does. */
  recomputeHashes(sink: ByteSink): { inputsHash: string; configHash: string | null } {
    sink.reset();
    this.writeCanonicalInputs(sink);
    const inputsHash = sha256Hex(sink.view());
    const config = this.span('config');
    let configHash: string | null = null;
    if (config !== null) {
      sink.reset();
      writeCanonical(this.raw, config[0], config[1], sink);
      configHash = sha256Hex(sink.view());
    }
    return { inputsHash, configHash };
  }
}
