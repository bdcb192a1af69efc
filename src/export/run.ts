/**
 * `traces export`: the curation plan with export defaults, then one training example per
 * kept record, split by first-user-message group, validated as written, and renamed into
 * place only when every file would be accepted. An example identical to one already written
 * (records that differ only in what the target drops, or the same exchange on two models) is
 * dropped as `duplicate_example`; every line written is traced to its record in
 * `_traces/examples.jsonl`.
 */
import path from 'node:path';
import { UserError } from '../errors.js';
import { handedToTarget, planCuration, type CurationOptions, type CurationPlan, type Drop, type KeptLines } from '../pipeline/curate.js';
import type { Split } from '../pipeline/split.js';
import { HeldKeys, writeKeptKeys } from '../pipeline/kept-keys.js';
import type { KeyKind } from '../pipeline/keys.js';
import { OutputDir } from '../output/output-dir.js';
import type { Discovery } from '../sources/discover.js';
import { isSynalinks } from '../sources/read.js';
import { refuseNoRecords } from '../sources/no-records.js';
import { preloadJob, runOverFiles, startedNow } from '../parallel/run-shares.js';
import { planKeptShares, type WorkShare } from '../parallel/units.js';
import {
  getTarget,
  TARGET_NAMES,
  loadToolsFile,
  ToolInference,
  type ReasoningMode,
  type Target,
  type ToolDefinition,
  validationJson,
  type ValidationReport,
  type FinishedFile,
  type SourcesSummary,
} from '../targets/index.js';
import { Origins } from './origins.js';
import { droppedCounts, EXPORT_REASONS } from '../pipeline/drop-reasons.js';
import { reportHead, type Invocation } from './report-head.js';
import { Dataset, SPLITS, type CountsLabel } from './dataset.js';
import { specName, type TokenizerSpec, type TrainOn } from '../targets/meter.js';
import { DEFAULT_TOKEN_LIMIT, tooFewExamples } from '../targets/validate.js';
import { redactedInToolName, scrubDefinitions, type ProjectedShare, type ProjectionSettings } from './project-share.js';
import { scrubbedCallId, scrubbedDrop, scrubbedQualityReport, scrubReport, type ScrubSettings } from '../privacy/scrub.js';
import { Provenance } from './provenance.js';
import { compareText } from '../order.js';
import { addToList } from '../lists.js';
import { formatCount } from '../format.js';
import { CaseDistinctNames, REPORT_FILE } from '../output/names.js';
import { WrittenExamples } from './written-examples.js';
import { JOBS } from '../parallel/jobs.js';
import { addCount } from '../own.js';
import { pauseForTest } from '../output/test-pause.js';
import { randomUUID } from 'node:crypto';
import { resolveReasoning } from './reasoning.js';

export interface ExportOptions {
  format: string;
  /** The values of the target's own options (`Target.options`), by attribute name. */
  targetSettings?: Readonly<Record<string, string>>;
  out: string;
  force: boolean;
  reasoning: ReasoningMode | undefined;
  toolsFile: string | undefined;
  /** Definitions inferred once from every host's index (`traces keep-list --tools-out`): used instead of inferring from this run's calls. */
  inferredToolsFile?: string;
  validationFraction: number;
  seed: number;
  /** An encoding name, or a model folder (`--tokenizer DIR`) read for the target's trainer. */
  tokenizer: TokenizerSpec;
  maxExampleTokens: number | null;
  /** --max-seq-length (model folders only): longer examples are dropped as too_long. */
  maxSeqLength: number | null;
  trainOn: TrainOn;
  maxFileMb: number | null;
  groupBy: 'none' | 'module';
  manifest: string | undefined;
  scrub: ScrubSettings | null;
  /** The command line after `traces` (report.json records it, and the roots it resolved to). */
  invocation: Invocation;
  /** Preference formats: `--scores FILE` and `--min-margin N` (pipeline/pairs.ts). */
  scoresFile?: string | null;
  minMargin?: number;
}

const CONTEXT_WARNING = 65_536;
/**
 * Kept records per projection share: about 0.5 MB of example lines on the bench tree. A share's
 * records, parsed messages and lines stay alive until it is done, so a smaller one holds less at
 * a time (1 GB tree, two threads: 377-388 MB peak RSS at 1,024, 352-362 MB at 256, the same CPU
 * time), and its last share leaves the other thread less to wait for.
 */
const PROJECT_SHARE_RECORDS = 256;
/** A recorded call's usual size, to turn TRACES_SHARE_BYTES (tests, tuning) into records. */
const RECORD_BYTES = 2048;

export interface ExportResult {
  plan: CurationPlan;
  report: Record<string, unknown>;
  invalid: ValidationReport[];
}

/**
 * The export of a preference format (export/preference-run.ts), handed in by the command: it
 * builds on this module's report, so this module does not import it.
 */
export type PreferenceExport = (
  discovery: Discovery,
  curationOptions: CurationOptions,
  options: ExportOptions,
  chosen: { target: Target; reasoning: ReasoningMode; supplied: ToolDefinition[] },
) => Promise<ExportResult>;

/**
 * What the export's options name beyond the records: the target, the reasoning mode, the
 * --tools and --inferred-tools files, each refused as a real run refuses it (a dry run asks
 * this too).
 */
export async function exportInputs(options: Pick<ExportOptions, 'format' | 'targetSettings' | 'reasoning' | 'toolsFile' | 'inferredToolsFile'>): Promise<{ target: Target; reasoning: ReturnType<typeof resolveReasoning>; supplied: ToolDefinition[]; inferredFromFile: ToolDefinition[] | null }> {
  let target: Target;
  try {
    target = getTarget(options.format, options.targetSettings);
  } catch {
    throw new UserError(`--format ${options.format}: expected ${TARGET_NAMES.join(', ')}`);
  }
  const reasoning = resolveReasoning(target, options.reasoning);
  const read = async (flag: string, file: string | undefined): Promise<ToolDefinition[] | null> => {
    if (file === undefined) return null;
    try {
      return await loadToolsFile(file);
    } catch (error) {
      throw new UserError(`${flag} ${(error as Error).message}`);
    }
  };
  const supplied = (await read('--tools', options.toolsFile)) ?? [];
  // A preference export infers no tools of its own from a file.
  const inferredFromFile = target.preference !== undefined ? null : await read('--inferred-tools', options.inferredToolsFile);
  return { target, reasoning, supplied, inferredFromFile };
}

export async function runExport(discovery: Discovery, curationOptions: CurationOptions, options: ExportOptions, exportPreference: PreferenceExport): Promise<ExportResult> {
  const { target, reasoning, supplied, inferredFromFile } = await exportInputs(options);
  if (target.preference !== undefined) {
    return exportPreference(discovery, curationOptions, options, { target, reasoning, supplied });
  }
  // A keep-list of traces keep-list settles the sides of the whole sharded dataset (its split column).
  const settled = curationOptions.keepListFile ? await settledSides(curationOptions.keepListFile) : null;
  if (curationOptions.keepListFile) await warnOfOtherOptions(curationOptions, options, curationOptions.keepListFile);
  return exportPlanned(discovery, curationOptions, options, { target, reasoning, supplied, inferredFromFile, settled });
}

/**
 * The settings each record's example is made with; the tools known before the plan reads the
 * calls (`--tools`, `--inferred-tools`) until the run's inferred definitions replace them.
 */
function projectionSettings(
  options: ExportOptions,
  target: Target,
  reasoning: ReasoningMode,
  supplied: ToolDefinition[],
  tools: { inferred: ToolDefinition[]; inferredNames: string[]; fromCalls: boolean },
): ProjectionSettings {
  return {
    scrub: options.scrub,
    format: target.name,
    targetSettings: target.settings,
    reasoning,
    supplied,
    inferred: tools.inferred,
    everyLineTools:
      target.everyLineTools === true
        ? [...new Set([...tools.inferredNames.filter((name) => redactedInToolName(name, options.scrub) === null), ...supplied.map((d) => d.function.name)])]
        : null,
    maxExampleTokens: options.maxExampleTokens,
    seed: options.seed,
    validationFraction: options.validationFraction,
    tokenizer: options.tokenizer,
    maxSeqLength: options.maxSeqLength,
    trainOn: options.trainOn,
    groupByModule: options.groupBy === 'module',
    inferredFromCalls: tools.fromCalls,
  };
}

/**
 * One plan, whose record-local stages hold the target's verdict (so no kept record is one the
 * target refuses), then the examples of the kept records: the input is read twice.
 */
async function exportPlanned(
  discovery: Discovery,
  curationOptions: CurationOptions,
  options: ExportOptions,
  {
    target,
    reasoning,
    supplied,
    inferredFromFile,
    settled,
  }: { target: Target; reasoning: ReasoningMode; supplied: ToolDefinition[]; inferredFromFile: ToolDefinition[] | null; settled: Map<string, Split> | null },
): Promise<ExportResult> {
  const output = OutputDir.open(options.out, { force: options.force, roots: discovery.inputs ?? [] });
  const provenance = new Provenance();
  const datasets = new Map<string, Dataset>();
  /** The examples of the kept records, in file order, started as soon as the plan knows them. */
  let projected: AsyncGenerator<ProjectedShare> | null = null;
  const stopProjection = new AbortController();
  let heldKeys: HeldKeys | null = null;
  let keptFile: { dispose(): void } | null = null;
  let writtenExamples: WrittenExamples | null = null;
  try {
    const manifest = output.manifest(options.manifest);
    const exportDrops: Record<string, number> = {};
    /** The option that fixes a drop reason, where its drops named one. */
    const dropFixes: Record<string, string> = {};
    const drop = (d: Drop) => {
      d = scrubbedDrop(d, options.scrub);
      manifest.writeJsonLine(JSON.stringify(d));
      provenance.dropped(d);
    };
    const inference = new ToolInference();
    let inferredDefinitions: ToolDefinition[] = [];
    /** Distinct recorded calls behind each inferred definition, in the order of `inferredDefinitions`. */
    let inferredCalls: number[] = [];
    // What the plan's verdict knows of the tools: the files named; the run's calls stand in for the rest record by record.
    const fromFile = inferredFromFile === null ? null : scrubDefinitions(inferredFromFile, options.scrub);
    const judged = projectionSettings(options, target, reasoning, supplied, {
      inferred: fromFile ?? [],
      inferredNames: inferredFromFile?.map((d) => d.function.name).sort() ?? [],
      fromCalls: inferredFromFile === null,
    });
    const startProjection = (kept: KeptLines): AsyncGenerator<ProjectedShare> => {
      // Every tool call of the plan has been seen: its definitions are final.
      const definitions = inferredFromFile ?? inference.definitions();
      inferredCalls = definitions.map((d) => inference.callCount(d.function.name));
      inferredDefinitions = scrubDefinitions(definitions, options.scrub);
      const inferredNames = inferredFromFile?.map((d) => d.function.name).sort() ?? inference.names();
      const settings: ProjectionSettings = {
        ...projectionSettings(options, target, reasoning, supplied, { inferred: inferredDefinitions, inferredNames, fromCalls: judged.inferredFromCalls === true }),
        judged: { inferred: judged.inferred, everyLineTools: judged.everyLineTools },
      };
      return projectKept(discovery, kept, settings, stopProjection.signal);
    };
    const verdictOptions: CurationOptions = {
      ...curationOptions,
      targetVerdict: { job: 'targetVerdict', settings: { ...judged, verdictOnly: true, verdictAlone: true }, run: randomUUID() },
    };
    const plan = await planCuration(discovery, verdictOptions, drop, {
      // With definitions inferred once from every host's index, this host's calls are not counted.
      onToolCalls: inferredFromFile === null ? (facts) => inference.observeFacts(facts) : undefined,
      whenRead: () => preloadJob(JOBS.project, { tokenizer: options.tokenizer }),
      // The workers start on the examples while this thread reports the last drops.
      whenKept: (kept) => (projected = startProjection(kept)),
    });
    // The plan left the kept keys on disk; keys.bin is written from there once the examples are.
    for (const [reason, n] of Object.entries(plan.refusedByTarget)) addCount(exportDrops, reason, n);
    Object.assign(dropFixes, plan.refusalFixes);
    heldKeys = plan.keptKeys;
    keptFile = plan.keptFile;
    // An exported dataset or a text file named as traces: no empty dataset, no exit 0.
    refuseNoRecords(discovery, plan.recordsRead, plan.damagedLines);
    projected ??= startProjection(plan);
    // Every call is observed and the definitions are built: the calls' rows on disk can go.
    inference.dispose();

    const fileLimit = options.maxFileMb !== null ? options.maxFileMb * 1024 * 1024 : (target.defaultFileBytes ?? Infinity);
    const folderNames = new CaseDistinctNames();
    const model = typeof options.tokenizer !== 'string';
    const counts: CountsLabel = { name: specName(options.tokenizer), exact: model, tokenLimit: options.maxSeqLength ?? DEFAULT_TOKEN_LIMIT };
    const datasetAt = (folder: string): Dataset => {
      let dataset = datasets.get(folder);
      if (dataset === undefined) {
        dataset = new Dataset(output, folderNames.nameFor(folder), target, counts, fileLimit, options.validationFraction, provenance);
        datasets.set(folder, dataset);
      }
      return dataset;
    };
    // Examples written, by digest of their dataset and line: 8 bytes a slot in memory, the rest on disk.
    const written = (writtenExamples = new WrittenExamples());
    if (options.groupBy === 'none') datasetAt('');

    const inferredUsed = new Set<string>();
    /** Examples that carry definitions their record kept, and the tools so defined. */
    const recordedUsed = { examples: 0, names: new Set<string>() };
    // Where each dataset's examples came from: only a target that describes its datasets (a card) asks.
    const origins = new Origins();
    const reasoningSeen = { examples: 0, turns: 0 };
    const redactions: Record<string, number> = {};
    const partial: string[] = [];
    const judgedTools: ReportInput['judgedTools'] = [];
    for await (const { items, lines } of projected) {
      let lineStart = 0;
      for (const item of items) {
        if (item.kind === 'drop') {
          const { kind, fix, ...dropped } = item;
          addCount(exportDrops, item.reason);
          if (fix !== undefined) dropFixes[item.reason] ??= fix;
          drop(dropped);
          continue;
        }
        const line = lines.subarray(lineStart, lineStart + item.bytes);
        lineStart += item.bytes;
        // As every file of the run names it, so that the manifest, examples.jsonl and the report agree.
        // Each id is scrubbed once from its recorded text (`drop` scrubs what it writes): scrubbed
        // twice, a custom rule could match the redaction's own marker, and the files would disagree.
        const callId = scrubbedCallId(item.call_id, options.scrub);
        const kept = written.addOrEarlier(item.digest, item.call_id);
        if (kept !== null) {
          // The same example again (across splits too): training on it twice would double its weight.
          exportDrops.duplicate_example = (exportDrops.duplicate_example ?? 0) + 1;
          drop({ call_id: item.call_id, file: item.file, line: item.line, reason: 'duplicate_example', kept });
          provenance.merged(scrubbedCallId(kept, options.scrub), callId);
          continue;
        }
        for (const name of item.inferredTools) inferredUsed.add(name);
        if (item.recordedTools.length > 0) recordedUsed.examples++;
        for (const name of item.recordedTools) recordedUsed.names.add(name);
        if (item.reasoningTurns > 0) {
          reasoningSeen.examples += 1;
          reasoningSeen.turns += item.reasoningTurns;
        }
        if (item.redactions !== null) for (const [name, n] of Object.entries(item.redactions)) addCount(redactions, name, n);
        if (item.partial !== null) partial.push(callId);
        if (item.judgedTools !== null) judgedTools.push({ call_id: callId, reason: item.judgedTools });
        if (settled !== null) datasetAt(item.folder).writeSettled(line, item.inspection, item.fraction, callId, settled.get(item.call_id));
        else datasetAt(item.folder).write(line, item.inspection, item.fraction, callId);
        if (target.finish !== undefined) origins.add(item.folder, item.origin);
      }
    }
    // Every example is written; what the run holds now is what it held for the whole projection.
    await pauseForTest('projected');
    // Nothing to train on: every trainer refuses an empty training file, so none is renamed into place.
    if (written.size === 0) throw new UserError(noExampleWritten(plan, exportDrops), 1);

    const files: { path: string; dataset: string; split: Split; report: ValidationReport }[] = [];
    const finishedFiles: FinishedFile[] = [];
    const notes: FolderNote[] = [];
    for (const dataset of [...datasets.values()].sort((a, b) => compareText(a.folder, b.folder))) {
      const { folder } = dataset;
      const finished = dataset.finish();
      for (const split of SPLITS) {
        for (const { file, report } of finished.filter((f) => f.split === split)) {
          files.push({ path: path.relative(output.dir, file.finalPath), dataset: folder, split, report });
          finishedFiles.push({ file, dataset: folder, split, examples: report.examples });
        }
      }
      if (dataset.validationNote !== null) notes.push({ folder, reason: dataset.validationNote });
    }
    provenance.write(output);
    const invalid = files.filter((f) => !f.report.ok).map((f) => f.report);
    const report = buildReport({ target, options, reasoning, plan, key: curationOptions.key, exportDrops, dropFixes, judgedTools, files, supplied, inferredDefinitions, inferredCalls, inferredUsed, recordedUsed, reasoningSeen, partial, redactions, notes, roots: discovery.inputs ?? [] });
    return await completeExport({ output, target, curationOptions, plan, report, invalid, files: finishedFiles, sources: origins.summaries(), keys: heldKeys! });
  } catch (error) {
    // Started, maybe never read: no share starts after this, and its workers stop.
    if (projected !== null) stopProjection.abort(new Error('export stopped'));
    output.abort();
    throw error;
  } finally {
    for (const dataset of datasets.values()) dataset.dispose();
    provenance.dispose();
    heldKeys?.dispose();
    keptFile?.dispose();
    writtenExamples?.dispose();
  }
}

/**
 * The end of an export once its files are written: the lists' reports, then, when every file
 * is valid, the target's finish, report.json and the keys, and the rename into place.
 */
export async function completeExport(done: {
  output: OutputDir;
  target: Target;
  curationOptions: CurationOptions;
  plan: CurationPlan;
  report: Record<string, unknown>;
  invalid: ValidationReport[];
  files: FinishedFile[];
  sources: ReadonlyMap<string, SourcesSummary>;
  keys: HeldKeys;
}): Promise<ExportResult> {
  const { output, target, curationOptions, plan, report, invalid } = done;
  if (curationOptions.exclude !== null) report.exclude = curationOptions.exclude.report();
  if (plan.keepList !== null) report.keep_list = plan.keepList.report();
  if (invalid.length > 0) {
    output.abort();
    return { plan, report, invalid };
  }
  await target.finish?.({ output, files: done.files, report, sources: done.sources });
  output.create(REPORT_FILE).write(`${JSON.stringify(report, null, 2)}\n`);
  writeKeptKeys(output, done.keys, { command: 'export', key: curationOptions.key });
  output.commit();
  return { plan, report, invalid };
}

/**
 * A list `traces keep-list` made for other options than this export's (another --key, --trajectories,
 * …) is the global choice of another dataset: said on stderr, with each difference, since the hosts'
 * outputs together would not be the one-machine dataset.
 */
async function warnOfOtherOptions(curation: CurationOptions, options: ExportOptions, file: string): Promise<void> {
  const { readKeepListOptions, keepListDifferences } = await import('../pipeline/keep-list.js');
  const list = await readKeepListOptions(file);
  if (list === null) return;
  const differences = keepListDifferences(list, {
    status: [...curation.selection.statuses].sort().join(','),
    key: curation.key,
    keep: curation.keep,
    trajectories: curation.trajectories,
    near_duplicates: curation.nearDuplicates ?? null,
    group_by: options.groupBy,
    validation_fraction: options.validationFraction,
  });
  if (differences.length > 0) {
    process.stderr.write(`traces: warning: --keep-list ${file} was made with other options than this export's: ${differences.join(', ')}; make the list with the export's options (traces keep-list … ${differences.map((d) => d.split(' (')[0]).join(' ')})\n`);
  }
}

/** The sides a keep-list forces, or null when it is no list of traces keep-list (no `split` column: each export settles its own). */
async function settledSides(file: string): Promise<Map<string, Split> | null> {
  const { readForcedSides } = await import('../pipeline/keep-list.js');
  return readForcedSides(file);
}

/** Why an export has nothing to write: what its records were dropped as, most first. */
export function noExampleWritten(plan: CurationPlan, exportDrops: Record<string, number>): string {
  const dropped = Object.entries({ ...plan.dropped, ...exportDrops })
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1] || compareText(a[0], b[0]));
  const reasons = dropped.map(([reason, n]) => `${reason} ${formatCount(n)}`).join(', ');
  // The dry run stops after the plan: it lists the plan's drops, not the examples' (secret, too_long, …).
  const planOnly = Object.values(exportDrops).every((n) => n === 0);
  return (
    `no example to write: all ${formatCount(plan.recordsRead)} records read were dropped${reasons === '' ? '' : ` (${reasons})`}, ` +
    `and a trainer refuses an empty training file; nothing was written${planOnly ? '. --dry-run -v lists each drop with its reason' : ''}`
  );
}

/**
 * The examples of the kept records, in file order, in shares of kept records (see
 * `planKeptShares`); started now, read later (see `startedNow`).
 */
function projectKept(discovery: Discovery, kept: KeptLines, settings: ProjectionSettings, signal: AbortSignal): AsyncGenerator<ProjectedShare> {
  return startedNow(
    runOverFiles(
      JOBS.project,
      discovery,
      (share) => ({ files: discovery.files, share, ...keptOfShare(kept, share), settings }),
      (result) => ({ records: result.records, bytes: 0 }),
      {
        // A share's examples are held until written: shares stay small.
        planShares: (sizes, threads, forcedShareBytes) =>
          planKeptShares(
            sizes,
            kept.keptOffsets,
            (fileIndex) => isSynalinks(discovery.files[fileIndex]),
            threads,
            forcedShareBytes !== null ? Math.max(1, Math.round(forcedShareBytes / RECORD_BYTES)) : PROJECT_SHARE_RECORDS,
          ),
        label: 'writing',
        signal,
      },
    ),
  );
}

/** First index of the sorted `values` at or past `value`. */
function lowerBound(values: Float64Array, value: number): number {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (values[mid] < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The kept lines (and their offsets) that start in the share's ranges: copies of just
 * those, since a typed array crosses to a worker with its whole buffer. Files of other
 * recorders have every offset 0, so they go whole to the share holding their start.
 */
function keptOfShare(plan: KeptLines, share: WorkShare): { kept: Map<number, Int32Array>; offsets: Map<number, Float64Array> } {
  const kept = new Map<number, Int32Array>();
  const offsets = new Map<number, Float64Array>();
  for (const range of share.ranges) {
    const lines = plan.keptLines.get(range.fileIndex);
    const at = plan.keptOffsets.get(range.fileIndex);
    if (lines === undefined || at === undefined) continue;
    const from = Math.min(range.start, ...share.ranges.filter((r) => r.fileIndex === range.fileIndex).map((r) => r.start));
    const to = Math.max(range.end, ...share.ranges.filter((r) => r.fileIndex === range.fileIndex).map((r) => r.end));
    const lo = lowerBound(at, from);
    const hi = to === Infinity ? at.length : lowerBound(at, to);
    if (hi <= lo) continue;
    kept.set(range.fileIndex, lines.slice(lo, hi));
    offsets.set(range.fileIndex, at.slice(lo, hi));
  }
  return { kept, offsets };
}

export interface ReportInput {
  target: Target;
  options: ExportOptions;
  reasoning: ReasoningMode;
  plan: CurationPlan;
  /** The dedupe key of the plan. */
  key: KeyKind;
  exportDrops: Record<string, number>;
  /** The option that fixes a drop reason, where its drops named one (the summary says it beside the reason). */
  dropFixes?: Record<string, string>;
  /** Examples written with the tool definitions the plan judged them with, and why the run's were refused. */
  judgedTools: { call_id: string; reason: string }[];
  files: { path: string; dataset: string; split: Split; report: ValidationReport }[];
  supplied: ToolDefinition[];
  /** As the examples carry them (redacted). */
  inferredDefinitions: ToolDefinition[];
  /** Distinct recorded calls behind each of `inferredDefinitions`. */
  inferredCalls: number[];
  inferredUsed: Set<string>;
  /** Examples written with definitions their record kept (`TraceRecord.offeredTools`), and those tools' names. */
  recordedUsed: { examples: number; names: Set<string> };
  /** Written examples (and their assistant turns) whose recorded reasoning the target's mode applied to. */
  /** Examples and turns that held recorded reasoning; null where the run does not count them (preference pairs). */
  reasoningSeen: { examples: number; turns: number } | null;
  /** call_ids of examples rebuilt from a prompt holding only the last user turn. */
  partial: string[];
  redactions: Record<string, number>;
  /** Why a dataset has no validation file, for each that has none. */
  notes: FolderNote[];
  /** The roots read, absolute. */
  roots: readonly string[];
}

export interface FolderNote {
  folder: string;
  reason: string;
}

/** A warning about one file or dataset. */
interface SubjectWarning {
  subject: string;
  kind: string;
  detail: string;
  /** The warning on its own line. */
  line: string;
}

/** Warnings of one kind about more subjects than this are said once, naming the first few. */
const SAID_SEPARATELY = 3;

/**
 * One line per kind of warning when many files or datasets share it (a --group-by export of
 * thousands of modules warned thousands of times): the report's `files` keeps each.
 */
function warningsOnce(warnings: readonly SubjectWarning[], subjects: string): string[] {
  const byKind = new Map<string, SubjectWarning[]>();
  for (const w of warnings) addToList(byKind, w.kind, w);
  return [...byKind].flatMap(([kind, list]) => {
    if (list.length <= SAID_SEPARATELY) return list.map((w) => w.line);
    const named = list.slice(0, SAID_SEPARATELY).map((w) => w.subject).join(', ');
    return [`${kind} in ${formatCount(list.length)} ${subjects} (${named}, … ${formatCount(list.length - SAID_SEPARATELY)} more; report.json lists each), the first: ${list[0].detail}`];
  });
}

/**
 * With a model folder or --train-on last: how the counts were made and the tokens of each
 * split (all of them, and those trained on). Absent otherwise, so today's reports stay as they were.
 */
function modelReport(options: ExportOptions, files: ReportInput['files']): Record<string, unknown> {
  if (typeof options.tokenizer === 'string' && options.trainOn === 'all') return {};
  const bySplit = Object.fromEntries(
    SPLITS.map((split) => {
      const mine = files.filter((f) => f.split === split).map((f) => f.report.tokens);
      return [split, { tokens: mine.reduce((n, t) => n + t.total.total, 0), trained_tokens: mine.reduce((n, t) => n + t.assistant.total, 0) }];
    }),
  );
  return {
    ...(typeof options.tokenizer === 'string' ? {} : { chat_template: options.tokenizer.chatTemplate, max_seq_length: options.maxSeqLength }),
    train_on: options.trainOn,
    tokens_by_split: bySplit,
  };
}

export function buildReport(input: ReportInput): Record<string, unknown> {
  const { target, options, plan, files } = input;
  const fileWarnings: SubjectWarning[] = [];
  const perFile = files.map(({ path: file, dataset, split, report }) => {
    for (const w of report.warnings) {
      const detail = `${w.message}${w.lines.length > 0 ? ` (lines ${w.lines.join(', ')}${w.count > w.lines.length ? ', …' : ''})` : ''}`;
      fileWarnings.push({ subject: file, kind: w.code, detail, line: `${file}: ${w.code}: ${detail}` });
    }
    // The file's validation as `validate --json` prints it, its path relative to --out.
    return { ...validationJson(report), file, dataset: dataset === '' ? null : dataset, split };
  });
  const warnings = warningsOnce(fileWarnings, 'files');
  const examples = Object.fromEntries(SPLITS.map((s) => [s, files.filter((f) => f.split === s).reduce((n, f) => n + f.report.examples, 0)]));
  // The trainer's minimum, of each dataset's training split over all its shards: the run's last line says it.
  const refused = [...new Set(files.map((f) => f.dataset))].flatMap((dataset) => {
    const training = files.filter((f) => f.dataset === dataset && f.split === 'training');
    const reason = tooFewExamples(target, training.reduce((n, f) => n + f.report.examples, 0));
    return reason === null ? [] : [{ dataset: dataset === '' ? null : dataset, files: training.map((f) => f.path), reason }];
  });
  warnings.push(...(target.reportWarnings?.({ dropped: input.exportDrops, groupBy: options.groupBy, supplied: input.supplied, trainOn: options.trainOn, refusedTrajectoryStep: plan.refusedLaterStep }) ?? []));
  if (input.partial.length > 0) {
    warnings.push(`${input.partial.length} example(s) are partial: rebuilt from prompts that hold only the last user turn (earlier turns come from the run, none invented); see partial_call_ids`);
  }
  if (input.judgedTools.length > 0) {
    warnings.push(
      `${formatCount(input.judgedTools.length)} example(s) carry the tool definitions inferred from their own calls: with those inferred from every call the target refused them (${input.judgedTools[0].reason}); see judged_tools_examples`,
    );
  }
  const noValidation = 'no validation file written';
  warnings.push(
    ...warningsOnce(
      input.notes.map(({ folder, reason }) => ({ subject: folder, kind: noValidation, detail: reason, line: `${noValidation}${folder === '' ? '' : ` for ${folder}`}: ${reason}` })),
      'datasets',
    ),
  );
  const inferredAt = input.inferredDefinitions.flatMap((d, i) => (input.inferredUsed.has(d.function.name) ? [i] : []));
  const inferred = inferredAt.map((i) => input.inferredDefinitions[i]);
  const tokens = Object.fromEntries(SPLITS.map((s) => [s, files.filter((f) => f.split === s).reduce((n, f) => n + f.report.tokens.total.total, 0)]));
  return {
    ...reportHead('export', options.invocation, input.roots, options.scrub),
    format: target.name,
    // The target's own options (hf: file_format, hf_shape), where it has any.
    ...(target.settings !== undefined ? { format_options: Object.fromEntries(Object.entries(target.settings).map(([k, v]) => [k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), v])) } : {}),
    reasoning: input.reasoning,
    tokenizer: specName(options.tokenizer),
    ...modelReport(options, files),
    validation_fraction: options.validationFraction,
    seed: options.seed,
    records_read: plan.recordsRead,
    damaged_lines: plan.damagedLines,
    // The records handed to the target: those its verdict refused in the plan too.
    kept_after_curation: handedToTarget(plan),
    key: input.key,
    ...(plan.mergedAcrossModules !== null ? { merged_across_modules: plan.mergedAcrossModules } : {}),
    examples,
    tokens,
    dropped: droppedCounts(EXPORT_REASONS, { ...plan.dropped, ...input.exportDrops }),
    ...(Object.keys(input.dropFixes ?? {}).length > 0 ? { drop_fixes: input.dropFixes } : {}),
    ...(plan.quality !== null ? { quality: scrubbedQualityReport(plan.quality, options.scrub) } : {}),
    context_limit_warning_tokens: CONTEXT_WARNING,
    scrub: scrubReport(options.scrub, input.redactions),
    tools: {
      supplied: input.supplied.map((d) => d.function.name),
      // Tools defined as their records kept them (the tools offered with the call), and in how many examples.
      recorded: [...input.recordedUsed.names].sort(compareText),
      recorded_examples: input.recordedUsed.examples,
      inferred: inferred.map((d) => d.function.name),
      inferred_definitions: inferred,
      // Distinct recorded calls each inferred definition was made from.
      inferred_calls: Object.fromEntries(inferredAt.map((i) => [input.inferredDefinitions[i].function.name, input.inferredCalls[i]])),
      // The whole tool list on every line, plain answers too: the service reads one schema per file.
      every_line: target.everyLineTools === true && (input.supplied.length > 0 || inferred.length > 0),
    },
    // Examples and assistant turns holding recorded reasoning, to which `reasoning` (keep, drop, inline) applied.
    reasoning_recorded: input.reasoningSeen,
    files: perFile,
    // Training files the trainer refuses as they are (too few examples): written, and said last.
    refused_by_trainer: refused,
    // Written with the tool definitions the plan's verdict judged them with: the run's made the target refuse them.
    judged_tools_examples: input.judgedTools,
    partial_examples: input.partial.length,
    partial_call_ids: input.partial,
    warnings,
  };
}
