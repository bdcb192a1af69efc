/**
 * A Synalinks trace line as a record. The constructor only locates the top-level fields
 * (validating the JSON on the way); each field is decoded when first asked for, so
 * `stats` never parses the messages and `verify` never builds them as objects.
 */
import { ByteSink } from '../canonical/byte-sink.js';
import { sha256Hex, writeArray, writeCanonical } from '../canonical/canonical.js';
import { parseJson } from '../canonical/json-value.js';
import { checkTextRules, decodeString, forEachElement, forEachMember, KeyMatcher, skipWhitespace } from '../canonical/scan.js';
import { classify, type Message, type SourceRef, type Status, type TraceRecord, type Usage } from '../record.js';

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

/** The farthest time from 1970 a JavaScript Date can hold, in seconds. */
const MAX_EPOCH_SECONDS = 8.64e12;

const NULL_BYTES = Buffer.from('null');

function isNullAt(b: Buffer, start: number, end: number): boolean {
  return end - start === 4 && b.compare(NULL_BYTES, 0, 4, start, end) === 0;
}

/** Config objects repeat across thousands of records: parse each distinct one once. */
const modelByConfigHash = new Map<string, { model: string | null; provider: string | null }>();

export class SynalinksRecord implements TraceRecord {
  readonly source = 'synalinks' as const;
  /** Start and end of each known field's value in `raw`, -1 when absent. */
  private readonly spans = new Int32Array(FIELDS.length * 2).fill(-1);
  private cachedMessages: Message[] | undefined;
  private cachedUsage: Usage | null | undefined;

  constructor(
    readonly raw: Buffer,
    readonly ref: SourceRef,
  ) {
    const b = raw;
    // The one decision of what is damaged, shared by every command: what orjson would not load
    // (this check and the validating walk below), or not a Synalinks record.
    checkTextRules(b);
    const start = skipWhitespace(b, 0, b.length);
    if (b[start] !== 0x7b) throw new DamagedRecordError('not a JSON object');
    const end = forEachMember(b, start, b.length, (keyStart, keyEnd, valueStart, valueEnd) => {
      const index = FIELD_MATCHER.match(b, keyStart, keyEnd);
      if (index !== -1) {
        this.spans[index * 2] = valueStart;
        this.spans[index * 2 + 1] = valueEnd;
      }
    });
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
    return decodeString(this.raw, start, end);
  }

  private number(field: number): number | null {
    const start = this.spans[field * 2];
    if (start === -1 || this.isNull(field)) return null;
    const value = Number(this.raw.toString('latin1', start, this.spans[field * 2 + 1]));
    return Number.isFinite(value) ? value : null;
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
    const seconds = this.number(F.timestamp);
    return seconds !== null && Math.abs(seconds) <= MAX_EPOCH_SECONDS ? seconds : null;
  }
  get duration(): number | null {
    return this.number(F.duration);
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
      this.cachedUsage = this.status === 'ok' && !this.isNull(F.usage) ? (this.value('usage') as Usage) : null;
    }
    return this.cachedUsage;
  }
  get cost(): number | null {
    return this.status === 'ok' ? this.number(F.cost) : null;
  }

  private modelInfo(): { model: string | null; provider: string | null } {
    const key = this.configHash;
    let info = modelByConfigHash.get(key);
    if (info === undefined) {
      const config = this.value('config') as { config?: { model?: unknown }; model?: unknown; provider?: unknown } | null | undefined;
      // Lines traces wrote for other recorders' records carry `{model, provider}` at the top.
      const model = typeof config?.config?.model === 'string' ? config.config.model : typeof config?.model === 'string' ? config.model : null;
      // LiteLLM-style names carry the provider before the first slash.
      const provider =
        typeof config?.provider === 'string' ? config.provider : model !== null && model.includes('/') ? model.slice(0, model.indexOf('/')) : null;
      info = { model, provider };
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

  /** Numbers in messages keep their recorded text (`JsonNumber`): they are training data. */
  messages(): Message[] {
    const [start, end] = this.span('messages')!;
    this.cachedMessages ??= parseJson(this.raw, start, end) as Message[];
    return this.cachedMessages;
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
