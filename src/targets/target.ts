/**
 * The contract every export format implements: turn recorded messages into one
 * training example (a JSONL line), attach tool definitions, and check lines of
 * a file someone hands us. One module per format implements it. With the contract live the
 * types the shared modules pass each other (tool definitions, meters, validation reports), so
 * this module imports no other module of targets/ but leaf types, and any of them may import it.
 */
import type { Message } from '../record.js';
import type { ImageFailure } from './images.js';
import type { OutputDir, OutputFile } from '../output/output-dir.js';
import type { Split } from '../pipeline/split.js';
import type { Distribution } from './distribution.js';
import type { ExampleTokens } from './tokens.js';

/** A target's name as the registry (index.ts) lists it: `--format NAME`. */
export type TargetName = string;

/**
 * What happens to provider reasoning (`reasoning_content`):
 * keep it as a field, drop it, or inline it as `<think>…</think>` before the content.
 */
export type ReasoningMode = 'keep' | 'drop' | 'inline';

export interface ProjectOptions {
  /** Defaults to the target's `defaultReasoning`. Must be one of its `reasoningModes`. */
  reasoning?: ReasoningMode;
}

/** Why a record produced no example. */
export type ProjectionFailure =
  /** Nothing to learn: no messages, or a completion with neither text nor tool calls. */
  | 'empty'
  /** The last message is not the assistant's (no completion was recorded). */
  | 'no_completion'
  /** The format cannot express something the record holds (tool results for the customizer, audio parts, …). */
  | 'not_representable'
  /** Text holds strings such as `<|endoftext|>` that get the whole file rejected. */
  | 'special_token'
  /** Tool calls and results out of the order the chat API takes (see `toolSequenceProblem`). */
  | 'tool_sequence'
  /** Beyond OpenAI's image limits (see `imageProblem`): an image over 10 MB, not JPEG/PNG/WEBP, or more than 64. */
  | ImageFailure;

export type JsonObject = Record<string, unknown>;

export type Projection =
  | {
      ok: true;
      /** The line to write, without tool definitions (see `Target.attachTools`). */
      example: JsonObject;
      /** Names of the tools the example calls, sorted, without duplicates. */
      toolNames: string[];
    }
  | { ok: false; reason: ProjectionFailure; detail: string };

export type Severity = 'error' | 'warning';

export type ErrorClass =
  // Line level.
  | 'invalid_json'
  | 'blank_line'
  | 'bom'
  | 'line_separator'
  | 'text_too_long'
  | 'line_too_long'
  // The OpenAI cookbook's classes.
  | 'data_type'
  | 'missing_messages_list'
  | 'message_missing_key'
  | 'message_unrecognized_key'
  | 'unrecognized_role'
  | 'missing_content'
  | 'example_missing_assistant_message'
  // Content and reasoning.
  | 'content_type'
  | 'reasoning_not_string'
  | 'content_and_thinking'
  | 'last_message_not_assistant'
  | 'special_token'
  | 'top_level_key'
  | 'weight_invalid'
  // Tool calls and definitions.
  | 'tool_call_malformed'
  | 'tool_name_invalid'
  | 'arguments_type'
  | 'tool_call_id_unmatched'
  | 'tool_missing_tool_call_id'
  | 'tool_undeclared'
  | 'tool_definition_invalid'
  | 'tool_definition_incomplete'
  | 'parallel_tool_calls_conflict'
  | 'tool_sequence'
  | ImageFailure
  // Reported by `validateFile` from more than one line's content.
  | 'no_examples'
  | 'too_few_examples'
  | 'over_token_limit'
  | 'schema_varies'
  // Found by rendering with a model's own chat template and tokenizer (--tokenizer DIR).
  | 'template_error'
  | 'double_encoded'
  | 'model_special_token'
  | 'no_trainable_tokens'
  | 'loss_mask_inconsistent'
  // A key whose value is null: one the example never had, added by a loader that unified the rows' keys.
  | 'invented_key'
  // A dataset folder (`validate DIR`): its card against its files, its files' schema.
  | 'card_mismatch'
  | 'schema_invented_keys'
  // A data file that is a symbolic link: read through here, not on the Hub; traces never writes through one.
  | 'linked_file';

export interface ValidationError {
  code: ErrorClass;
  severity: Severity;
  /** 1-based line number in the file. */
  line: number;
  message: string;
}

/** What a trainer does to a line before the chat template sees it (`--tokenizer DIR` renders that). */
export interface TrainerLoader {
  /** Who raises, in messages: "AutoModel's ChatDataset". */
  readonly name: string;
  /** The messages and tools the template gets; throws `TrainerRejects` (model/trainer.ts) where the loader raises. */
  input(example: Record<string, unknown>): { messages: Record<string, unknown>[]; tools: unknown[] | null };
  /** The loader raises when the assistant spans cannot be located by prefix renders (else a warning). */
  readonly raisesOnInconsistentMask: boolean;
}

/** A tool's definition in OpenAI's shape, as every target declares tools (tools.ts reads, infers and completes them). */
export interface ToolDefinition {
  type: 'function';
  function: {
    name: string;
    description?: string;
    parameters?: JsonObject;
    strict?: boolean;
  };
}

/** An option of one target's own (`--file-format`), added to `export`; given with another target, it is refused. */
export interface TargetOption {
  /** As commander takes it: `--file-format <format>`. */
  readonly flags: string;
  readonly description: string;
  readonly choices: readonly string[];
  readonly defaultValue: string;
}

/** What `validateFolder` gets: the meter and the token limit, as for files. */
export interface FolderValidation {
  meter: ExampleMeter | null;
  tokenLimit: number;
}

/** A problem found in one example; the validator adds the line. */
export interface Finding {
  code: ErrorClass;
  severity: Severity;
  message: string;
  /** The option that fixes it, where traces knows one (`--chat-template …/qwen3-training.jinja`): a drop's summary line names it. */
  fix?: string;
}

export interface ExampleMeasure {
  /** `assistant` is the tokens trained on. */
  tokens: ExampleTokens;
  findings: Finding[];
}

export interface ExampleMeter {
  /** What reports name the counts by: the encoding, or the model folder as given. */
  readonly name: string;
  /** True when the counts are of the rendered chat template (exact), false for the encoding estimate. */
  readonly rendersTemplate: boolean;
  /** Never throws on a malformed example (validation reports those). */
  measure(example: unknown): ExampleMeasure;
}

export interface ErrorClassSummary {
  code: ErrorClass;
  severity: Severity;
  /** Lines with this class (a line counts once however many messages have it). */
  count: number;
  /** The first few line numbers, ascending. */
  lines: number[];
  /** The message of the first occurrence. */
  message: string;
}

/** A file's report as validate prints it (validate.ts). */
export interface ValidationReport {
  file: string;
  target: TargetName;
  /** Non-blank lines: each is meant to be one example. */
  examples: number;
  /** Summaries with severity error, in order of first occurrence. */
  errors: ErrorClassSummary[];
  warnings: ErrorClassSummary[];
  /** Lines with at least one error. */
  linesWithErrors: number;
  missingSystem: number;
  missingUser: number;
  /** `encoding` names the encoding, or the model folder whose template and tokenizer counted; `assistant` is the tokens trained on. */
  tokens: { encoding: string; total: Distribution; assistant: Distribution };
  tokenLimit: number;
  overTokenLimit: number;
  /** True when no error was found (warnings allowed). */
  ok: boolean;
}

/** What a report's target-specific warnings are made from. */
export interface ReportFacts {
  dropped: Readonly<Record<string, number>>;
  groupBy: 'none' | 'module';
  supplied: readonly ToolDefinition[];
  trainOn: 'all' | 'last';
  /** A refused agent step other steps gave way to, so runs were exported up to an earlier step. */
  refusedTrajectoryStep: boolean;
}

/** One file written by an export, validated, before it is renamed into place. */
export interface FinishedFile {
  file: OutputFile;
  /** The dataset's folder under --out ('' without --group-by). */
  dataset: string;
  split: Split;
  examples: number;
}

/** What `Target.finish` gets: the files of every dataset, the report as it stands, and the output to add files to. */
export interface FinishContext {
  output: OutputDir;
  files: readonly FinishedFile[];
  /** report.json's content (finish may add to it); its `arguments` are the command line, scrubbed. */
  report: Record<string, unknown>;
  /** Where each dataset's written examples came from, by dataset folder. */
  sources: ReadonlyMap<string, SourcesSummary>;
}

/** Where a dataset's examples came from, their recorded names scrubbed as the examples are. */
export interface SourcesSummary {
  /** Source kinds (synalinks, ask, klieo) with the recorder versions met, sorted. */
  recorders: { source: string; versions: string[] }[];
  /** By program, its modules with their example counts, sorted. */
  programs: { program: string; modules: { module: string; examples: number }[] }[];
  models: { model: string; examples: number }[];
  /** ISO times of the earliest and latest recorded call, null when none had a time. */
  period: { from: string; to: string } | null;
}

/** A pair's row, or why the format cannot write it. */
/** A pair's row, or why it cannot be written and whose fault that is: one side's answer, or the row (the prompt both share). */
export type PairRow = { ok: true; row: JsonObject } | { ok: false; reason: ProjectionFailure; detail: string; side: 'chosen' | 'rejected' | 'both' };

/**
 * What a preference format adds to its target (preference-rows.ts): each side of a pair is the
 * example of its `base` target (projection, reasoning, tools, token counts), and the format only
 * decides how the prompt and the two answers sit in one row.
 */
export interface PreferenceRows {
  /** The target whose examples the sides are. */
  readonly base: TargetName;
  /** The row of a pair: the base example's messages before the completion, both completions as the base wrote them, and tool definitions. */
  row(prompt: JsonObject[], chosen: JsonObject, rejected: JsonObject, tools: ToolDefinition[]): PairRow;
  /** The two conversations a row holds, as base examples (validation, token counts), or null when it holds none. */
  sides(row: unknown): { chosen: JsonObject; rejected: JsonObject } | null;
}

export interface Target {
  readonly name: TargetName;
  /** Set for a preference format: its rows are pairs of answers to one prompt (the pair finder, pipeline/pairs.ts). */
  readonly preference?: PreferenceRows;
  /** One line for --help: the trainer or service that reads it. */
  readonly description?: string;
  /**
   * Names a user may give --format for a trainer that reads this format (`trl`, `axolotl`), in
   * lower case: `--format trl` is answered with the format to give (`export.ts`).
   */
  readonly readBy?: readonly string[];
  /** Reasoning modes this format can express; the first is the default. */
  readonly reasoningModes: readonly ReasoningMode[];
  readonly defaultReasoning: ReasoningMode;
  /**
   * The trainer refuses a training file with fewer examples than this (0: no minimum); a
   * validation file has none unless the trainer documents one (OpenAI documents 10 for
   * training data and nothing for a validation file).
   */
  readonly minExamples: number;
  /** The service rejects an empty validation file (an export then writes none). */
  readonly rejectsEmptyValidation?: boolean;
  /** Why an empty validation file is not written, where `rejectsEmptyValidation` has another reason than a service's refusal. */
  readonly noEmptyValidation?: string;
  /**
   * Builds one example from recorded messages (completion last).
   * Throws only on a programming error: a reasoning mode not in `reasoningModes`.
   */
  project(messages: Message[], opts?: ProjectOptions): Projection;
  /** Returns the example with `tools` set (unchanged when `tools` is empty). */
  attachTools(example: JsonObject, tools: ToolDefinition[]): JsonObject;
  /**
   * `--train-on last`, where the format can say it in the file: the example with every
   * assistant turn but the last left out of training. Absent when it cannot.
   */
  trainOnLastTurn?(example: JsonObject): JsonObject;
  /**
   * Where the written files go: the lines an export ends with (`next: …`), given the
   * training and validation files as the user would name them (paths as written, empty
   * when there is none), and what the counts were made with, which the trainer must be given
   * too: the `--chat-template FILE`, the `--tokenizer` model folder, the `--train-on` choice.
   * Absent: the export names no next step.
   */
  nextSteps?(files: { training: readonly string[]; validation: readonly string[]; chatTemplate?: string | null; modelFolder?: string | null; trainOn?: string }): string[];
  /** Checks one parsed line of a file in this format; independent of `project`. */
  validateLine(value: unknown, lineNo: number): ValidationError[];
  /** A split's file is cut into shards past this many bytes when --max-file-mb is not given (absent: never). */
  readonly defaultFileBytes?: number;
  /** Every line carries every tool's definition (a loader that reads one schema per file). */
  readonly everyLineTools?: boolean;
  /** Why `--train-on last` cannot be asked of this target; absent when it can. */
  readonly trainOnLastRefusal?: string;
  /** Its loader takes the first line's top-level keys as the file's schema: later lines with others are warned about. */
  readonly schemaFromFirstLine?: boolean;
  /** What its trainer does to a line before the chat template; absent: the template gets the line as written. */
  readonly trainer?: TrainerLoader;
  /** Options of its own, for `export` and `validate`; `configure` gets their values. */
  readonly options?: readonly TargetOption[];
  /** The target set up by its options' values (attribute names, as commander gives them). */
  configure?(values: Readonly<Record<string, string>>): Target;
  /** The values `configure` was given (they cross to worker threads with the target's name). */
  readonly settings?: Readonly<Record<string, string>>;
  /** The name under --out of a split's shard `index` of `count` (0-based); absent: `training.jsonl`, `training-001.jsonl`, …. */
  fileName?(split: Split, index: number, count: number): string;
  /**
   * The row as written, from the example the stages worked on (redaction, tools, tokens see
   * `messages`); absent: the example as it is.
   */
  written?(example: JsonObject): JsonObject;
  /** A written row back as `{messages, tools}` for the token counts and the roles; absent: the row is that already. */
  rowMessages?(row: JsonObject): JsonObject;
  /**
   * `traces validate DIR`: a dataset folder this target writes, checked whole (its files, and
   * what describes them); absent: validate takes files only.
   */
  validateFolder?(dir: string, options: FolderValidation): Promise<ValidationReport[]>;
  /** Report warnings of its own. */
  reportWarnings?(facts: ReportFacts): string[];
  /**
   * After every file is written and validated, before anything is renamed into place: files it
   * converts (to Parquet) or adds beside them (a dataset card). A throw aborts the export.
   */
  finish?(context: FinishContext): Promise<void>;
}

/** The example with weight 0 on every assistant turn but the last: what `--train-on last` trains. */
export function lastTurnWeighted(example: JsonObject): JsonObject {
  const messages = example.messages as JsonObject[];
  let last = messages.length - 1;
  while (last >= 0 && messages[last].role !== 'assistant') last--;
  return { ...example, messages: messages.map((m, i) => (m.role === 'assistant' && i !== last ? { ...m, weight: 0 } : m)) };
}

/** `a`, `a and b`, `a, b and c`: the files a next step names. */
export function namedFiles(files: readonly string[]): string {
  return files.length <= 1 ? (files[0] ?? '') : `${files.slice(0, -1).join(', ')} and ${files.at(-1)}`;
}

/** Guards `project` against a mode the format cannot express. */
export function resolveReasoning(target: Target, opts: ProjectOptions | undefined): ReasoningMode {
  const mode = opts?.reasoning ?? target.defaultReasoning;
  if (!target.reasoningModes.includes(mode)) {
    throw new Error(
      `target ${target.name} cannot ${mode} reasoning (supported: ${target.reasoningModes.join(', ')})`,
    );
  }
  return mode;
}
