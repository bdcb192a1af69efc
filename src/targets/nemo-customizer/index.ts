/**
 * `nemo-customizer`: NeMo Customizer, the hosted NeMo platform, which checks
 * every row against a strict schema before training.
 *
 * Decisions beyond the spec:
 * - Tool results cannot be written (the schema forbids `tool_call_id`, the
 *   loader needs it), so an example whose input holds a tool result is not
 *   representable; first agent steps, which end at the tool call, stay.
 * - Reasoning is inlined as `<think>…</think>` by default, or dropped. The
 *   `thinking` field is never written: it may not share a message with
 *   `content`, which every assistant turn has.
 * - Tool calls carry no `id` (nothing can refer to it) and object arguments.
 * - Definitions get a description and object parameters when they lack them.
 */
import type { Message } from '../../record.js';
import { checkLine, type LineRules } from '../line-checks.js';
import { calledToolNames, imageFailure, inlineReasoning, normalizeMessages, type NormalMessage } from '../messages.js';
import {
  namedFiles,
  resolveReasoning,
  type JsonObject,
  type ProjectOptions,
  type Projection,
  type ReasoningMode,
  type Target,
  type ToolDefinition,
} from '../target.js';
import { completeForCustomizer, customizerGaps } from '../tools.js';

const MESSAGE_KEYS = ['role', 'content', 'thinking', 'tool_calls'];

const RULES: LineRules = {
  roles: ['system', 'user', 'assistant'],
  messageKeys: { system: MESSAGE_KEYS, user: MESSAGE_KEYS, assistant: MESSAGE_KEYS },
  unknownMessageKey: 'error',
  topLevelKeys: ['messages', 'tools'],
  unknownTopLevelKey: 'error',
  content: 'customizer',
  argumentsForm: 'object',
  callNeedsIdAndType: false,
  reasoningKey: 'thinking',
  // NVIDIA documents it as "for best training results", not as a rejection.
  lastMustBeAssistant: 'warning',
  contentExcludesReasoning: true,
  completeToolDefinitions: true,
  specialToken: 'warning',
};

export const nemoCustomizerTarget: Target = {
  name: 'nemo-customizer',
  reasoningModes: ['inline', 'drop'],
  defaultReasoning: 'inline',
  minExamples: 0,
  // Without a validation file the service splits 10% off itself; an empty one is an error.
  rejectsEmptyValidation: true,
  description: 'NeMo Customizer, the hosted NeMo platform (strict schema, no tool results)',
  // NeMo Customizer reads one schema per file: when any example has tools, every line carries them.
  everyLineTools: true,
  // It infers the schema from the first line.
  schemaFromFirstLine: true,
  trainOnLastRefusal: 'NeMo Customizer rows have no per-turn weight and its trainer takes no option for it; export with --format openai or nemo, or leave it out',

  reportWarnings({ refusedTrajectoryStep, groupBy, supplied }) {
    const warnings: string[] = [];
    // Only where it helps: an agent step was refused and the run is exported up to an earlier one.
    if (refusedTrajectoryStep && groupBy !== 'module') {
      warnings.push('some agent steps hold tool results, which NeMo Customizer cannot represent: each run is exported up to its last step that has none (--format nemo keeps whole runs)');
    }
    const completed = supplied.map((d) => ({ name: d.function.name, gaps: customizerGaps(d) })).filter(({ gaps }) => gaps.length > 0);
    if (completed.length > 0) {
      warnings.push(
        `--tools: NeMo Customizer takes complete definitions only, so traces filled in ${completed.map(({ name, gaps }) => `${name} (${gaps.join(', ')})`).join('; ')}: complete them in the file to choose the text`,
      );
    }
    return warnings;
  },

  project(messages: Message[], opts?: ProjectOptions): Projection {
    const reasoning = resolveReasoning(this, opts);
    const normal = normalizeMessages(messages);
    if (!normal.ok) return normal;
    const toolResult = normal.messages.findIndex((m) => m.role === 'tool');
    if (toolResult >= 0) {
      return {
        ok: false,
        reason: 'not_representable',
        detail: `message ${toolResult} is a tool result, which NeMo Customizer cannot represent`,
      };
    }
    const images = imageFailure(normal.messages);
    if (images !== null) return images;
    return {
      ok: true,
      example: { messages: normal.messages.map((m) => writeMessage(m, reasoning)) },
      toolNames: calledToolNames(normal.messages),
    };
  },

  /** A NeMo Data Store dataset (a Hugging Face-style repository) with training/ and validation/ folders, named in the job. */
  nextSteps({ training, validation }) {
    return [
      `next: upload ${namedFiles(training)} under training/${validation.length > 0 ? ` and ${namedFiles(validation)} under validation/` : ''} of a NeMo Data Store dataset (hf upload --repo-type dataset NAMESPACE/NAME FILE training/FILE)`,
      `next: register the dataset in the Entity Store and name it in the customization job (its dataset field)${validation.length === 0 ? '; without a validation folder the service splits 10% off' : ''}`,
    ];
  },

  attachTools(example: JsonObject, tools: ToolDefinition[]): JsonObject {
    return tools.length === 0 ? example : { ...example, tools: tools.map(completeForCustomizer) };
  },

  validateLine(value: unknown, lineNo: number) {
    return checkLine(RULES, value, lineNo);
  },
};

function writeMessage(m: NormalMessage, reasoning: ReasoningMode): JsonObject {
  const content = m.content as string;
  if (m.role !== 'assistant') return { role: m.role, content };
  const out: JsonObject = { role: 'assistant', content: reasoning === 'inline' ? inlineReasoning(m.reasoning, content) : content };
  if (m.toolCalls.length > 0) {
    out.tool_calls = m.toolCalls.map((c) => ({ type: 'function', function: { name: c.name, arguments: c.arguments } }));
  }
  return out;
}
