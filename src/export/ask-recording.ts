/**
 * `traces export --format ask-recording`: curated conversations written back as Ask
 * recordings, so a fine-tuned model can be tested against them with Ask's replay.
 *
 * One recording per program and module: `DIR/<test>/recording.yml`, `<test>` being
 * `<program>__<module>` (just `<program>` when both are the same), names made safe.
 * Like Ask's own files it is pretty-printed JSON despite the name. Each kept conversation
 * becomes the interactions Ask would have recorded while having it, in order:
 *
 * - each assistant turn: a `provider` interaction whose `messages` are the turns before
 *   it in Ask's `{role, content}` form and whose `result` is a `message` result (content,
 *   tool calls, metadata with the model, finish reason, the record's token counts on its
 *   last turn, and reasoning as `thinking`; never a provider body);
 * - each tool result: a `tool` interaction (`Ask::Tools::<Name>`, the call's arguments as
 *   a JSON string, the result's JSON as `output`).
 *
 * `traces` reads these files back as Ask recordings and rebuilds the same conversations.
 * `_traces/examples.jsonl` says where each conversation came from, as for every export:
 * `{"file": "<test>/recording.yml", "line": <the conversation's number in it>, "call_id", "merged"}`.
 */
import { closeSync, openSync } from 'node:fs';
import path from 'node:path';
import { isJsonObject, parseJsonText, writeJson, writeJsonAt } from '../canonical/json-value.js';
import { TextTooLongError, unlessTooLong } from '../canonical/scan.js';
import type { CurationOptions, CurationPlan, Drop } from '../pipeline/curate.js';
import { handedToTarget, planCuration } from '../pipeline/curate.js';
import { refuseNoRecords } from '../sources/no-records.js';
import { CURATION_REASONS, droppedCounts } from '../pipeline/drop-reasons.js';
import type { RecordVerdict } from '../pipeline/candidate.js';
import { randomUUID } from 'node:crypto';
import { reportHead, type Invocation } from './report-head.js';
import type { Message, ToolCall, TraceRecord } from '../record.js';
import { writeKeptKeys, type HeldKeys } from '../pipeline/kept-keys.js';
import { OutputDir, OutputFile } from '../output/output-dir.js';
import { RunTempDir } from '../pipeline/spill.js';
import { classOfToolName } from '../sources/ask/read.js';
import type { Discovery } from '../sources/discover.js';
import { readFull, readSelectedRecords } from '../sources/read.js';
import { CaseDistinctNames, joinedSegment, REPORT_FILE, safeSegment } from '../output/names.js';
import { compareText } from '../order.js';
import { scrubbed, scrubbedCallId, scrubbedDrop, scrubbedName, scrubbedQualityReport, scrubReport, type ScrubSettings } from '../privacy/scrub.js';
import { addCount } from '../own.js';
import { Provenance } from './provenance.js';
import { isoTime } from '../time.js';

export interface AskRecordingOptions {
  out: string;
  force: boolean;
  manifest: string | undefined;
  /** Recordings are committed with the tests that replay them: redacted as every export is, or null for `--scrub none`. */
  scrub: ScrubSettings | null;
  invocation: Invocation;
}

/** What an Ask-recording export drops for, beyond curation: a step without I/O, a call without completion, a message no interaction can hold, a secret. */
const ASK_RECORDING_REASONS = [...CURATION_REASONS, 'not_exportable', 'no_completion', 'not_representable', 'secret'];

type Json = Record<string, unknown>;

/** Text of a message's content as Ask records it. */
function askText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (content === null || content === undefined) return '';
  if (Array.isArray(content) && content.every((p) => typeof p === 'object' && p !== null && (p as Json).type === 'text')) {
    return content.map((p) => String((p as Json).text ?? '')).join('');
  }
  return writeJson(content);
}

/** A tool result's content as the JSON output Ask records. */
function toolOutput(content: unknown): unknown {
  if (typeof content !== 'string') return content ?? null;
  try {
    return parseJsonText(content);
  } catch {
    return content;
  }
}

function argumentsText(args: unknown): string {
  if (typeof args === 'string') return args;
  return writeJson(args ?? {});
}

/** The recording's test name: from the names as scrubbed (`scrubbedName`), or a key would be its folder's name. */
export function recordingTestName(program: string, module: string, scrub: ScrubSettings | null): string {
  const [cleanProgram, cleanModule] = [scrubbedName(program, scrub), scrubbedName(module, scrub)];
  return program === module ? safeSegment(cleanProgram) : joinedSegment([cleanProgram, cleanModule]);
}

/**
 * The interactions of one conversation (messages with the completion last). A tool's class
 * name is re-cased from the call's name as scrubbed: re-cased first, a key in a tool's name
 * (`sk_live_…` as `SkLive…`) is no longer seen by the scrub of the interactions.
 */
export function conversationInteractions(messages: readonly Message[], record: Pick<TraceRecord, 'model' | 'usage'>, scrub: ScrubSettings | null): Json[] {
  const interactions: Json[] = [];
  const history: Json[] = [];
  let unanswered: ToolCall[] = [];
  const lastAssistant = messages.map((m) => m.role).lastIndexOf('assistant');
  messages.forEach((message, i) => {
    if (message.role === 'assistant') {
      const calls = Array.isArray(message.tool_calls) ? message.tool_calls : [];
      const metadata: Json = { model: record.model, finish_reason: calls.length > 0 ? 'tool_calls' : 'stop' };
      const usage = i === lastAssistant ? record.usage : null;
      metadata.input_tokens = usage?.prompt_tokens ?? null;
      metadata.output_tokens = usage?.completion_tokens ?? null;
      metadata.cached_tokens = usage?.cached_tokens ?? null;
      if (typeof message.reasoning_content === 'string' && message.reasoning_content !== '') metadata.thinking = message.reasoning_content;
      interactions.push({
        type: 'provider',
        messages: history.slice(),
        model: record.model,
        result: {
          type: 'message',
          content: askText(message.content),
          tool_calls:
            calls.length > 0
              ? calls.map((c) => ({ id: c.id ?? null, type: 'function', name: c.function?.name ?? '', arguments: argumentsText(c.function?.arguments) }))
              : null,
          metadata,
        },
      });
      history.push({ role: 'assistant', content: askText(message.content) });
      unanswered = calls.slice();
      return;
    }
    if (message.role === 'tool' || message.role === 'function') {
      const byId = unanswered.findIndex((c) => c.id !== undefined && c.id === message.tool_call_id);
      const byName = unanswered.findIndex((c) => c.function?.name === message.name);
      const k = byId >= 0 ? byId : byName >= 0 ? byName : unanswered.length > 0 ? 0 : -1;
      const call = k >= 0 ? unanswered.splice(k, 1)[0] : null;
      interactions.push({
        type: 'tool',
        name: classOfToolName(scrubbedName(call?.function?.name ?? message.name ?? 'tool', scrub)),
        args: argumentsText(call?.function?.arguments),
        result: { ok: true, output: toolOutput(message.content), error: null, metadata: {}, type: 'result' },
      });
      history.push({ role: 'tool', content: askText(message.content) });
      return;
    }
    history.push({ role: message.role === 'developer' ? 'system' : message.role, content: askText(message.content) });
  });
  return interactions;
}

/**
 * A recording being gathered. Its interactions go to a scratch file as they come, already
 * written as they will stand in the recording: a tree's recordings can hold more than memory.
 */
class Recording {
  private readonly body: OutputFile;
  /** The recording's own file in the output, written at the end (write): provenance names it as conversations come. */
  readonly file: OutputFile;
  interactions = 0;
  conversations = 0;
  latest: number | null = null;

  constructor(
    readonly test: string,
    scratch: RunTempDir,
    index: number,
    output: OutputDir,
  ) {
    const file = path.join(scratch.path, `${index}.json`);
    this.body = new OutputFile(file, file);
    this.file = output.create(path.join(test, 'recording.yml'));
  }

  add(interactions: readonly Json[], timestamp: number | null): void {
    for (const interaction of interactions) this.body.write(`${this.interactions++ > 0 ? ',' : ''}\n    ${writeJsonAt(interaction, 2, '    ')}`);
    this.conversations++;
    if (timestamp !== null && (this.latest === null || timestamp > this.latest)) this.latest = timestamp;
  }

  /** Writes the recording as `writeJson(…, 2)` would have: the header, the interactions gathered, the end. */
  write(): void {
    const file = this.file;
    const recordedAt = (isoTime(this.latest) ?? isoTime(Date.now() / 1000)!).replace(/\.\d{3}Z$/, 'Z');
    file.write(`{\n  "test": ${JSON.stringify(this.test)},\n  "recorded_at": ${JSON.stringify(recordedAt)},\n  "interactions": ${this.interactions > 0 ? '[' : '[]'}`);
    this.body.close();
    const fd = openSync(this.body.finalPath, 'r');
    try {
      const chunk = Buffer.allocUnsafe(1 << 20);
      for (let position = 0, n; (n = readFull(fd, chunk, position)) > 0; position += n) file.write(chunk.subarray(0, n));
    } finally {
      closeSync(fd);
    }
    file.write(this.interactions > 0 ? '\n  ]\n}\n' : '\n}\n');
  }
}

/** The conversation a recording takes from the record, or why it has none. */
function exportableMessages(record: TraceRecord): { messages: Message[] } | { reason: string; detail: string } {
  if (record.notExportable) return { reason: 'not_exportable', detail: record.notExportable };
  const messages = unlessTooLong(() => record.messages());
  if (messages instanceof TextTooLongError) return { reason: 'text_too_long', detail: messages.message };
  const misshapen = messages.findIndex((m) => !isJsonObject(m) || (Array.isArray(m.tool_calls) && !m.tool_calls.every(isJsonObject)));
  if (misshapen !== -1) return { reason: 'not_representable', detail: `message ${misshapen + 1} (or one of its tool calls) is not a JSON object, which an Ask interaction needs` };
  if (record.status !== 'ok' || messages.length === 0 || messages[messages.length - 1].role !== 'assistant') {
    return { reason: 'no_completion', detail: `status ${record.status}` };
  }
  return { messages };
}

export async function runAskRecordingExport(
  discovery: Discovery,
  curationOptions: CurationOptions,
  options: AskRecordingOptions,
): Promise<{ plan: CurationPlan; report: Record<string, unknown> }> {
  const verdictOptions: CurationOptions = { ...curationOptions, targetVerdict: { job: 'askRecordingVerdict', settings: { scrub: options.scrub }, run: randomUUID() } };
  return askRecordingPlanned(discovery, verdictOptions, options);
}

/** A record's interactions as written (scrubbed), with what redaction found, or why it cannot be written. */
function recordingInteractions(record: TraceRecord, scrub: ScrubSettings | null): { interactions: Json[]; redactions: Record<string, number> | null } | { reason: string; detail: string } {
  const read = exportableMessages(record);
  if ('reason' in read) return read;
  let interactions: Json[];
  try {
    // Scrubbed as written (text parts joined, tool arguments as text), as the other formats scrub their lines.
    interactions = conversationInteractions(read.messages, record, scrub);
  } catch (error) {
    // A field of a type no Ask interaction holds (JSON allows it, the recorder wrote it): the record is dropped and says so.
    if (!(error instanceof TypeError)) throw error;
    return { reason: 'not_representable', detail: `a field holds a value of a type an Ask interaction cannot hold (${error.message})` };
  }
  if (scrub === null) return { interactions, redactions: null };
  const clean = scrubbed(interactions, scrub);
  if ('secret' in clean) return { reason: 'secret', detail: clean.secret };
  return { interactions: clean.value, redactions: clean.redactions ?? null };
}

/**
 * The plan's record-local verdict of this format (pipeline/candidate.ts): a record it cannot
 * write as a recording is dropped before any record is compared with it. A job of parallel/jobs.ts.
 */
export async function askRecordingVerdict({ scrub }: { scrub: ScrubSettings | null }): Promise<RecordVerdict> {
  return (record) => {
    const made = recordingInteractions(record, scrub);
    return 'reason' in made ? { reason: made.reason, detail: made.detail } : null;
  };
}

declare module '../parallel/jobs.js' {
  interface JobFunctions {
    askRecordingVerdict: typeof askRecordingVerdict;
  }
}

/** One plan, whose verdict drops what cannot be written, then the recordings of the kept records. */
async function askRecordingPlanned(
  discovery: Discovery,
  curationOptions: CurationOptions,
  options: AskRecordingOptions,
): Promise<{ plan: CurationPlan; report: Record<string, unknown> }> {
  const output = OutputDir.open(options.out, { force: options.force, roots: discovery.inputs ?? [] });
  let scratch: RunTempDir | null = null;
  let keptKeys: HeldKeys | null = null;
  let keptFile: { dispose(): void } | null = null;
  const provenance = new Provenance();
  try {
    const manifest = output.manifest(options.manifest);
    const exportDrops: Record<string, number> = {};
    const drop = (d: Drop) => {
      d = scrubbedDrop(d, options.scrub);
      manifest.writeJsonLine(JSON.stringify(d));
      provenance.dropped(d);
    };
    const refuse = (d: Drop) => {
      addCount(exportDrops, d.reason);
      drop(d);
    };
    const plan = await planCuration(discovery, curationOptions, drop);
    keptKeys = plan.keptKeys;
    keptFile = plan.keptFile;
    refuseNoRecords(discovery, plan.recordsRead, plan.damagedLines);
    for (const [reason, n] of Object.entries(plan.refusedByTarget)) addCount(exportDrops, reason, n);
    const partial: string[] = [];
    const redactions: Record<string, number> = {};
    const recordings = new Map<string, Recording>();
    const testNames = new CaseDistinctNames();
    scratch = new RunTempDir();
    for await (const { records } of readSelectedRecords(plan.files, plan.keptLines)) {
      for (const record of records) {
        const where = { call_id: record.callId, file: record.ref.file, line: record.ref.line };
        // The plan's verdict took it; a record read differently the second time (the file changed) is dropped still.
        const made = recordingInteractions(record, options.scrub);
        if ('reason' in made) {
          refuse({ ...where, reason: made.reason, detail: made.detail });
          continue;
        }
        const { interactions } = made;
        for (const [name, n] of Object.entries(made.redactions ?? {})) addCount(redactions, name, n);
        const test = recordingTestName(record.program, record.module, options.scrub);
        let recording = recordings.get(test);
        if (recording === undefined) recordings.set(test, (recording = new Recording(testNames.nameFor(test), scratch, recordings.size, output)));
        recording.add(interactions, record.timestamp);
        provenance.written(recording.file, recording.conversations, scrubbedCallId(record.callId, options.scrub));
        if (record.partial) partial.push(scrubbedCallId(record.callId, options.scrub));
      }
    }
    const files: Record<string, unknown>[] = [];
    for (const recording of [...recordings.values()].sort((a, b) => compareText(a.test, b.test))) {
      recording.write();
      files.push({ file: path.join(recording.test, 'recording.yml'), test: recording.test, conversations: recording.conversations, interactions: recording.interactions });
    }
    provenance.write(output);
    const report = {
      ...reportHead('export', options.invocation, discovery.inputs ?? [], options.scrub),
      format: 'ask-recording',
      records_read: plan.recordsRead,
      damaged_lines: plan.damagedLines,
      // The records handed to the format: those its verdict refused in the plan too.
      kept_after_curation: handedToTarget(plan),
      conversations: files.reduce((n, f) => n + (f.conversations as number), 0),
      dropped: droppedCounts(ASK_RECORDING_REASONS, { ...plan.dropped, ...exportDrops }),
      ...(plan.quality !== null ? { quality: scrubbedQualityReport(plan.quality, options.scrub) } : {}),
      partial_conversations: partial.length,
      partial_call_ids: partial,
      scrub: scrubReport(options.scrub, redactions),
      files,
      warnings:
        partial.length > 0
          ? [`${partial.length} conversation(s) rebuilt from prompts that hold only the last user turn (partial): earlier turns come from the run, not from the request`]
          : [],
      ...(curationOptions.exclude !== null ? { exclude: curationOptions.exclude.report() } : {}),
      ...(plan.keepList !== null ? { keep_list: plan.keepList.report() } : {}),
    };
    output.create(REPORT_FILE).write(`${JSON.stringify(report, null, 2)}\n`);
    writeKeptKeys(output, plan.keptKeys, { command: 'export', key: curationOptions.key });
    output.commit();
    scratch.remove();
    return { plan, report };
  } catch (error) {
    scratch?.remove();
    keptKeys?.dispose();
    output.abort();
    throw error;
  } finally {
    keptFile?.dispose();
    provenance.dispose();
  }
}
