/**
 * A record rebuilt from another recorder's files (Ask, klieo): plain values in, the same
 * TraceRecord out. Hashes use Synalinks' rule over the rebuilt values (canonical JSON of
 * the input messages; of a config made of what the recorder knows: model and provider).
 *
 * `raw` is the record as one Synalinks-shaped JSON line (the key order Synalinks writes,
 * then `source` and, when set, `partial`), so a copy of it reads back as a Synalinks
 * record with the same hashes, and `traces verify` accepts it.
 */
import { createHash } from 'node:crypto';
import { canonicalValueHash } from '../canonical/canonical.js';
import { writeJson } from '../canonical/json-value.js';
import { maxTokensOf, type Message, type SourceKind, type SourceRef, type Status, type TraceRecord, type Usage } from '../record.js';
import { possibleDuration, possibleTime } from '../time.js';

export interface RebuiltFields {
  source: Exclude<SourceKind, 'synalinks'>;
  ref: SourceRef;
  callId: string;
  parentCallId: string | null;
  program: string;
  module: string;
  timestamp: number | null;
  duration: number | null;
  usage: Usage | null;
  cost: number | null;
  status: Status;
  model: string | null;
  provider: string | null;
  /** Input messages; the completion is given apart and appended when status is ok. */
  inputs: Message[];
  completion: Message | null;
  exception: string | null;
  partial: boolean;
  /** Why this record can never be a training example (e.g. a klieo step without its LLM I/O). */
  notExportable?: string | null;
  /** The recorded finish or stop reason of the call, when the recorder kept one. */
  stopReason?: string | null;
  /** How the stop reason was inferred where the recorder kept none (an OTLP answer whose output tokens reached the max_tokens asked), or null. */
  stopReasonInferred?: string | null;
  /** What read the record out of the recorder's file (the OTLP extractors that mapped the span), shown as `mapped_by`. */
  mappedBy?: readonly string[] | null;
  /** The config hashed as config_hash, when the recorder knows more than model and provider (docs/sources.md). */
  config?: Record<string, unknown>;
  /** Which recorded value looks cut at a length limit, or null (the truncated stage reads it). */
  cutValue?: string | null;
  /** The tool definitions offered to the model, as OpenAI function tools, when the recorder kept them. */
  offeredTools?: readonly unknown[] | null;
  /** The recorder's version, when its files carry one (a coding agent's). */
  version?: string | null;
}

/** The config hashed as config_hash for records of other recorders. */
export function sourceConfig(model: string | null, provider: string | null): { model: string | null; provider: string | null } {
  return { model, provider };
}

/** A uuid-shaped id derived from `parts`: stable across reads, unique per call. */
export function derivedUuid(...parts: string[]): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part).update('\0');
  const hex = hash.digest('hex');
  const variant = ((parseInt(hex[16], 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export class RebuiltRecord implements TraceRecord {
  readonly source: Exclude<SourceKind, 'synalinks'>;
  readonly ref: SourceRef;
  readonly callId: string;
  readonly parentCallId: string | null;
  readonly program: string;
  readonly module: string;
  readonly timestamp: number | null;
  readonly duration: number | null;
  readonly usage: Usage | null;
  readonly cost: number | null;
  readonly status: Status;
  readonly model: string | null;
  readonly provider: string | null;
  readonly version: string | null;
  readonly inputsHash: string;
  readonly configHash: string;
  readonly exception: string | null;
  readonly partial: boolean;
  readonly notExportable: string | null;
  readonly stopReason: string | null;
  readonly cutValue: string | null;
  readonly stopReasonInferred: string | null;
  readonly mappedBy: readonly string[] | null;
  readonly offeredTools: readonly unknown[] | null;
  readonly requestMaxTokens: number | null;
  private readonly all: Message[];
  private readonly config: Record<string, unknown>;
  private rawLine: Buffer | null = null;
  private readonly outputs: Message | null;

  constructor(fields: RebuiltFields) {
    this.source = fields.source;
    this.ref = fields.ref;
    this.callId = fields.callId;
    this.parentCallId = fields.parentCallId;
    this.program = fields.program;
    this.module = fields.module;
    // Every recorder's times pass the range checks Synalinks records do: an impossible one is unknown.
    this.timestamp = possibleTime(fields.timestamp);
    this.duration = possibleDuration(fields.duration);
    this.status = fields.status;
    // The adapters give only accounting the recorder kept for this very call (never stale).
    this.usage = fields.usage;
    this.cost = fields.cost;
    this.model = fields.model;
    this.provider = fields.provider;
    this.exception = fields.status === 'exception' ? (fields.exception ?? 'failed') : null;
    this.partial = fields.partial;
    this.notExportable = fields.notExportable ?? null;
    this.stopReason = fields.stopReason ?? null;
    this.cutValue = fields.cutValue ?? null;
    this.stopReasonInferred = fields.stopReasonInferred ?? null;
    this.mappedBy = fields.mappedBy ?? null;
    this.offeredTools = fields.offeredTools ?? null;
    this.version = fields.version ?? null;
    const outputs = fields.status === 'ok' ? fields.completion : null;
    this.outputs = outputs;
    this.all = outputs !== null ? [...fields.inputs, outputs] : fields.inputs;
    this.inputsHash = canonicalValueHash(fields.inputs);
    const config = fields.config ?? sourceConfig(fields.model, fields.provider);
    this.configHash = canonicalValueHash(config);
    this.config = config;
    this.requestMaxTokens = maxTokensOf(config);
  }

  /**
   * The record as one Synalinks-shaped line, made when first asked for: reading, counting and
   * hashing need none of it, and writing it is most of what a large message list costs.
   */
  get raw(): Buffer {
    if (this.rawLine !== null) return this.rawLine;
    const outputs = this.outputs;
    const line: Record<string, unknown> = {
      synalinks_version: null,
      call_id: this.callId,
      parent_call_id: this.parentCallId,
      program: this.program,
      module: this.module,
      timestamp: this.timestamp,
      duration: this.duration,
      usage: this.usage,
      cost: this.cost,
      messages: this.all,
      inputs_hash: this.inputsHash,
      outputs,
      config: this.config,
      config_hash: this.configHash,
    };
    if (this.exception !== null) line.exception = this.exception;
    line.source = this.source;
    if (this.partial) line.partial = true;
    if (this.notExportable !== null) line.not_exportable = this.notExportable;
    if (this.cutValue !== null) line.cut_value = this.cutValue;
    if (this.stopReasonInferred !== null) line.stop_reason_inferred = this.stopReasonInferred;
    if (this.mappedBy !== null) line.mapped_by = this.mappedBy;
    this.rawLine = Buffer.from(writeJson(line), 'utf8');
    return this.rawLine;
  }

  messages(): Message[] {
    return this.all;
  }

  completion(): Message | null {
    return this.outputs;
  }
}
