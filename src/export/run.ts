/**
 * `traces export`: the curation plan with export defaults, then one training example per
 * kept record, split by first-user-message group, validated as written, and renamed into
 * place only when every file would be accepted.
 */
import path from 'node:path';
import { UserError } from '../errors.js';
import { planCuration, type CurationOptions, type CurationPlan, type Drop } from '../pipeline/curate.js';
import type { Split } from '../pipeline/split.js';
import { META_DIR, writeKeptKeys } from '../output/kept-keys.js';
import { OutputDir } from '../output/output-dir.js';
import type { Discovery } from '../sources/discover.js';
import { runOverFiles } from '../parallel/run-shares.js';
import {
  getTarget,
  loadToolsFile,
  ToolInference,
  type EncodingName,
  type ReasoningMode,
  type Target,
  type ToolDefinition,
  type ValidationReport,
} from '../targets/index.js';
import { Dataset, SPLITS } from './dataset.js';
import type { ProjectionSettings, ScrubSettings } from './project-share.js';

export interface ExportOptions {
  format: string;
  out: string;
  force: boolean;
  reasoning: ReasoningMode | undefined;
  toolsFile: string | undefined;
  validationFraction: number;
  seed: string;
  tokenizer: EncodingName;
  maxExampleTokens: number | null;
  maxFileMb: number | null;
  groupBy: 'none' | 'module';
  manifest: string | undefined;
  scrub: ScrubSettings | null;
}

/** OpenAI's Files API limit; other targets have none we know of. */
const OPENAI_FILE_LIMIT = 512 * 1024 * 1024;
const CONTEXT_WARNING = 65_536;
const PROJECT_SHARE_BYTES = 4 << 20;

export interface ExportResult {
  plan: CurationPlan;
  report: Record<string, unknown>;
  invalid: ValidationReport[];
}

function resolveReasoning(target: Target, requested: ReasoningMode | undefined): ReasoningMode {
  const mode = requested ?? target.defaultReasoning;
  if (!target.reasoningModes.includes(mode)) {
    throw new UserError(`--reasoning ${mode}: ${target.name} supports ${target.reasoningModes.join(', ')}`);
  }
  return mode;
}

export async function runExport(discovery: Discovery, curationOptions: CurationOptions, options: ExportOptions): Promise<ExportResult> {
  let target: Target;
  try {
    target = getTarget(options.format);
  } catch {
    throw new UserError(`--format ${options.format}: expected openai, nemo or nemo-customizer`);
  }
  const reasoning = resolveReasoning(target, options.reasoning);
  if (!(options.validationFraction >= 0 && options.validationFraction <= 1)) {
    throw new UserError(`--validation-fraction ${options.validationFraction}: expected a number from 0 to 1`);
  }
  let supplied: ToolDefinition[] = [];
  if (options.toolsFile !== undefined) {
    try {
      supplied = await loadToolsFile(options.toolsFile);
    } catch (error) {
      throw new UserError(`--tools ${(error as Error).message}`);
    }
  }
  const output = OutputDir.open(options.out, { force: options.force, roots: discovery.files.map((f) => f.root) });
  try {
    const manifest = options.manifest !== undefined ? output.createAt(path.resolve(options.manifest)) : output.create(path.join(META_DIR, 'manifest.jsonl'));
    const exportDrops: Record<string, number> = {};
    const drop = (d: Drop) => manifest.writeLine(JSON.stringify(d));
    const inference = new ToolInference();
    const plan = await planCuration(discovery, curationOptions, drop, (messages) => inference.observe(messages));

    const fileLimit = options.maxFileMb !== null ? options.maxFileMb * 1024 * 1024 : target.name === 'openai' ? OPENAI_FILE_LIMIT : Infinity;
    const datasets = new Map<string, Dataset>();
    const datasetAt = (folder: string): Dataset => {
      let dataset = datasets.get(folder);
      if (dataset === undefined) datasets.set(folder, (dataset = new Dataset(output, folder, target, options.tokenizer, fileLimit)));
      return dataset;
    };
    if (options.groupBy === 'none') datasetAt('');

    const settings: ProjectionSettings = {
      scrub: options.scrub,
      format: target.name,
      reasoning,
      supplied,
      inferred: inference.definitions(),
      // NeMo Customizer reads one schema per file: when any example has tools, every line carries them.
      everyLineTools: target.name === 'nemo-customizer' ? [...new Set([...inference.names(), ...supplied.map((d) => d.function.name)])] : null,
      maxExampleTokens: options.maxExampleTokens,
      seed: options.seed,
      validationFraction: options.validationFraction,
      tokenizer: options.tokenizer,
      groupByModule: options.groupBy === 'module',
    };
    const inferredUsed = new Set<string>();
    const redactions: Record<string, number> = {};
    const partial: string[] = [];
    const projected = runOverFiles(
      'project',
      discovery,
      (share) => ({
        files: discovery.files,
        share,
        kept: new Map(share.ranges.filter((r) => plan.keptLines.has(r.fileIndex)).map((r) => [r.fileIndex, plan.keptLines.get(r.fileIndex)!])),
        settings,
      }),
      (result) => ({ records: result.records, bytes: 0 }),
      // A share's examples are held until written: keep shares small.
      { maxShareBytes: PROJECT_SHARE_BYTES, label: 'writing' },
    );
    for await (const { items, lines } of projected) {
      let lineStart = 0;
      for (const item of items) {
        if (item.kind === 'drop') {
          const { kind, ...dropped } = item;
          exportDrops[item.reason] = (exportDrops[item.reason] ?? 0) + 1;
          drop(dropped);
          continue;
        }
        for (const name of item.inferredTools) inferredUsed.add(name);
        if (item.redactions !== null) for (const [name, n] of Object.entries(item.redactions)) redactions[name] = (redactions[name] ?? 0) + n;
        if (item.partial !== null) partial.push(item.partial);
        datasetAt(item.folder).splits[item.split].write(lines.subarray(lineStart, lineStart + item.bytes), item.inspection);
        lineStart += item.bytes;
      }
    }

    const files: { path: string; dataset: string; split: Split; report: ValidationReport }[] = [];
    for (const [folder, dataset] of [...datasets].sort(([a], [b]) => a.localeCompare(b))) {
      for (const split of SPLITS) {
        for (const { file, report } of dataset.splits[split].finish()) {
          files.push({ path: path.relative(output.dir, file.finalPath), dataset: folder, split, report });
        }
      }
    }
    const invalid = files.filter((f) => !f.report.ok).map((f) => f.report);
    const report = buildReport({ target, options, reasoning, plan, exportDrops, files, supplied, inference, inferredUsed, partial, redactions });
    if (curationOptions.exclude !== null) report.exclude = curationOptions.exclude.report();
    if (invalid.length > 0) {
      output.abort();
      return { plan, report, invalid };
    }
    output.create('report.json').write(`${JSON.stringify(report, null, 2)}\n`);
    writeKeptKeys(output, plan.keptKeys, { command: 'export', key: curationOptions.key });
    output.commit();
    return { plan, report, invalid };
  } catch (error) {
    output.abort();
    throw error;
  }
}

interface ReportInput {
  target: Target;
  options: ExportOptions;
  reasoning: ReasoningMode;
  plan: CurationPlan;
  exportDrops: Record<string, number>;
  files: { path: string; dataset: string; split: Split; report: ValidationReport }[];
  supplied: ToolDefinition[];
  inference: ToolInference;
  inferredUsed: Set<string>;
  /** call_ids of examples rebuilt from a prompt holding only the last user turn. */
  partial: string[];
  redactions: Record<string, number>;
}

function buildReport(input: ReportInput): Record<string, unknown> {
  const { target, options, plan, files } = input;
  const warnings: string[] = [];
  const perFile = files.map(({ path: file, dataset, split, report }) => {
    for (const w of report.warnings) {
      // An empty validation file is what --validation-fraction 0 asks for, not a problem.
      if (w.code === 'too_few_examples' && split === 'validation' && report.examples === 0) continue;
      // Without --group-by the training total (over every shard) is checked once below: a file's own count would say it twice.
      if (w.code === 'too_few_examples' && split === 'training' && options.groupBy === 'none') continue;
      warnings.push(`${file}: ${w.code}: ${w.message}${w.lines.length > 0 ? ` (lines ${w.lines.join(', ')}${w.count > w.lines.length ? ', …' : ''})` : ''}`);
    }
    return {
      file,
      dataset: dataset === '' ? null : dataset,
      split,
      examples: report.examples,
      tokens: report.tokens,
      over_65536_tokens: report.overTokenLimit,
      missing_system: report.missingSystem,
      missing_user: report.missingUser,
      errors: report.errors,
      warnings: report.warnings,
    };
  });
  const examples = Object.fromEntries(SPLITS.map((s) => [s, files.filter((f) => f.split === s).reduce((n, f) => n + f.report.examples, 0)]));
  if (options.groupBy === 'none' && target.minExamples > 0 && examples.training < target.minExamples) {
    warnings.push(`only ${examples.training} training examples: ${target.name} needs at least ${target.minExamples}`);
  }
  if (target.name === 'nemo-customizer' && (input.exportDrops.not_representable ?? 0) > 0 && options.groupBy !== 'module') {
    warnings.push('some agent steps hold tool results, which NeMo Customizer cannot represent; --trajectories all keeps the first steps, which end at the tool call');
  }
  if (input.partial.length > 0) {
    warnings.push(`${input.partial.length} example(s) are partial: rebuilt from prompts that hold only the last user turn (earlier turns come from the run, none invented); see partial_call_ids`);
  }
  const inferred = input.inference.definitions().filter((d) => input.inferredUsed.has(d.function.name));
  return {
    format: target.name,
    reasoning: input.reasoning,
    tokenizer: options.tokenizer,
    validation_fraction: options.validationFraction,
    seed: options.seed,
    records_read: plan.recordsRead,
    damaged_lines: plan.damagedLines,
    kept_after_curation: plan.kept,
    examples,
    dropped: { ...plan.dropped, ...input.exportDrops },
    context_limit_warning_tokens: CONTEXT_WARNING,
    scrub:
      options.scrub === null
        ? null
        : {
            kinds: [...options.scrub.options.kinds].map((k) => (k === 'secret' ? 'secrets' : k)),
            custom_rules: (options.scrub.options.rules ?? []).map((r) => r.name),
            drop_on_secrets: options.scrub.dropOnSecrets,
            redactions: Object.fromEntries(Object.entries(input.redactions).sort(([a], [b]) => a.localeCompare(b))),
          },
    tools: {
      supplied: input.supplied.map((d) => d.function.name),
      inferred: inferred.map((d) => d.function.name),
      inferred_definitions: inferred,
    },
    files: perFile,
    partial_examples: input.partial.length,
    partial_call_ids: input.partial,
    warnings,
  };
}
