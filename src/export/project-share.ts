/**
 * The per-record half of an export, over one share of the files (a worker thread for big
 * trees): project each kept record for the target, attach tools, count tokens, choose
 * its split, and inspect it as the validator will. Only the line and a summary travel back.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import type { WorkShare } from '../parallel/units.js';
import { groupFraction, groupKey } from '../pipeline/split.js';
import type { TraceFile } from '../sources/discover.js';
import { isSynalinks, readSelectedRecords, readSynalinksLinesAt } from '../sources/read.js';
import type { Message, TraceRecord } from '../record.js';
import {
  getTarget,
  inspectExample,
  loadMeter,
  lastTurnWeighted,
  recordedDefinitions,
  ToolInference,
  toolsFor,
  type ExampleMeasure,
  type ExampleMeter,
  type Inspection,
  type ReasoningMode,
  type ExampleTools,
  type Target,
  type ToolDefinition,
} from '../targets/index.js';
import type { TokenizerSpec, TrainOn } from '../targets/meter.js';
import { TOOL_CALLS_KEY, toolCallFacts } from '../tool-calls.js';
import { holdsReasoning } from '../targets/messages.js';

/** What `verdictOnly` stands in for a count it does not make: no limit or finding reads it. */
const UNMEASURED: ExampleMeasure = { tokens: { total: 0, assistant: 0 }, findings: [] };
import { ByteSink } from '../canonical/byte-sink.js';
import { sha256 } from '../canonical/canonical.js';
import { jsonLine, lastWrittenDepth, writeRecordJson } from '../canonical/json-value.js';
import { checkJsonText, JsonSyntaxError, MAX_DEPTH, TextTooLongError, unlessTooLong } from '../canonical/scan.js';
import { safeSegment } from '../output/names.js';
import { letEventLoopRun, turnDue } from '../cooperate.js';
import { redactValue } from '../privacy/index.js';
import { foundBy, holdsSecret, scrubbedName, type ScrubSettings } from '../privacy/scrub.js';
import { possibleTime } from '../time.js';
import type { RecordVerdict } from '../pipeline/candidate.js';

export interface ProjectionSettings {
  /** Redaction of secrets and personal data, or null for `--scrub none`. */
  scrub: ScrubSettings | null;
  format: string;
  /** The target's own options' values (`Target.settings`), when it has any. */
  targetSettings: Readonly<Record<string, string>> | undefined;
  reasoning: ReasoningMode;
  supplied: ToolDefinition[];
  inferred: ToolDefinition[];
  /** Tool names every line carries (NeMo Customizer reads one schema per file), or null. */
  everyLineTools: string[] | null;
  maxExampleTokens: number | null;
  seed: number;
  validationFraction: number;
  tokenizer: TokenizerSpec;
  /** --max-seq-length: longer examples (by the model's own count) are dropped as too_long. */
  maxSeqLength: number | null;
  trainOn: TrainOn;
  groupByModule: boolean;
  /**
   * The verdict, digest and group only (`traces index --format`, the plan's verdict): no tokens
   * are counted and the example is not inspected, which no verdict needs without a token limit
   * or a model folder.
   */
  verdictOnly?: boolean;
  /**
   * Set for the plan's verdict (`targetVerdict`, which makes no digest, group or origin): the
   * messages are redacted only where a verdict reads them redacted (`judge`).
   */
  verdictAlone?: boolean;
  /**
   * The definitions are inferred from the run's tool calls (no --inferred-tools file): set on
   * the settings the plan's verdict is made with, which the record's own calls stand in for
   * (`alone`), and carried to the projection as `judged`.
   */
  inferredFromCalls?: boolean;
  /**
   * What the plan's verdict took the record's tools from (`inferred`, `everyLineTools` before
   * the run's calls were known): a kept record the run's definitions make the target refuse is
   * written with these instead, as the plan judged it, rather than dropped after the plan.
   */
  judged?: Pick<ProjectionSettings, 'inferred' | 'everyLineTools'> | null;
}

export type ProjectedItem =
  | { kind: 'drop'; call_id: string; file: string; line: number; reason: string; detail?: string; fix?: string }
  | {
      kind: 'example';
      /** Length of the example's line in the share's `lines`, which holds them back to back. */
      bytes: number;
      call_id: string;
      file: string;
      line: number;
      /** The split group's fraction (groupFraction of the first user message): the writer chooses the side. */
      fraction: number;
      /** sha256 of the folder and the line (of the line alone without --group-by), 4 words: identical examples of one dataset share it. */
      digest: number[];
      folder: string;
      inspection: Inspection;
      inferredTools: string[];
      /** Tools whose definition is the record's own (recorded with the call). */
      recordedTools: string[];
      /** Assistant turns whose recorded reasoning the target wrote, dropped or inlined (the summary counts them). */
      reasoningTurns: number;
      /** The call_id when the example was rebuilt from a prompt holding only the last user turn (klieo), else null. */
      partial: string | null;
      /** Redactions by detector, or null when nothing was redacted. */
      redactions: Record<string, number> | null;
      /**
       * Why the target refused the example with the run's tool definitions, when it was written
       * with the ones the plan judged it with (`judged`); else null.
       */
      judgedTools: string | null;
      /** Where it came from (names scrubbed as the example is), for a dataset card. */
      origin: ExampleOrigin;
    };

export interface ExampleOrigin {
  source: string;
  version: string | null;
  program: string;
  module: string;
  model: string | null;
  timestamp: number | null;
}

/** Where an example came from, as the dataset card tells it: its names are recorded text, scrubbed as the example is. */
export function originOf(record: TraceRecord, scrub: ScrubSettings | null): ExampleOrigin {
  return {
    source: record.source,
    version: record.version === null ? null : scrubbedName(record.version, scrub),
    program: scrubbedName(record.program, scrub),
    module: scrubbedName(record.module, scrub),
    model: record.model === null ? null : scrubbedName(record.model, scrub),
    timestamp: possibleTime(record.timestamp),
  };
}

/**
 * What redaction would find in a tool's name (detector names, sorted), or null. A redacted
 * name (`[REDACTED:github]`) is no valid tool name for any target, so an example calling
 * such a tool cannot be written, and no definition may carry the name.
 */
export function redactedInToolName(name: string, scrub: ScrubSettings | null): string[] | null {
  if (scrub === null) return null;
  const found = Object.keys(redactValue(name, scrub.options).counts);
  return found.length > 0 ? found.sort() : null;
}

/**
 * Inferred definitions list the recorded argument names, which redaction changes in the
 * messages when they hold a secret: the definitions must say the same, and leak nothing.
 * A tool whose name redaction would change has no definition (see `redactedInToolName`).
 */
export function scrubDefinitions(definitions: ToolDefinition[], scrub: ScrubSettings | null): ToolDefinition[] {
  if (scrub === null) return definitions;
  return definitions
    .filter((d) => redactedInToolName(d.function.name, scrub) === null)
    .map((d) =>
      d.function.parameters === undefined ? d : { ...d, function: { ...d.function, parameters: redactValue(d.function.parameters, scrub.options).value } },
    );
}

/**
 * A record's own tool definitions (`recordedDefinitions`) as an example may carry them: recorded
 * text, so their descriptions and parameters are redacted as the messages are, with the counts
 * of what was found; a tool whose name redaction would change has none (see `redactedInToolName`).
 */
export function scrubbedRecordedDefinitions(record: TraceRecord, scrub: ScrubSettings | null): { definitions: ToolDefinition[]; counts: Record<string, number> } {
  const definitions = recordedDefinitions(record.offeredTools);
  if (scrub === null || definitions.length === 0) return { definitions, counts: {} };
  const kept = definitions.filter((d) => redactedInToolName(d.function.name, scrub) === null);
  // All but the name, which holds nothing redaction finds.
  const redacted = redactValue(
    kept.map(({ function: { name: _name, ...rest } }) => rest),
    scrub.options,
  );
  return { definitions: kept.map((d, i) => ({ type: 'function', function: { name: d.function.name, ...redacted.value[i] } })), counts: redacted.counts };
}

export interface ProjectSharePayload {
  files: TraceFile[];
  share: WorkShare;
  /** Kept line numbers, sorted, by file index. */
  kept: Map<number, Int32Array>;
  /** Their byte offsets, in the same order, by file index. */
  offsets: Map<number, Float64Array>;
  settings: ProjectionSettings;
}

export interface ProjectedShare {
  items: ProjectedItem[];
  /**
   * The examples' lines as UTF-8, back to back: one block of bytes crosses from a worker
   * instead of a string per example, and is written out as it is.
   */
  lines: Uint8Array;
  records: number;
}

/**
 * Appends the example as one JSON line, or returns why a strict parser (orjson) would
 * refuse it and appends nothing: every written line must load. writeJson writes JSON, so a
 * strict parser can refuse only two things in it: a lone surrogate, which a string decoded
 * from recorded JSON text can hold and JSON.stringify writes as an escape (`\ud800`), and
 * nesting past its limit, which JSON text parsed out of a string can add. Only a line that may
 * hold either is scanned. NEL, U+2028 and U+2029 are written escaped (`jsonLine`): a reader that splits lines as
 * Python's `splitlines()` does (NeMo AutoModel) would cut the line there.
 */
export function writeStrictLine(out: ByteSink, example: unknown): string | null {
  const lineStart = out.length;
  try {
    const text = jsonLine(writeRecordJson(example));
    out.text(text);
    if (text.includes('\\ud') || lastWrittenDepth() >= MAX_DEPTH) checkJsonText(out.buffer, lineStart, out.length);
    return null;
  } catch (error) {
    out.length = lineStart;
    if (error instanceof JsonSyntaxError) return `the line would not load in a strict JSON parser: ${error.message.replace(/ at byte \d+$/, '')}`;
    // writeJson recurses: a value nested past the stack (JSON text held in a string) cannot be written.
    if (error instanceof RangeError) return 'nested too deeply to write';
    throw error;
  }
}

/** The kept records of a share, in batches; a batch is finished with before the next is read. */
async function* keptRecords(files: TraceFile[], share: WorkShare, kept: Map<number, Int32Array>, offsets: Map<number, Float64Array>): AsyncGenerator<Iterable<TraceRecord>> {
  for (const range of share.ranges) {
    const lines = kept.get(range.fileIndex);
    if (lines === undefined) continue;
    const at = offsets.get(range.fileIndex);
    if (at !== undefined && isSynalinks(files[range.fileIndex])) {
      yield* readSynalinksLinesAt(files[range.fileIndex], lines, at, { start: range.start, end: range.end });
      continue;
    }
    for await (const { records } of readSelectedRecords(files, new Map([[range.fileIndex, lines]]), { start: range.start, end: range.end })) yield records;
  }
}

/** Loads the tokenizer a projection counts with, ahead of the first share (see `preloadJob`). */
export async function warmProjection({ tokenizer }: { tokenizer: TokenizerSpec }): Promise<void> {
  await loadMeter(tokenizer);
}

/** What projecting a share's records shares: the target, the tokenizer, the settings and the lines written so far. */
interface ProjectionContext {
  target: Target;
  meter: ExampleMeter;
  settings: ProjectionSettings;
  exampleLines: ByteSink;
}

type DropItem = Extract<ProjectedItem, { kind: 'drop' }>;

/** Whether a projection counts tokens: always for an export's examples; for a verdict, only where a token limit or a template reads the count. */
function countsTokens(settings: ProjectionSettings, meter: ExampleMeter): boolean {
  return settings.verdictOnly !== true || settings.maxExampleTokens !== null || settings.maxSeqLength !== null || meter.rendersTemplate;
}

/** What the target made of a record it takes: the example as written (its line appended to `exampleLines`), and what the summary needs of it. */
interface Judged {
  messages: Message[];
  example: Record<string, unknown>;
  row: Record<string, unknown>;
  measured: ExampleMeasure;
  counted: boolean;
  tools: ExampleTools;
  redactions: Record<string, number> | null;
  lineStart: number;
}

/**
 * The target's verdict on a record: why it cannot be an example, or the example, its line
 * appended to `exampleLines`. With `verdictAlone` (the plan's verdict), nothing a verdict does
 * not read is made: the messages are redacted only when a verdict reads them redacted (a
 * secret with --drop-on, a count), since a redacted tool name can be seen in the names alone.
 */
function judge(record: TraceRecord, { target, meter, settings, exampleLines }: ProjectionContext): DropItem | Judged {
  const where = { call_id: record.callId, file: record.ref.file, line: record.ref.line };
  if (record.notExportable) {
    return { kind: 'drop', ...where, reason: 'not_exportable', detail: record.notExportable };
  }
  const messages = record.messages();
  const projection = target.project(messages, { reasoning: settings.reasoning });
  if (!projection.ok) {
    return { kind: 'drop', ...where, reason: projection.reason, detail: projection.detail };
  }
  let example = projection.example;
  const counted = countsTokens(settings, meter);
  const scrub = settings.scrub;
  const redacting = scrub !== null && (settings.verdictAlone !== true || scrub.dropOnSecrets || counted);
  // The tools the call was offered, when its recorder kept them: scrubbed with the messages.
  const own = redacting ? scrubbedRecordedDefinitions(record, scrub) : { definitions: recordedDefinitions(record.offeredTools), counts: {} };
  const redactedName = (): DropItem | null => {
    const inName = projection.toolNames.map((name) => redactedInToolName(name, scrub)).find((found) => found !== null);
    return inName === undefined ? null : { kind: 'drop', ...where, reason: 'redacted_tool_name', detail: `a tool's name holds what --scrub redacts (${inName.join(', ')}), and a redacted name is no valid tool name` };
  };
  // After dedupe (keys are the recorded hashes), before token counting (counts are of what is written).
  let redactions: Record<string, number> | null = null;
  if (redacting) {
    const redacted = redactValue(example.messages, scrub.options);
    for (const [name, n] of Object.entries(own.counts)) redacted.counts[name] = (redacted.counts[name] ?? 0) + n;
    if (Object.keys(redacted.counts).length > 0) {
      const named = redactedName();
      if (named !== null) return named;
      if (scrub.dropOnSecrets && holdsSecret(redacted.counts, scrub)) {
        return { kind: 'drop', ...where, reason: 'secret', detail: foundBy(redacted.counts) };
      }
      redactions = redacted.counts;
      example = { ...example, messages: redacted.value };
    }
  } else if (scrub !== null) {
    const named = redactedName();
    if (named !== null) return named;
  }
  const tools = toolsFor(settings.everyLineTools ?? projection.toolNames, settings.supplied, settings.inferred, own.definitions, settings.everyLineTools !== null);
  if (tools.definitions.length > 0) example = target.attachTools(example, tools.definitions);
  const lastTurn = settings.trainOn === 'last';
  if (lastTurn && target.trainOnLastTurn !== undefined) example = target.trainOnLastTurn(example);
  // A format without per-turn weights (nemo) leaves the last-turn choice to its trainer's option: the
  // encoding counts the tokens trained on as if the earlier turns had weight 0 (a model folder's meter
  // applies --train-on itself, and openai's example has the weights already).
  const weightsToCount = lastTurn && target.trainOnLastTurn === undefined && !meter.rendersTemplate;
  // The row as written (hf: tools as JSON text, prompt and completion), counted as its trainer reads it.
  const row = target.written?.(example) ?? example;
  const measured = counted ? meter.measure(target.rowMessages !== undefined ? target.rowMessages(row) : weightsToCount ? lastTurnWeighted(example) : example) : UNMEASURED;
  const tokens = measured.tokens;
  if (settings.maxExampleTokens !== null && tokens.total > settings.maxExampleTokens) {
    return { kind: 'drop', ...where, reason: 'too_long', detail: `${tokens.total} tokens > --max-example-tokens ${settings.maxExampleTokens}` };
  }
  const failed = measured.findings.find((f) => f.code === 'template_error');
  if (failed !== undefined) return { kind: 'drop', ...where, reason: 'template_error', detail: failed.message, ...(failed.fix !== undefined ? { fix: failed.fix } : {}) };
  if (settings.maxSeqLength !== null && tokens.total > settings.maxSeqLength) {
    return { kind: 'drop', ...where, reason: 'too_long', detail: `${tokens.total} tokens > --max-seq-length ${settings.maxSeqLength}` };
  }
  const lineStart = exampleLines.length;
  const unwritable = writeStrictLine(exampleLines, row);
  if (unwritable !== null) {
    return { kind: 'drop', ...where, reason: 'not_strict_json', detail: unwritable };
  }
  return { messages, example, row, measured, counted, tools, redactions, lineStart };
}

/** The record as an example, its line appended to `exampleLines`, or why it cannot be one. */
function projectRecord(record: TraceRecord, context: ProjectionContext): ProjectedItem {
  const judged = judge(record, context);
  if ('kind' in judged) return judged;
  const { settings, target, meter, exampleLines } = context;
  const { messages, example, row, measured, counted, tools, redactions, lineStart } = judged;
  // Decoded from the line on each read: read once.
  const callId = record.callId;
  const folder = settings.groupByModule
    ? path.join(safeSegment(scrubbedName(record.program, settings.scrub)), safeSegment(scrubbedName(record.module, settings.scrub)))
    : '';
  // Compared only with the digests of this export, whose folders are all '' or none is: one native call for the common case.
  const line = exampleLines.view().subarray(lineStart);
  const digest = folder === '' ? sha256(line) : createHash('sha256').update(folder).update('\0').update(line).digest();
  return {
    kind: 'example',
    bytes: exampleLines.length - lineStart,
    call_id: callId,
    file: record.ref.file,
    line: record.ref.line,
    // The group of the example as written: after redaction, two questions that differed only in a secret are one.
    fraction: groupFraction(groupKey(record.program, Array.isArray(example.messages) ? (example.messages as Message[]) : messages), settings.seed),
    digest: [digest.readUInt32BE(0), digest.readUInt32BE(4), digest.readUInt32BE(8), digest.readUInt32BE(12)],
    folder,
    // Not inspected for the index (verdictOnly), which reads only the verdict, digest and group.
    inspection: counted ? inspectExample(target, meter, row, measured) : (null as unknown as Inspection),
    origin: originOf(record, settings.scrub),
    inferredTools: tools.inferred,
    recordedTools: tools.recorded,
    reasoningTurns: messages.reduce((n, m) => n + (m.role === 'assistant' && holdsReasoning(m) ? 1 : 0), 0),
    partial: record.partial ? callId : null,
    redactions,
    judgedTools: null,
  };
}

/**
 * The settings as the record alone makes them: where the run infers definitions from every
 * tool call, which only the whole run knows, the record's own calls stand in for them (the
 * plan's verdict is made before the run's calls are all read).
 */
function alone(settings: ProjectionSettings, record: TraceRecord): ProjectionSettings {
  if (settings.inferredFromCalls !== true || !record.raw.includes(TOOL_CALLS_KEY)) return settings;
  const own = ownDefinitions(toolCallFacts(record.messages()), settings.scrub);
  if (own.length === 0) return settings;
  const everyLineTools =
    settings.everyLineTools === null ? null : [...new Set([...settings.everyLineTools, ...own.map((d) => d.function.name)])];
  return { ...settings, inferred: [...settings.inferred, ...own], everyLineTools };
}

/** Definitions inferred from one record's calls, by the calls (an agent run's steps repeat their earlier calls), for one scrub. */
const ownDefinitionsByCalls = new Map<string, ToolDefinition[]>();
let ownDefinitionsScrub: ScrubSettings | null | undefined;
const OWN_DEFINITIONS_HELD = 1024;

function ownDefinitions(facts: string[], scrub: ScrubSettings | null): ToolDefinition[] {
  if (facts.length === 0) return [];
  if (scrub !== ownDefinitionsScrub) {
    ownDefinitionsByCalls.clear();
    ownDefinitionsScrub = scrub;
  }
  const calls = facts.join('\0');
  let own = ownDefinitionsByCalls.get(calls);
  if (own === undefined) {
    const inference = new ToolInference();
    inference.observeFacts(facts);
    own = scrubDefinitions(inference.definitions(), scrub);
    if (ownDefinitionsByCalls.size >= OWN_DEFINITIONS_HELD) ownDefinitionsByCalls.clear();
    ownDefinitionsByCalls.set(calls, own);
  }
  return own;
}

/**
 * A kept record's example; the plan's verdict took it, so where the run's tool definitions
 * make the target refuse it (a token limit, a template), it is written with the definitions
 * the verdict was made with.
 */
function projectKeptRecord(record: TraceRecord, context: ProjectionContext): ProjectedItem {
  const item = projectRecord(record, context);
  const judged = context.settings.judged;
  if (item.kind !== 'drop' || judged == null) return item;
  const asJudged = projectRecord(record, { ...context, settings: alone({ ...context.settings, ...judged }, record) });
  return asJudged.kind === 'example' ? { ...asJudged, judgedTools: `${item.reason}: ${item.detail ?? ''}` } : item;
}

/**
 * The target's verdict on a record, for the plan (pipeline/candidate.ts): why projecting the
 * record alone (`alone`) would drop it, or null. A job of parallel/jobs.ts.
 */
export async function targetVerdict(settings: ProjectionSettings): Promise<RecordVerdict> {
  const context: ProjectionContext = { target: getTarget(settings.format, settings.targetSettings), meter: await loadMeter(settings.tokenizer), settings, exampleLines: new ByteSink() };
  // Definitions change a verdict only through a count (a token limit, a template): without one, those of the names do.
  const counts = countsTokens(settings, context.meter);
  return (record) => {
    context.exampleLines.reset();
    const judged = judge(record, counts ? { ...context, settings: alone(settings, record) } : context);
    if (!('kind' in judged)) return null;
    return { reason: judged.reason, detail: judged.detail ?? '', ...(judged.fix !== undefined ? { fix: judged.fix } : {}) };
  };
}

/**
 * The sink a thread's shares write their lines into, reused: a new one per share grew by
 * doubling to the share's lines, and each outgrown buffer (twice the lines in all) waited for
 * a collection as external memory. Kept only up to SPARE_SINK_BYTES, so one large share does
 * not hold its size for the rest of the run.
 */
let spareSink: ByteSink | null = null;
const SPARE_SINK_BYTES = 16 << 20;

export async function projectShare({ files, share, kept, offsets, settings }: ProjectSharePayload): Promise<ProjectedShare> {
  const target = getTarget(settings.format, settings.targetSettings);
  const meter = await loadMeter(settings.tokenizer);
  const items: ProjectedItem[] = [];
  const exampleLines = spareSink ?? new ByteSink();
  spareSink = null;
  exampleLines.reset();
  const context: ProjectionContext = { target, meter, settings, exampleLines };
  let records = 0;
  try {
    for await (const batch of keptRecords(files, share, kept, offsets)) {
      for (const record of batch) {
        if (turnDue()) await letEventLoopRun();
        records++;
        const lineStart = exampleLines.length;
        const item = unlessTooLong(() => projectKeptRecord(record, context));
        if (item instanceof TextTooLongError) {
          exampleLines.length = lineStart;
          items.push({ kind: 'drop', call_id: record.callId, file: record.ref.file, line: record.ref.line, reason: 'text_too_long', detail: item.message });
        } else items.push(item);
      }
    }
    return { items, lines: exampleLines.detachedCopy(), records };
  } finally {
    if (exampleLines.buffer.length <= SPARE_SINK_BYTES) spareSink = exampleLines;
  }
}

/**
 * One record at a time, as a share projects it: its item and, for an example, its line (a view,
 * valid until the next call). For `traces index --format` and `traces map`, which see records
 * one by one rather than in shares of kept lines.
 */
export async function recordProjector(settings: ProjectionSettings): Promise<(record: TraceRecord) => { item: ProjectedItem; line: Uint8Array | null }> {
  const context: ProjectionContext = { target: getTarget(settings.format), meter: await loadMeter(settings.tokenizer), settings, exampleLines: new ByteSink() };
  return (record) => {
    context.exampleLines.reset();
    const item = unlessTooLong(() => projectRecord(record, context));
    if (item instanceof TextTooLongError) {
      return { item: { kind: 'drop', call_id: record.callId, file: record.ref.file, line: record.ref.line, reason: 'text_too_long', detail: item.message }, line: null };
    }
    return { item, line: item.kind === 'example' ? context.exampleLines.view() : null };
  };
}

/**
 * What the index records of a record's example (`traces index --format`), for the keep-list:
 * the target's verdict (its drop reason, or null), the digest of the example's line, which
 * `duplicate_example` compares, and its group's fraction, which sides it. Tools are attached by
 * name only (the definitions are inferred later, once, from every index): two lines with the
 * same messages and tool names get the same definitions, so the digests part the examples as
 * the written lines do.
 */
export async function indexProjection(settings: ProjectionSettings): Promise<(record: TraceRecord) => { refused: string | null; example: string | null; fraction: number | null }> {
  const project = await recordProjector(settings);
  return (record) => {
    const { item } = project(record);
    if (item.kind === 'drop') return { refused: item.reason, example: null, fraction: null };
    return { refused: null, example: item.digest.map((w) => (w >>> 0).toString(16).padStart(8, '0')).join(''), fraction: item.fraction };
  };
}

declare module '../parallel/jobs.js' {
  interface JobFunctions {
    project: typeof projectShare;
    targetVerdict: typeof targetVerdict;
  }
}
