/**
 * The contract every export format implements: turn recorded messages into one
 * training example (a JSONL line), attach tool definitions, and check lines of
 * a file someone hands us. One module per format implements it.
 */
import type { Message } from '../record.js';
import type { ImageFailure } from './images.js';
import type { ToolDefinition } from './tools.js';

export type TargetName = 'openai' | 'nemo' | 'nemo-customizer';
export const TARGET_NAMES: readonly TargetName[] = ['openai', 'nemo', 'nemo-customizer'];

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
  | 'loss_mask_inconsistent';

export interface ValidationError {
  code: ErrorClass;
  severity: Severity;
  /** 1-based line number in the file. */
  line: number;
  message: string;
}

export interface Target {
  readonly name: TargetName;
  /** Reasoning modes this format can express; the first is the default. */
  readonly reasoningModes: readonly ReasoningMode[];
  readonly defaultReasoning: ReasoningMode;
  /**
   * The trainer refuses a training file with fewer examples than this (0: no minimum); a
   * validation file has none unless the trainer documents one (OpenAI documents 10 for
   * training data and nothing for a validation file).
   */
  readonly minExamples: number;
  /**
   * The service infers one row schema per file from its first line: when any example has
   * tools, every line carries the whole tool list, plain answers too (a line without `tools`
   * after one with them is refused, and the other way round).
   */
  readonly oneSchemaPerFile?: boolean;
  /** The service rejects an empty validation file (an export then writes none). */
  readonly rejectsEmptyValidation?: boolean;
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
   * when there is none), and the `--chat-template FILE` the trainer must be given too. Absent:
   * the export names no next step.
   */
  nextSteps?(files: { training: readonly string[]; validation: readonly string[]; chatTemplate?: string | null }): string[];
  /** Checks one parsed line of a file in this format; independent of `project`. */
  validateLine(value: unknown, lineNo: number): ValidationError[];
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
