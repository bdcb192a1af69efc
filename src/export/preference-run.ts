/**
 * `traces export --format openai-preference|hf-preference|nemo-preference`: the curation plan
 * with the pair finder where dedupe stands (pipeline/pairs.ts), then one row per pair. Each
 * side of a pair is its record's example for the format's base target (projection, reasoning,
 * tools, scrub, token counts, as any export makes them); the prompt is the chosen record's. Rows
 * go through the same datasets as every export: split by first-user-message group (both sides
 * share the prompt, so a prompt is never on both sides), validated as written, traced in
 * `_traces/examples.jsonl` with both call_ids and the signal.
 *
 * The records of the pairs are read again in file order on this thread, and a record's side
 * waits in memory until every pair it is in is complete: retries sit next to each other, so
 * what waits is a few records, but a pair whose records are far apart in the tree waits longer.
 */
import path from 'node:path';
import { createHash } from 'node:crypto';
import { UserError } from '../errors.js';
import { planCuration, type CurationOptions, type Drop } from '../pipeline/curate.js';
import type { Pair } from '../pipeline/pairs.js';
import { PAIR_SIGNALS } from '../pipeline/pairs.js';
import { readScores, scoresReport, type Scores } from '../pipeline/scores.js';
import { groupFraction, groupKey, type Split } from '../pipeline/split.js';
import { OutputDir } from '../output/output-dir.js';
import type { Discovery } from '../sources/discover.js';
import { isSynalinks, readSelectedRecords, readSynalinksLinesAt } from '../sources/read.js';
import { refuseNoRecords } from '../sources/no-records.js';
import type { Message, TraceRecord } from '../record.js';
import { getTarget, loadMeter, recordedDefinitions, toolsFor, ToolInference, type FinishedFile, type Inspection, type JsonObject, type ReasoningMode, type Target, type ToolDefinition, type ValidationReport } from '../targets/index.js';
import { specName } from '../targets/meter.js';
import { DEFAULT_TOKEN_LIMIT } from '../targets/validate.js';
import { droppedCounts, PREFERENCE_REASONS } from '../pipeline/drop-reasons.js';
import { ByteSink } from '../canonical/byte-sink.js';
import { canonicalValueText } from '../canonical/canonical.js';
import { TextTooLongError, unlessTooLong } from '../canonical/scan.js';
import { redactValue } from '../privacy/index.js';
import { Dataset, SPLITS, type CountsLabel } from './dataset.js';
import { Provenance } from './provenance.js';
import { originOf, redactedInToolName, scrubDefinitions, writeStrictLine, type ExampleOrigin } from './project-share.js';
import { foundBy, holdsSecret, scrubbedCallId, scrubbedDrop, type ScrubSettings } from '../privacy/scrub.js';
import { Origins } from './origins.js';
import { WrittenExamples } from './written-examples.js';
import { buildReport, completeExport, noExampleWritten, type ExportOptions, type ExportResult, type FolderNote } from './run.js';
import { addCount } from '../own.js';

/** One record's side of its pairs: the base example split into prompt and answer, or why it has none. */
type Side =
  | { ok: true; callId: string; file: string; line: number; program: string; prompt: JsonObject[] | null; answer: JsonObject; toolNames: string[]; origin: ExampleOrigin; offered: ToolDefinition[] }
  | { ok: false; callId: string; file: string; line: number; reason: string; detail: string };

/** Stands in for an empty answer's text while its base writes it (sideOf). */
const EMPTY_STAND_IN = '\u0000traces: empty answer\u0000';

/** The reading of a record as a side: the base target's example, its completion apart. */
function sideOf(record: TraceRecord, base: Target, reasoning: ReasoningMode, scrub: ScrubSettings | null): Side {
  const where = { callId: record.callId, file: record.ref.file, line: record.ref.line };
  const origin = originOf(record, scrub);
  if (record.notExportable) return { ok: false, ...where, reason: 'not_exportable', detail: record.notExportable };
  // The tools the call was offered, when recorded (the row is redacted whole, these with it); none whose name redaction changes.
  const offered = recordedDefinitions(record.offeredTools).filter((d) => redactedInToolName(d.function.name, scrub) === null);
  const messages = record.messages();
  const projection = base.project(messages, { reasoning });
  if (projection.ok) {
    const written = projection.example.messages as JsonObject[];
    return { ok: true, ...where, program: record.program, prompt: written.slice(0, -1), answer: written[written.length - 1], toolNames: projection.toolNames, origin, offered };
  }
  // An empty answer is what an `empty` pair rejects, which no supervised target writes: the
  // base writes it with a stand-in for its text (so reasoning and the prompt are written as
  // always), then the stand-in gives way to the recorded text (white space, or nothing).
  const last = messages[messages.length - 1];
  if (projection.reason === 'empty' && messages.length > 1 && last.role === 'assistant') {
    const again = base.project([...messages.slice(0, -1), { ...last, content: EMPTY_STAND_IN }], { reasoning });
    const recorded = typeof last.content === 'string' ? last.content : '';
    if (again.ok) {
      const written = again.example.messages as JsonObject[];
      const answer = { ...written[written.length - 1] };
      answer.content = typeof answer.content === 'string' ? answer.content.replace(EMPTY_STAND_IN, recorded) : recorded;
      return { ok: true, ...where, program: record.program, prompt: written.slice(0, -1), answer, toolNames: again.toolNames, origin, offered };
    }
    return { ok: true, ...where, program: record.program, prompt: null, answer: { role: 'assistant', content: recorded }, toolNames: [], origin, offered };
  }
  return { ok: false, ...where, reason: projection.reason, detail: projection.detail };
}

/** The records of the pairs, in file order, read on this thread. */
async function* pairRecords(discovery: Discovery, keptLines: ReadonlyMap<number, Int32Array>, keptOffsets: ReadonlyMap<number, Float64Array>): AsyncGenerator<{ fileIndex: number; record: TraceRecord }> {
  for (const fileIndex of [...keptLines.keys()].sort((a, b) => a - b)) {
    const lines = keptLines.get(fileIndex)!;
    const file = discovery.files[fileIndex];
    if (isSynalinks(file)) {
      for (const batch of readSynalinksLinesAt(file, lines, keptOffsets.get(fileIndex)!)) for (const record of batch) yield { fileIndex, record };
      continue;
    }
    for await (const { records } of readSelectedRecords(discovery.files, new Map([[fileIndex, lines]]))) for (const record of records) yield { fileIndex, record };
  }
}

export interface PreferenceOptions {
  scoresFile: string | null;
  minMargin: number;
}

/** What the run settles before the plan: the scores, and the curation the pair finder needs. */
export async function preferenceCuration(curation: CurationOptions, options: PreferenceOptions): Promise<{ curation: CurationOptions; scores: Scores | null }> {
  const scores = options.scoresFile === null ? null : await readScores(options.scoresFile);
  return {
    // Agent steps stay whole (a pair compares answers, not runs), and near-duplicates would compare answers of one prompt.
    curation: { ...curation, trajectories: 'all', nearDuplicates: null, pairs: { scores, minMargin: options.minMargin, keep: curation.keep } },
    scores,
  };
}

export async function exportPreference(
  discovery: Discovery,
  curationOptions: CurationOptions,
  options: ExportOptions,
  { target, reasoning, supplied }: { target: Target; reasoning: ReasoningMode; supplied: ToolDefinition[] },
): Promise<ExportResult> {
  const rows = target.preference!;
  const base = getTarget(rows.base);
  const { curation, scores } = await preferenceCuration(curationOptions, { scoresFile: options.scoresFile ?? null, minMargin: options.minMargin ?? 0 });
  const output = OutputDir.open(options.out, { force: options.force, roots: discovery.inputs ?? [] });
  const provenance = new Provenance();
  let dataset: Dataset | null = null;
  const written = new WrittenExamples();
  let keptFile: { dispose(): void } | null = null;
  let heldKeys: { dispose(): void } | null = null;
  try {
    const manifest = output.manifest(options.manifest);
    const exportDrops: Record<string, number> = {};
    const drop = (d: Drop): void => manifest.writeJsonLine(JSON.stringify(scrubbedDrop(d, options.scrub)));
    const inference = new ToolInference();
    const plan = await planCuration(discovery, curation, drop, { onToolCalls: (facts) => inference.observeFacts(facts) });
    keptFile = plan.keptFile;
    heldKeys = plan.keptKeys;
    refuseNoRecords(discovery, plan.recordsRead, plan.damagedLines);
    const definitions = inference.definitions();
    const inferredCalls = definitions.map((d) => inference.callCount(d.function.name));
    const inferred = scrubDefinitions(definitions, options.scrub);
    inference.dispose();
    const pairs = plan.pairs ?? [];
    const found: Record<string, number> = Object.fromEntries(PAIR_SIGNALS.map((s) => [s, 0]));
    for (const pair of pairs) found[pair.signal]++;
    const meter = await loadMeter(options.tokenizer);
    const counts: CountsLabel = { name: specName(options.tokenizer), exact: typeof options.tokenizer !== 'string', tokenLimit: options.maxSeqLength ?? DEFAULT_TOKEN_LIMIT };
    const fileLimit = options.maxFileMb !== null ? options.maxFileMb * 1024 * 1024 : (target.defaultFileBytes ?? Infinity);
    dataset = new Dataset(output, '', target, counts, fileLimit, options.validationFraction, provenance);

    // Each record's pairs, and how many of them still wait for it or its partner.
    const pairsAt = new Map<string, number[]>();
    pairs.forEach((pair, i) => {
      for (const side of [pair.chosen, pair.rejected]) {
        const at = `${side.fileIndex}:${side.line}`;
        const list = pairsAt.get(at);
        if (list === undefined) pairsAt.set(at, [i]);
        else list.push(i);
      }
    });
    // A record of the pairs, read: its side, its pairs still to write, whether one was written,
    // and why one was not. A record is in the output when some pair it is in was written; when
    // its last pair is done and none was, it is listed once (sideDone), never before: a chosen
    // answer whose pair with one rejected answer fails may be written with another.
    const waiting = new Map<string, { side: Side; pending: number; written: boolean; failed: { reason: string; detail: string; kept?: string; own: boolean } | null }>();
    const origins = new Origins();
    const writtenBySignal: Record<string, number> = Object.fromEntries(PAIR_SIGNALS.map((s) => [s, 0]));
    const redactions: Record<string, number> = {};
    const inferredUsed = new Set<string>();
    const recordedUsed = { examples: 0, names: new Set<string>() };
    const sink = new ByteSink();
    const rejectedTokens = { total: 0 };
    const atOf = (side: Pair['chosen']): string => `${side.fileIndex}:${side.line}`;
    /**
     * A pair not written, and whose fault: one side's (its record is dropped with the reason,
     * unless another of its pairs is written; its partner, in no other written pair, is `no_pair`)
     * or the row's, both sides' alike. `kept`: for a row written already, the record on each side of it.
     */
    const pairDrop = (pair: Pair, fault: 'chosen' | 'rejected' | 'both', reason: string, detail: string, kept?: { chosen: string; rejected: string }): void => {
      for (const which of ['chosen', 'rejected'] as const) {
        const entry = waiting.get(atOf(pair[which]))!;
        const own = fault === 'both' || fault === which;
        if (entry.failed !== null && (entry.failed.own || !own)) continue;
        const partner = pair[which === 'chosen' ? 'rejected' : 'chosen'].callId;
        entry.failed = own
          ? { reason, detail: `${pair.signal} pair with ${partner}: ${detail}`, own, ...(kept !== undefined ? { kept: kept[which] } : {}) }
          : { reason: 'no_pair', detail: `its ${pair.signal} pair with ${partner} was not written: ${partner} ${reason} (${detail})`, own };
      }
    };
    /** A record whose pairs are all done: listed when none of them was written. */
    const sideDone = ({ side, written: inOutput, failed }: { side: Side; written: boolean; failed: { reason: string; detail: string; kept?: string } | null }): void => {
      if (inOutput || failed === null) return;
      // no_pair counts the plan's unpaired records too: the export's add to them.
      if (exportDrops[failed.reason] === undefined) exportDrops[failed.reason] = plan.dropped[failed.reason as keyof typeof plan.dropped] ?? 0;
      addCount(exportDrops, failed.reason);
      drop({ call_id: side.callId, file: side.file, line: side.line, reason: failed.reason, ...(failed.kept !== undefined ? { kept: failed.kept } : {}), detail: failed.detail });
    };
    const writePair = (index: number, chosen: Side, rejected: Side): void => {
      const pair = pairs[index];
      if (!chosen.ok) return pairDrop(pair, 'chosen', chosen.reason, chosen.detail);
      if (!rejected.ok) return pairDrop(pair, 'rejected', rejected.reason, rejected.detail);
      if (chosen.prompt === null) return pairDrop(pair, 'chosen', 'empty', 'the chosen answer is empty');
      if (rejected.prompt !== null && canonicalValueText(rejected.prompt) !== canonicalValueText(chosen.prompt)) {
        return pairDrop(pair, 'rejected', 'not_representable', 'the two records share a key but their prompts differ as written');
      }
      const toolNames = [...new Set([...chosen.toolNames, ...rejected.toolNames])].sort();
      // One prompt, so one offer: the chosen record's, else the rejected one's.
      const tools = toolsFor(toolNames, supplied, inferred, chosen.offered.length > 0 ? chosen.offered : rejected.offered);
      const made = rows.row(chosen.prompt, chosen.answer, rejected.answer, tools.definitions);
      if (!made.ok) return pairDrop(pair, made.side, made.reason, made.detail);
      let row = made.row;
      let found: Record<string, number> | null = null;
      if (options.scrub !== null) {
        const redacted = redactValue(row, options.scrub.options);
        if (Object.keys(redacted.counts).length > 0) {
          const inName = toolNames.map((name) => redactedInToolName(name, options.scrub)).find((names) => names !== null);
          if (inName !== undefined) return pairDrop(pair, 'both', 'redacted_tool_name', `a tool's name holds what --scrub redacts (${inName.join(', ')}), and a redacted name is no valid tool name`);
          if (options.scrub.dropOnSecrets && holdsSecret(redacted.counts, options.scrub)) return pairDrop(pair, 'both', 'secret', foundBy(redacted.counts));
          row = redacted.value as JsonObject;
          found = redacted.counts;
        }
      }
      const sides = rows.sides(row)!;
      const measured = meter.measure(sides.chosen);
      const measuredRejected = meter.measure(sides.rejected);
      const longest = Math.max(measured.tokens.total, measuredRejected.tokens.total);
      if (options.maxExampleTokens !== null && longest > options.maxExampleTokens) return pairDrop(pair, 'both', 'too_long', `${longest} tokens > --max-example-tokens ${options.maxExampleTokens}`);
      const failed = [...measured.findings, ...measuredRejected.findings].find((f) => f.code === 'template_error');
      if (failed !== undefined) return pairDrop(pair, 'both', 'template_error', failed.message);
      if (options.maxSeqLength !== null && longest > options.maxSeqLength) return pairDrop(pair, 'both', 'too_long', `${longest} tokens > --max-seq-length ${options.maxSeqLength}`);
      sink.reset();
      const unwritable = writeStrictLine(sink, row);
      if (unwritable !== null) return pairDrop(pair, 'both', 'not_strict_json', unwritable);
      const line = sink.view();
      const digest = createHash('sha256').update(line).digest();
      const id = { chosen: scrubbedCallId(pair.chosen.callId, options.scrub), rejected: scrubbedCallId(pair.rejected.callId, options.scrub), signal: pair.signal };
      // Noted by the pair's number (not a call_id): an identical row names both records of the pair written.
      const earlierIndex = written.addOrEarlier([digest.readUInt32BE(0), digest.readUInt32BE(4), digest.readUInt32BE(8), digest.readUInt32BE(12)], String(index));
      if (earlierIndex !== null) {
        const earlier = pairs[Number(earlierIndex)];
        return pairDrop(pair, 'both', 'duplicate_example', `the same row as the pair of ${earlier.chosen.callId} and ${earlier.rejected.callId}, written already`, { chosen: earlier.chosen.callId, rejected: earlier.rejected.callId });
      }
      for (const [name, n] of Object.entries(found ?? {})) addCount(redactions, name, n);
      for (const name of tools.inferred) inferredUsed.add(name);
      if (tools.recorded.length > 0) recordedUsed.examples++;
      for (const name of tools.recorded) recordedUsed.names.add(name);
      const messages = sides.chosen.messages as JsonObject[];
      const roles = new Set(messages.map((m) => m.role));
      const inspection: Inspection = {
        errors: [...target.validateLine(row, 0), ...measured.findings.map((f) => ({ ...f, line: 0 }))],
        tokens: measured.tokens,
        hasSystem: roles.has('system'),
        hasUser: roles.has('user'),
        topLevelKeys: Object.keys(row).sort().join(','),
      };
      rejectedTokens.total += measuredRejected.tokens.total;
      if (target.finish !== undefined) origins.add('', chosen.origin);
      writtenBySignal[pair.signal]++;
      // Both sides share the prompt, so the group is the prompt's first user message, as written.
      dataset!.write(Buffer.from(line), inspection, groupFraction(groupKey(chosen.program, messages as unknown as Message[]), options.seed), id);
      waiting.get(atOf(pair.chosen))!.written = true;
      waiting.get(atOf(pair.rejected))!.written = true;
    };

    for await (const { fileIndex, record } of pairRecords(discovery, plan.keptLines, plan.keptOffsets)) {
      const at = `${fileIndex}:${record.ref.line}`;
      const mine = pairsAt.get(at);
      if (mine === undefined) continue;
      const read = unlessTooLong(() => sideOf(record, base, reasoning, options.scrub));
      const side: Side = read instanceof TextTooLongError ? { ok: false, callId: record.callId, file: record.ref.file, line: record.ref.line, reason: 'text_too_long', detail: read.message } : read;
      waiting.set(at, { side, pending: mine.length, written: false, failed: null });
      for (const i of mine) {
        const pair = pairs[i];
        const chosenAt = atOf(pair.chosen);
        const rejectedAt = atOf(pair.rejected);
        const other = waiting.get(chosenAt === at ? rejectedAt : chosenAt);
        if (other === undefined) continue;
        const done = unlessTooLong(() => writePair(i, waiting.get(chosenAt)!.side, waiting.get(rejectedAt)!.side));
        if (done instanceof TextTooLongError) pairDrop(pair, 'both', 'text_too_long', done.message);
        for (const key of [chosenAt, rejectedAt]) {
          const entry = waiting.get(key)!;
          if (--entry.pending === 0) {
            waiting.delete(key);
            sideDone(entry);
          }
        }
      }
    }
    // A record whose partner was never read again (its file changed under the run) is in no written pair: listed, not lost.
    for (const entry of waiting.values()) {
      entry.failed ??= { reason: 'no_pair', detail: 'the other record of its pair could not be read again', own: false };
      sideDone(entry);
    }
    waiting.clear();
    if (written.size === 0) throw new UserError(noExampleWritten(plan, exportDrops).replace('no example to write', 'no preference pair to write'), 1);

    const files: { path: string; dataset: string; split: Split; report: ValidationReport }[] = [];
    const finishedFiles: FinishedFile[] = [];
    const notes: FolderNote[] = [];
    const finished = dataset.finish();
    for (const split of SPLITS) {
      for (const { file, report } of finished.filter((f) => f.split === split)) {
        files.push({ path: path.relative(output.dir, file.finalPath), dataset: '', split, report });
        finishedFiles.push({ file, dataset: '', split, examples: report.examples });
      }
    }
    if (dataset.validationNote !== null) notes.push({ folder: '', reason: dataset.validationNote });
    provenance.write(output);
    const invalid = files.filter((f) => !f.report.ok).map((f) => f.report);
    const report = buildReport({
      target,
      options,
      reasoning,
      plan,
      key: curation.key,
      exportDrops,
      judgedTools: [],
      files,
      supplied,
      inferredDefinitions: inferred,
      inferredCalls,
      inferredUsed,
      recordedUsed,
      reasoningSeen: null,
      partial: [],
      redactions,
      notes,
      roots: discovery.inputs ?? [],
    });
    // exportDrops.no_pair, when the export added to it, holds the plan's too.
    report.dropped = droppedCounts(PREFERENCE_REASONS, { ...plan.dropped, ...exportDrops });
    report.pairs = {
      found: found,
      written: writtenBySignal,
      min_margin: options.minMargin ?? 0,
      rejected_tokens: rejectedTokens.total,
      ...(scores !== null ? { scores: scoresReport(scores, plan.scoredRecords ?? 0) } : {}),
    };
    return await completeExport({ output, target, curationOptions: curation, plan, report, invalid, files: finishedFiles, sources: origins.summaries(), keys: plan.keptKeys });
  } catch (error) {
    output.abort();
    throw error;
  } finally {
    dataset?.dispose();
    provenance.dispose();
    written.dispose();
    keptFile?.dispose();
    heldKeys?.dispose();
  }
}
