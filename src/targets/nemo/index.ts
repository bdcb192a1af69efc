/**
 * `nemo`: NeMo AutoModel `ChatDataset` and NeMo-RL OpenAI-format datasets.
 *
 * Tool-call arguments are written as a JSON string, the form that reaches the chat
 * template unchanged. AutoModel's `ChatDataset` (`chat_dataset.py`,
 * `_normalize_messages` → `_normalize_tool_calls`) keeps a string as it is but turns
 * any other value into `json.dumps(arguments)`: ASCII-only (`"Zürich"` becomes
 * `"Z\u00fcrich"`), `", "`/`": "` separators, and floats re-rendered by Python
 * (`1e16` → `1e+16`, `1E+2` → `100.0`). The result goes to
 * `tokenizer.apply_chat_template`. Templates that check `arguments is string` (Qwen3,
 * Nemotron Nano v2, Llama-3.3-Nemotron-Super v1.5, AutoModel's own tool-calling
 * templates) print a string verbatim and `tojson` anything else, so with object
 * arguments the model would learn to write escapes and spacing it never produced.
 * Templates that always `tojson` the arguments (stock Qwen2.5-Instruct, Llama-3.1-Instruct)
 * print a string as a JSON string literal (`"{\"city\": …}"`): double-encoded, and no
 * form of this file avoids it under AutoModel; the remedy is a chat-template override
 * (AutoModel's `chat_template` option), which `--tokenizer DIR` reports as
 * `double_encoded` (see src/targets/model/). The string is the recorded one when the
 * call was recorded as a string (the model's exact text), else the recorded object
 * written compactly, numbers as recorded and non-ASCII characters unescaped. The
 * validator accepts object arguments in files it did not write, with a warning.
 *
 * Decisions beyond the spec:
 * - Reasoning is kept as `reasoning_content` by default (NeMo trains on it
 *   unless `mask_reasoning_content` is set); `drop` and `inline` are options.
 * - `name` is not written: chat templates ignore it, and a key present on some
 *   rows only is what breaks Arrow type inference.
 * - Arguments are written as JSON strings (above); content is always a string,
 *   so images are not representable.
 */
import path from 'node:path';
import type { Message } from '../../record.js';
import { checkLine, type LineRules } from '../line-checks.js';
import { chatProjection } from '../messages.js';
import {
  resolveReasoning,
  type JsonObject,
  type ProjectOptions,
  type Projection,
  type Target,
  type ToolDefinition,
} from '../target.js';
import { autoModelChatDataset } from './trainer.js';

const RULES: LineRules = {
  roles: ['system', 'user', 'assistant', 'tool'],
  messageKeys: {
    system: ['role', 'content'],
    user: ['role', 'content'],
    assistant: ['role', 'content', 'reasoning_content', 'tool_calls'],
    tool: ['role', 'content', 'tool_call_id'],
  },
  // The loaders ignore unknown keys; they only cost Arrow type inference when types vary.
  unknownMessageKey: 'warning',
  topLevelKeys: ['messages', 'tools'],
  unknownTopLevelKey: 'warning',
  content: 'nemo',
  argumentsForm: 'string-preferred',
  callNeedsIdAndType: false,
  reasoningKey: 'reasoning_content',
  lastMustBeAssistant: 'error',
  contentExcludesReasoning: false,
  completeToolDefinitions: false,
  // Not rejected by NeMo, but a template token in content can fake a turn boundary.
  specialToken: 'warning',
};

export const nemoTarget: Target = {
  name: 'nemo',
  reasoningModes: ['keep', 'drop', 'inline'],
  defaultReasoning: 'keep',
  minExamples: 0,
  description: 'NeMo AutoModel ChatDataset and NeMo-RL (OpenAI-style JSONL, reasoning_content)',
  readBy: ['automodel', 'nemo-automodel', 'nemo-rl'],
  trainer: autoModelChatDataset,

  reportWarnings({ trainOn }) {
    return trainOn === 'last'
      ? ["--train-on last: the file trains every assistant turn unless AutoModel's ChatDataset is given mask_history: true (set it in the dataset config); the trained-token counts assume it"]
      : [];
  },

  project(messages: Message[], opts?: ProjectOptions): Projection {
    return chatProjection(messages, resolveReasoning(this, opts));
  },

  /**
   * AutoModel's recipe config: `dataset` and `validation_dataset`, each a ChatDataset reading a
   * path, with what the counts were made with: the template (`chat_template`, a path it reads),
   * `mask_history` for --train-on last, and the model folder whose tokenizer counted.
   */
  nextSteps({ training, validation, chatTemplate, modelFolder, trainOn }) {
    const chat = 'nemo_automodel.components.datasets.llm.chat_dataset.ChatDataset';
    const template = chatTemplate === undefined || chatTemplate === null ? '' : `, chat_template: ${path.resolve(chatTemplate)}`;
    const history = trainOn === 'last' ? ', mask_history: true' : '';
    return [
      `next: in the AutoModel recipe, dataset: {_target_: ${chat}, path_or_dataset_id: ${training.length === 1 ? training[0] : `[${training.join(', ')}]`}${template}${history}}`,
      ...(validation.length > 0 ? [`next: and validation_dataset: the same with path_or_dataset_id: ${validation.length === 1 ? validation[0] : `[${validation.join(', ')}]`}`] : []),
      ...(modelFolder !== undefined && modelFolder !== null ? [`next: and the tokenizer the counts used: model.pretrained_model_name_or_path: ${path.resolve(modelFolder)} (or a model of the same tokenizer)`] : []),
    ];
  },

  attachTools(example: JsonObject, tools: ToolDefinition[]): JsonObject {
    return tools.length === 0 ? example : { ...example, tools };
  },

  validateLine(value: unknown, lineNo: number) {
    return checkLine(RULES, value, lineNo);
  },
};

