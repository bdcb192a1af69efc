/**
 * What every preference format shares (openai-preference, hf-preference, nemo-preference): a
 * row holds one prompt and two answers to it, each side the example of a base target, so a
 * row is checked as its two conversations are by the base's own rules, after the format's
 * top-level shape. Targets built here name their base; no module names them.
 */
import type { Message } from '../record.js';
import { isObject } from './messages.js';
import type { ErrorClass, JsonObject, PairRow, PreferenceRows, ProjectOptions, Projection, Target, TargetName, ToolDefinition, ValidationError } from './target.js';

export interface PreferenceSpec {
  name: TargetName;
  description: string;
  base: Target;
  minExamples: number;
  rejectsEmptyValidation?: boolean;
  /** Whether the rejected answer may be empty (an `empty` pair): the service takes an empty string. */
  emptyRejected: boolean;
  row(prompt: JsonObject[], chosen: JsonObject, rejected: JsonObject, tools: ToolDefinition[]): PairRow;
  sides(row: JsonObject): { chosen: JsonObject; rejected: JsonObject } | null;
  /** The row's top-level shape; errors here stop the side checks. */
  shape(row: JsonObject, error: (code: ErrorClass, message: string, severity?: 'error' | 'warning') => void): void;
  /** Where the files go: the export's last lines. */
  nextSteps?: Target['nextSteps'];
}

export function preferenceTarget(spec: PreferenceSpec): Target {
  const { base } = spec;
  const preference: PreferenceRows = {
    base: base.name,
    row: spec.row,
    sides: (row) => (isObject(row) ? spec.sides(row) : null),
  };
  return {
    name: spec.name,
    description: spec.description,
    preference,
    reasoningModes: base.reasoningModes,
    defaultReasoning: base.defaultReasoning,
    minExamples: spec.minExamples,
    rejectsEmptyValidation: spec.rejectsEmptyValidation,
    trainOnLastRefusal: 'a preference row trains the two answers to its prompt only: leave --train-on out',
    nextSteps: spec.nextSteps,
    defaultFileBytes: base.defaultFileBytes,
    project(messages: Message[], opts?: ProjectOptions): Projection {
      return base.project(messages, opts);
    },
    attachTools(example: JsonObject, tools: ToolDefinition[]): JsonObject {
      return base.attachTools(example, tools);
    },
    // A row is counted as its chosen conversation (the prompt and the preferred answer).
    rowMessages: (row) => spec.sides(row)?.chosen ?? row,
    validateLine(value: unknown, lineNo: number): ValidationError[] {
      const errors: ValidationError[] = [];
      const seen = new Set<string>();
      const add = (code: ErrorClass, message: string, severity: 'error' | 'warning' = 'error'): void => {
        if (seen.has(`${code}\0${message}`)) return;
        seen.add(`${code}\0${message}`);
        errors.push({ code, severity, line: lineNo, message });
      };
      if (!isObject(value)) {
        add('data_type', `the line is ${Array.isArray(value) ? 'a list' : value === null ? 'null' : typeof value}, not a JSON object`);
        return errors;
      }
      spec.shape(value, add);
      if (errors.some((e) => e.severity === 'error')) return errors;
      const sides = spec.sides(value);
      if (sides === null) return errors;
      for (const [name, side] of [['chosen', sides.chosen], ['rejected', sides.rejected]] as const) {
        for (const e of base.validateLine(side, lineNo)) {
          // An empty rejected answer is what an `empty` pair teaches against, where the service takes one.
          if (name === 'rejected' && spec.emptyRejected && e.code === 'missing_content' && e.message.startsWith(`message ${(side.messages as unknown[]).length - 1}:`)) continue;
          // The prompt is on both sides: its errors are said once.
          add(e.code, e.message.startsWith(`message ${(side.messages as unknown[]).length - 1}:`) ? `${name} answer: ${e.message}` : e.message, e.severity);
        }
      }
      return errors;
    },
  };
}

/** Whether an assistant message as a base wrote it says nothing: no text and no tool call. */
export function isEmptyAnswer(message: JsonObject): boolean {
  const calls = message.tool_calls;
  if (Array.isArray(calls) && calls.length > 0) return false;
  const content = message.content;
  return content === null || content === undefined || (typeof content === 'string' && content.trim() === '') || (Array.isArray(content) && content.length === 0);
}

/** Checks that `value` is a list of message objects; says so under `name` when not. */
export function messageList(value: unknown, name: string, error: (code: ErrorClass, message: string) => void, nonEmpty = true): value is JsonObject[] {
  if (!Array.isArray(value) || (nonEmpty && value.length === 0) || !value.every(isObject)) {
    error('missing_messages_list', `\`${name}\` is missing, not a list of message objects, or empty`);
    return false;
  }
  return true;
}
