/**
 * OTLP trace files (OTLP/JSON `ExportTraceServiceRequest`s): the Collector's file exporter
 * writes one per line (`.jsonl`, or `.json`), an OTLP/HTTP body or a saved export is one
 * document, pretty-printed or not. Lines are read with the line reader and parsed strictly
 * (a line orjson refuses is a damaged line, the rest of the file is still read); a document
 * is streamed one `resourceSpans` element at a time. Neither is ever held whole.
 *
 * A file read by lines is cut into work shares at line starts, as Synalinks files are.
 *
 * Each LLM-call span (chain.ts) is one record; `ref.line` is, in a file read by lines, the span's
 * number in the file (span-places.ts: unique, growing with the file), in a document its ordinal
 * among the calls.
 * Spans holding no content (capture off) are records that can never be exported
 * (`no_content`). The same call recorded twice, by two instrumentations wrapping one client
 * call (one span the other's parent, both LLM calls with the same input messages), is kept
 * once: the span with more in it (content, then usage, then finish reason), the first one
 * read on a tie; looked for within a line, or in a window of the last spans of a document.
 * Read by lines, the two spans may also have gone out in two export batches: a span whose
 * twin is in the line before (its records resolved within that line alone) and holds as much
 * is not kept either; a share starting mid-file reads the line before it for that
 * (line-before.ts), so what a line yields depends on it and the line before only.
 */
import { parseJsonText } from '../../canonical/json-value.js';
import { JsonSyntaxError, withEncodingHint } from '../../canonical/scan.js';
import type { Message, Status, TraceRecord } from '../../record.js';
import type { TraceFile } from '../trace-file.js';
import { JsonStreamError, JsonTooLongError, streamJson } from '../json-stream.js';
import { isObject, str, type Json } from '../json-values.js';
import { lineTooLongReason, readLineBatches, type ByteRange } from '../lines.js';
import { byLines } from './by-lines.js';
import { lineBefore } from './line-before.js';
import { rememberPlaces, spanPlaces, spanPlacesBefore, spanPlacesInFile } from './span-places.js';
import { damageReason } from '../damage.js';
import { RebuiltRecord } from '../rebuilt-record.js';
import type { SourceBatch } from '../source.js';
import { callOfSpan, type SpanCall } from './chain.js';
import { attributeMap, hexId, nanosToSeconds } from './values.js';
import { JoinIndex, LOG_RECORDS } from './join-index.js';
import { MASTRA_SPANS, seedMastra } from './extractors/mastra.js';
import { logEvents } from './log-events.js';
import { SpanBag } from './bag.js';

/** The source's kind, as its index.ts registers it. */
const KIND = 'otlp';

/** Why a span read as an LLM call is not a training example. */
export const NO_CONTENT = 'no_content';
export const DOUBLE_INSTRUMENTED = 'double_instrumented';
export const CUT_VALUE = 'cut_value';
export const UNREADABLE_INPUT = 'unreadable_input';

/** Sampling parameters kept in the config, by the names each dialect gives them. */
const PARAM_NAMES: Record<string, string> = {
  temperature: 'temperature',
  top_p: 'top_p',
  topP: 'top_p',
  top_k: 'top_k',
  topK: 'top_k',
  max_tokens: 'max_tokens',
  max_completion_tokens: 'max_tokens',
  maxTokens: 'max_tokens',
  maxOutputTokens: 'max_tokens',
  max_output_tokens: 'max_tokens',
  frequency_penalty: 'frequency_penalty',
  frequencyPenalty: 'frequency_penalty',
  presence_penalty: 'presence_penalty',
  presencePenalty: 'presence_penalty',
  stop: 'stop_sequences',
  stop_sequences: 'stop_sequences',
  stopSequences: 'stop_sequences',
  seed: 'seed',
};

/** The config hashed as config_hash: the model, the sampling parameters under one name each, the tools offered as OpenAI function tools. */
export function otlpConfig(call: Pick<SpanCall, 'model' | 'params' | 'tools'>): { model: string | null; params: Record<string, unknown>; tools: unknown[] | null } {
  const params: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(call.params)) {
    const canonical = PARAM_NAMES[name];
    if (canonical !== undefined && value !== null && value !== undefined && !(canonical in params)) params[canonical] = value;
  }
  return { model: call.model, params, tools: call.tools === null ? null : call.tools.map(openAiTool) };
}

/** A tool definition as OpenAI writes it: `{type: 'function', function: {name, description, parameters}}`. */
function openAiTool(tool: unknown): unknown {
  if (!isObject(tool)) return tool;
  if (isObject(tool.function)) return { type: 'function', function: tool.function };
  const fn: Json = {};
  if (typeof tool.name === 'string') fn.name = tool.name;
  if (tool.description !== undefined) fn.description = tool.description;
  const parameters = tool.parameters ?? tool.inputSchema ?? tool.input_schema;
  if (parameters !== undefined) fn.parameters = parameters;
  return { type: 'function', function: fn };
}

function richness(call: SpanCall): number {
  return (call.inputs !== null && call.completion !== null ? 4 : call.inputs !== null || call.completion !== null ? 2 : 0) + (call.usage !== null ? 1 : 0) + (call.finishReason !== null ? 0.5 : 0);
}

interface Kept {
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  inputsHash: string;
  model: string | null;
  richness: number;
  /** Where its record sits while its batch is not yet handed out; null after. */
  pending: { batch: SourceBatch; index: number } | null;
}

class OtlpReader {
  private ordinal = 0;
  /**
   * Reading by lines: the ordinal of the line's first span less one, the spans of the line met so
   * far, and how many places (span-places.ts) the line holds: at least as many as its spans.
   */
  private line: { base: number; index: number; places: number } | null = null;
  /** The LLM-call spans read last (at most 2 × TWIN_WINDOW), oldest first. */
  private window: Kept[] = [];
  /** Those spans by `trace:span`, and by their parent's `trace:span`. */
  private spans = new Map<string, Kept>();
  private children = new Map<string, Kept[]>();
  /** Reading by lines: the kept LLM-call spans of the line before, as that line alone resolved them. */
  private before: { spans: Map<string, Kept>; children: Map<string, Kept[]> } | null = null;
  private readonly skipped: Record<string, number> = {};
  private pending: Kept[] = [];

  constructor(
    private readonly file: TraceFile,
    /** The records of the input set a span's content may lie in (join-index.ts). */
    private readonly joins: Joins = NO_JOINS,
  ) {}

  batch(): SourceBatch {
    for (const kept of this.pending) kept.pending = null;
    this.pending = [];
    return { records: [], damaged: [], runs: [] };
  }

  finish(batch: SourceBatch): SourceBatch {
    batch.skippedCalls = { ...this.skipped };
    return batch;
  }

  /**
   * A new line: its spans are numbered from `base + 1`. Twins are looked for within the line,
   * then in the line before as it resolved them alone (`endLine`), so what a line yields never
   * depends on where a work share starts.
   */
  startLine(base: number, places: number): void {
    if (this.line !== null) this.before = { spans: this.spans, children: this.children };
    this.line = { base, index: 0, places };
    this.window = [];
    this.spans = new Map();
    this.children = new Map();
  }

  /** The line before the first one read (a share starting mid-file), read by a reader of its own: null when there is none. */
  lineBefore(reader: OtlpReader | null): void {
    this.before = reader === null ? null : { spans: reader.spans, children: reader.children };
  }

  /**
   * The line is read: a kept span whose twin in the line before holds as much is not kept
   * (the line before kept that one; the two spans went out in two export batches).
   */
  endLine(batch: SourceBatch): void {
    const before = this.before;
    if (before === null || before.spans.size === 0) return;
    const dropped = new Set<number>();
    for (const kept of this.window) {
      if (kept.pending === null || kept.pending.batch !== batch) continue;
      const twin = twinIn(before.spans, before.children, kept);
      if (twin !== null && twin.richness >= kept.richness) dropped.add(kept.pending.index);
    }
    if (dropped.size === 0) return;
    this.skipped[DOUBLE_INSTRUMENTED] = (this.skipped[DOUBLE_INSTRUMENTED] ?? 0) + dropped.size;
    // The line's records are the batch's last: none after them has an index to keep.
    const records = batch.records;
    let kept = 0;
    for (let i = 0; i < records.length; i++) if (!dropped.has(i)) records[kept++] = records[i];
    records.length = kept;
    for (const span of this.window) span.pending = null;
  }

  damaged(batch: SourceBatch, line: number, offset: number, reason: string): void {
    batch.damaged.push({ file: this.file.display, line, offset, reason });
  }

  /** One ExportTraceServiceRequest (or anything holding `resourceSpans`). */
  request(doc: unknown, batch: SourceBatch, line: number, offset: number): void {
    if (!isObject(doc)) {
      this.damaged(batch, line, offset, 'not a JSON object: not an OTLP ExportTraceServiceRequest');
      return;
    }
    const list = doc.resourceSpans ?? doc.resource_spans;
    // Log records among the spans (the Collector writing both to one file) are read with their spans, from the log index.
    if (!Array.isArray(list) && (Array.isArray(doc.resourceLogs) || Array.isArray(doc.resource_logs))) return;
    if (!Array.isArray(list)) {
      this.damaged(batch, line, offset, 'no resourceSpans list: not an OTLP ExportTraceServiceRequest');
      return;
    }
    for (const rs of list) this.resourceSpans(rs, batch);
  }

  resourceSpans(rs: unknown, batch: SourceBatch): void {
    if (!isObject(rs)) return;
    const resource = isObject(rs.resource) ? attributeMap(rs.resource.attributes) : attributeMap([]);
    const service = resource.str('service.name') ?? '';
    const scopes = rs.scopeSpans ?? rs.scope_spans ?? rs.instrumentationLibrarySpans;
    if (!Array.isArray(scopes)) return;
    for (const ss of scopes) {
      if (!isObject(ss) || !Array.isArray(ss.spans)) continue;
      for (const span of ss.spans) {
        if (!isObject(span)) continue;
        let ordinal = 0;
        if (this.line !== null) {
          // Every span of the line takes a number, a call or not, so a number is its place in the file.
          if (this.line.index >= this.line.places) continue;
          ordinal = this.line.base + ++this.line.index;
        }
        this.span(span, service, batch, ordinal);
      }
    }
  }

  private span(span: Json, service: string, batch: SourceBatch, ordinal: number): void {
    const traceId = hexId(span.traceId ?? span.trace_id) ?? '';
    const spanId = hexId(span.spanId ?? span.span_id) ?? '';
    const attrs = attributeMap(span.attributes);
    const bag = new SpanBag(span, attrs);
    // Content the span's emitter keeps in other records, read as the span's own (bag.ts).
    if (this.joins.logs !== null) bag.seedEvents(logEvents(this.joins.logs.recordsOf(traceId, spanId)));
    if (this.joins.mastra !== null) seedMastra(bag, traceId, hexId(span.parentSpanId ?? span.parent_span_id), this.joins.mastra);
    const call = callOfSpan(span, attrs, bag);
    if (call === null) return;
    const parentSpanId = hexId(span.parentSpanId ?? span.parent_span_id);
    const start = nanosToSeconds(span.startTimeUnixNano ?? span.start_time_unix_nano);
    const end = nanosToSeconds(span.endTimeUnixNano ?? span.end_time_unix_nano);
    const status: Status = call.error !== null ? 'exception' : call.completion !== null ? 'ok' : 'no_output';
    const noContent = call.inputs === null && call.completion === null;
    const dropped = Number((span.droppedAttributesCount ?? span.dropped_attributes_count ?? 0).valueOf());
    call.cut ??= dropped > 0 ? `${dropped} attribute(s) dropped by the SDK's attribute count limit` : null;
    const cut = call.cut;
    const inputs: Message[] = call.inputs ?? [];
    const lacking =
      call.cut !== null && (call.inputs === null || call.completion === null)
        ? `${CUT_VALUE}: ${call.cut}, so the span's messages cannot be read whole`
        : call.unreadable !== null
          ? `${UNREADABLE_INPUT}: ${call.unreadable}, so the call's input is not known`
          : noContent
          ? `${NO_CONTENT}: the span (${call.dialect}) holds no message content: content capture was off in its instrumentation, or it records none of this API`
          : call.inputs === null && status === 'ok'
            ? `${NO_CONTENT}: the span (${call.dialect}) holds the answer but not the input messages`
            : null;
    const config = otlpConfig(call);
    const record = new RebuiltRecord({
      source: KIND,
      ref: { file: this.file.display, line: 0, offset: 0 },
      callId: call.ownIds?.callId ?? `${traceId}:${spanId}`,
      parentCallId: call.ownIds !== null && call.ownIds !== undefined ? call.ownIds.parentCallId : parentSpanId !== null ? `${traceId}:${parentSpanId}` : null,
      program: service,
      module: str(span.name) ?? '',
      timestamp: start,
      duration: start !== null && end !== null && end >= start ? Math.round((end - start) * 1e6) / 1e6 : null,
      usage: call.usage,
      cost: call.cost ?? null,
      status,
      model: call.model,
      provider: call.provider,
      inputs,
      completion: call.completion,
      exception: call.error,
      // A tool result that answers no recorded tool call (OpenLLMetry 0.22 kept neither the calls nor their ids).
      partial: inputs.some((m) => m.role === 'tool' && (m.tool_call_id === undefined || m.tool_call_id === '')),
      notExportable: lacking === null ? null : `${lacking} (mapped by ${call.mappedBy.length > 0 ? call.mappedBy.join(', ') : call.dialect})`,
      stopReason: call.finishReason,
      stopReasonInferred: call.finishInferred,
      mappedBy: call.mappedBy,
      config,
      cutValue: cut,
      // The tools offered, as the config holds them: exports write these definitions (targets/tools.ts).
      offeredTools: config.tools,
    });
    const kept: Kept = { traceId, spanId, parentSpanId, inputsHash: noContent ? 'none' : record.inputsHash, model: call.model, richness: richness(call), pending: null };
    const twin = this.twinOf(kept);
    // A richer twin whose record was already handed out is kept too: the one with content is never the one dropped.
    if (twin !== null && (twin.pending !== null || twin.richness >= kept.richness)) {
      this.skipped[DOUBLE_INSTRUMENTED] = (this.skipped[DOUBLE_INSTRUMENTED] ?? 0) + 1;
      const pending = twin.pending;
      if (pending === null || twin.richness >= kept.richness) return;
      // The twin is still in this batch and holds less: this span's record takes its place and ordinal.
      const old = pending.batch.records[pending.index];
      pending.batch.records[pending.index] = withOrdinal(record, old.ref.line);
      twin.richness = kept.richness;
      return;
    }
    const line = ordinal > 0 ? ordinal : ++this.ordinal;
    kept.pending = { batch, index: batch.records.length };
    this.pending.push(kept);
    batch.records.push(withOrdinal(record, line));
    this.remember(kept);
  }

  private forget(old: Kept[]): void {
    for (const kept of old) {
      this.spans.delete(`${kept.traceId}:${kept.spanId}`);
      if (kept.parentSpanId !== null) this.children.delete(`${kept.traceId}:${kept.parentSpanId}`);
    }
  }

  /** An LLM-call span already read that records the same call as this one (`twinIn`). */
  private twinOf(kept: Kept): Kept | null {
    return twinIn(this.spans, this.children, kept);
  }

  private remember(kept: Kept): void {
    // Twins are exported together (one call, two spans ending at once): the window of spans
    // looked in is bounded, so memory stays flat however long the file.
    this.window.push(kept);
    if (this.window.length > TWIN_WINDOW * 2) this.forget(this.window.splice(0, TWIN_WINDOW));
    this.spans.set(`${kept.traceId}:${kept.spanId}`, kept);
    if (kept.parentSpanId !== null) {
      const key = `${kept.traceId}:${kept.parentSpanId}`;
      const list = this.children.get(key);
      if (list === undefined) this.children.set(key, [kept]);
      else list.push(kept);
    }
  }
}

/**
 * A span of `spans` that is this one's parent or child with the same inputs, or with the same
 * model where one of them holds no content (an SDK's own span under an instrumentation's, as the
 * Anthropic SDK writes): the same call, recorded twice.
 */
function twinIn(spans: ReadonlyMap<string, Kept>, children: ReadonlyMap<string, Kept[]>, kept: Kept): Kept | null {
  const same = (other: Kept): boolean =>
    other.inputsHash === kept.inputsHash || ((other.inputsHash === 'none' || kept.inputsHash === 'none') && (other.model === null || kept.model === null || other.model === kept.model));
  if (kept.parentSpanId !== null) {
    const parent = spans.get(`${kept.traceId}:${kept.parentSpanId}`);
    if (parent !== undefined && same(parent)) return parent;
  }
  for (const child of children.get(`${kept.traceId}:${kept.spanId}`) ?? []) if (same(child)) return child;
  return null;
}

/**
 * The kept LLM-call spans of the line before `offset`, as reading it in order resolves them:
 * a reader that has read just that line, or null when there is no line before.
 */
async function readerOfLineBefore(file: TraceFile, offset: number, joins: Joins): Promise<OtlpReader | null> {
  const line = offset > 0 ? await lineBefore(file.path, offset) : null;
  if (line === null) return null;
  const reader = new OtlpReader(file, joins);
  const batch = reader.batch();
  reader.startLine(0, line.tooLong ? 0 : spanPlaces(line.bytes, 0, line.bytes.length));
  if (line.tooLong) return reader;
  let doc: unknown;
  try {
    doc = parseJsonText(line.bytes);
  } catch (error) {
    if (!(error instanceof JsonSyntaxError)) throw error;
    return reader;
  }
  reader.request(doc, batch, line.number, line.offset);
  return reader;
}

/** The indexes of the records of the input set a span's content may lie in, by kind; null where it holds none. */
interface Joins {
  logs: JoinIndex | null;
  mastra: JoinIndex | null;
}

const NO_JOINS: Joins = { logs: null, mastra: null };

async function joinsOf(file: TraceFile): Promise<Joins> {
  const of = async (reader: typeof LOG_RECORDS): Promise<JoinIndex | null> => {
    const files = file.companions?.[reader.name];
    if (files === undefined || files.length === 0) return null;
    const index = await JoinIndex.of(reader, files);
    return index.empty ? null : index;
  };
  return { logs: await of(LOG_RECORDS), mastra: await of(MASTRA_SPANS) };
}

/** How many of the LLM-call spans read last a twin is looked for among (at least). */
const TWIN_WINDOW = 8192;

/** The record with its ordinal in the file as `ref.line`. */
function withOrdinal(record: RebuiltRecord, line: number): TraceRecord {
  (record.ref as { line: number }).line = line;
  return record;
}

export async function* readOtlpFile(file: TraceFile, range?: ByteRange): AsyncGenerator<SourceBatch> {
  const joins = await joinsOf(file);
  const reader = new OtlpReader(file, joins);
  if (byLines(file)) {
    let last: SourceBatch | null = null;
    let placesBefore: number | null = null;
    for await (const lines of readLineBatches(file.path, { range })) {
      if (last !== null) yield last;
      const batch = reader.batch();
      batch.bytes = 0;
      for (const line of lines) {
        batch.bytes += line.length + 1;
        // The first line read: a share starting mid-file looks back at the line before it (twins across two lines).
        if (placesBefore === null) reader.lineBefore(await readerOfLineBefore(file, line.offset, joins));
        placesBefore ??= spanPlacesBefore(file.path, line.offset);
        const places = line.tooLong ? spanPlacesInFile(file.path, line.offset, line.offset + line.length) : spanPlaces(line.bytes, 0, line.bytes.length);
        reader.startLine(placesBefore, places);
        placesBefore += places;
        if (line.tooLong) {
          reader.damaged(batch, line.number, line.offset, damageReason(lineTooLongReason(line.length), line.terminated));
          continue;
        }
        let doc: unknown;
        try {
          doc = parseJsonText(line.bytes);
        } catch (error) {
          if (!(error instanceof JsonSyntaxError)) throw error;
          reader.damaged(batch, line.number, line.offset, withEncodingHint(damageReason(error, line.terminated), line.bytes));
          continue;
        }
        reader.request(doc, batch, line.number, line.offset);
        reader.endLine(batch);
      }
      if (placesBefore !== null && lines.length > 0) rememberPlaces(file.path, lines[lines.length - 1].offset + lines[lines.length - 1].length + 1, placesBefore);
      last = batch;
    }
    yield reader.finish(last ?? reader.batch());
    return;
  }
  let batch = reader.batch();
  let documents = 0;
  let sawSpans = false;
  try {
    for await (const events of streamJson(file.path, { multiple: true, streamed: new Set(['resourceSpans', 'resource_spans', 'resourceLogs', 'resource_logs']) })) {
      for (const event of events) {
        if (event.kind === 'element' && (event.key === 'resourceLogs' || event.key === 'resource_logs')) sawSpans = true;
        else if (event.kind === 'element') {
          sawSpans = true;
          reader.resourceSpans(event.value, batch);
        } else if (event.kind === 'member' && (event.key === 'resourceSpans' || event.key === 'resource_spans' || event.key === 'resourceLogs' || event.key === 'resource_logs')) sawSpans = true;
        else if (event.kind === 'document') {
          // A list of requests (as some tools save them): each element is one.
          documents++;
          if (Array.isArray(event.value)) event.value.forEach((request, i) => reader.request(request, batch, documents, i));
          else reader.damaged(batch, documents, 0, 'not a JSON object: not an OTLP ExportTraceServiceRequest');
        }
        else if (event.kind === 'end') {
          documents++;
          if (!sawSpans) reader.damaged(batch, documents, 0, 'no resourceSpans list: not an OTLP ExportTraceServiceRequest');
          sawSpans = false;
        }
      }
      yield batch;
      batch = reader.batch();
    }
  } catch (error) {
    if (!(error instanceof JsonStreamError)) throw error;
    reader.damaged(batch, documents + 1, 0, `${error instanceof JsonTooLongError ? 'unreadable' : 'broken JSON'} after ${documents} request(s): ${error.message}`);
  }
  yield reader.finish(batch);
}

