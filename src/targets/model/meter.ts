/**
 * The model-folder meter: each example is normalized as its trainer does (trainer.ts),
 * rendered by the model's chat template as transformers does (render.ts), and counted by the
 * model's own tokenizer (`@huggingface/tokenizers`, encoding the render with
 * `add_special_tokens=False`, as `apply_chat_template(tokenize=True)` does).
 *
 * Trained tokens follow AutoModel's `format_chat_template`: the template's
 * `{% generation %}` blocks where it has them, else each assistant turn's span located by
 * prefix renders (the tokens of `messages[:i+1]` past those of `messages[:i]`), which is only
 * sound when every prefix renders as a prefix of the whole (AutoModel raises otherwise; a
 * template that rewrites earlier turns, as Qwen3's drops reasoning before the last question,
 * fails it). OpenAI's `weight: 0` leaves a turn out; `--train-on last` keeps the last turn only
 * (AutoModel's `mask_history`).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { ModelSpec } from '../meter.js';
import type { ExampleMeasure, ExampleMeter, Finding, TrainerLoader } from '../target.js';
import { isZeroWeight, TextCounts, type ExampleTokens } from '../tokens.js';
import { loadModelFolder, type ModelFolder } from './folder.js';
import { ChatTemplate, TemplateError, type Rendered } from './render.js';
import { TrainerRejects, trainerInput, type TrainerInput } from './trainer.js';
import { QWEN3_TRAINING_TEMPLATE } from './shipped-templates.js';

const NOTHING: ExampleTokens = { total: 0, assistant: 0 };

/** `trainer`: the loader of the target `spec` names (`Target.trainer`), absent where the template gets the line as written. */
export function loadModelMeter(spec: ModelSpec, trainer: TrainerLoader | undefined): ExampleMeter {
  const folder = loadModelFolder(spec.folder, spec.chatTemplate);
  return new ModelMeter(spec, folder, trainer);
}

class ModelMeter implements ExampleMeter {
  readonly rendersTemplate = true;
  readonly name: string;
  private readonly plain: ChatTemplate;
  private readonly withTools: ChatTemplate;
  private readonly ids = new TextCounts<number[]>();
  private readonly specialToken: RegExp | null;
  /** The trainer's loader when it raises where the assistant spans cannot be located (AutoModel's). */
  private readonly raisingLoader: string | null;
  /** The shipped training template, made at the first example it could fix. */
  private shipped: ChatTemplate | undefined;

  constructor(
    private readonly spec: ModelSpec,
    private readonly folder: ModelFolder,
    private readonly trainer: TrainerLoader | undefined,
  ) {
    this.name = spec.folder;
    this.raisingLoader = trainer?.raisesOnInconsistentMask === true ? trainer.name : null;
    this.plain = new ChatTemplate(folder.template);
    this.withTools = folder.toolTemplate === folder.template ? this.plain : new ChatTemplate(folder.toolTemplate);
    const tokens = [...folder.specialTokens].sort((a, b) => b.length - a.length);
    this.specialToken = tokens.length === 0 ? null : new RegExp(tokens.map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'g');
  }

  /** Token ids of a text, remembered: system prompts, tool lists and prefix renders repeat. */
  private encode(text: string): number[] {
    const known = this.ids.get(text);
    if (known !== undefined) return known;
    const ids = this.folder.tokenizer.encode(text, { add_special_tokens: false }).ids;
    this.ids.set(text, ids);
    return ids;
  }

  measure(example: unknown): ExampleMeasure {
    if (typeof example !== 'object' || example === null || !Array.isArray((example as { messages?: unknown }).messages)) return { tokens: NOTHING, findings: [] };
    const findings: Finding[] = [];
    const special = this.specialTokensIn(example);
    if (special.length > 0) {
      findings.push({
        code: 'model_special_token',
        severity: 'warning',
        message: `recorded text holds ${special.join(' ')}, special to this model's tokenizer: it is read as that token, which can fake a turn boundary`,
      });
    }
    let input: TrainerInput;
    let rendered: Rendered;
    try {
      input = trainerInput(this.trainer, example as Record<string, unknown>);
      rendered = this.render(input.messages, input.tools);
    } catch (error) {
      if (!(error instanceof TrainerRejects || error instanceof TemplateError)) throw error;
      findings.push({ code: 'template_error', severity: 'error', message: error instanceof TemplateError ? `the chat template raises: ${error.message}` : error.message });
      return { tokens: NOTHING, findings };
    }
    const ids = this.encode(rendered.text);
    const trained = this.trainedTokens(input, rendered, ids, findings);
    if (trained === null) return { tokens: { total: ids.length, assistant: 0 }, findings };
    this.findDoubleEncoding(input, rendered.text, findings);
    if (trained === 0) {
      findings.push({ code: 'no_trainable_tokens', severity: 'warning', message: 'no token of this example is trained on (every assistant turn is masked or renders empty): it costs compute and teaches nothing' });
    }
    return { tokens: { total: ids.length, assistant: trained }, findings };
  }

  private render(messages: unknown[], tools: unknown[] | null): Rendered {
    return (tools === null ? this.plain : this.withTools).render(messages, tools, this.folder.specialTokensMap);
  }

  /** Null when the trainer could not build the mask (a template_error finding says why). */
  private trainedTokens(input: TrainerInput, rendered: Rendered, ids: number[], findings: Finding[]): number | null {
    const assistants = input.messages.flatMap((m, i) => (m.role === 'assistant' ? [i] : []));
    const spans = rendered.generation.length > 0 ? this.generationSpans(rendered) : this.prefixSpans(input, assistants, ids, findings);
    if (spans === null) return null;
    // One block per assistant turn, in order: the weight and the turn choice apply to it.
    const perTurn = spans.length === assistants.length;
    let trained = 0;
    spans.forEach(([start, end], k) => {
      const message = perTurn ? input.messages[assistants[k]] : null;
      if (message !== null && isZeroWeight(message.weight)) return;
      if (this.spec.trainOn === 'last' && k !== spans.length - 1) return;
      trained += end - start;
    });
    return trained;
  }

  /** Token ranges of the generation blocks, by the tokens of the text before each end. */
  private generationSpans(rendered: Rendered): [number, number][] {
    return rendered.generation.map(([from, to]) => [this.encode(rendered.text.slice(0, from)).length, this.encode(rendered.text.slice(0, to)).length]);
  }

  private prefixSpans(input: TrainerInput, assistants: number[], full: number[], findings: Finding[]): [number, number][] | null {
    const lengths = new Map<number, number>([[input.messages.length, full.length]]);
    const prefixLength = (k: number): number | null => {
      let n = lengths.get(k);
      if (n !== undefined) return n;
      let ids: number[];
      try {
        ids = this.encode(this.render(input.messages.slice(0, k), input.tools).text);
      } catch (error) {
        if (!(error instanceof TemplateError)) throw error;
        findings.push({ code: 'template_error', severity: 'error', message: `the chat template raises on the first ${k} message(s), which the loss mask renders alone: ${error.message}` });
        return null;
      }
      if (!isPrefix(ids, full, this.folder.eosTokenId)) {
        const message =
          `the first ${k} message(s) rendered alone are no prefix of the whole render: the template renders a turn differently once more messages follow ` +
          "(Qwen3's adds an empty <think></think> block to the last assistant turn and drops reasoning before the last user turn), so the assistant spans cannot be located" +
          `${this.raisingLoader !== null ? ` and ${this.raisingLoader} raises on this example` : ''}; remedy: a chat template with {% generation %} blocks, given with --chat-template FILE and the same file to the trainer (for Qwen3, traces ships one: ${QWEN3_TRAINING_TEMPLATE})`;
        const fix = this.shippedFix(input);
        findings.push(this.raisingLoader !== null ? { code: 'template_error', severity: 'error', message, ...(fix !== null ? { fix } : {}) } : { code: 'loss_mask_inconsistent', severity: 'warning', message });
        return null;
      }
      lengths.set(k, (n = ids.length));
      return n;
    };
    const spans: [number, number][] = [];
    for (const i of assistants) {
      const start = prefixLength(i);
      const end = start === null ? null : prefixLength(i + 1);
      if (start === null || end === null) return null;
      spans.push([start, end]);
    }
    return spans;
  }

  /**
   * `--chat-template` with the template traces ships, where it is this model's: it renders this
   * example as the folder's own template does (Qwen3's); null for another model's template.
   */
  private shippedFix(input: TrainerInput): string | null {
    if (this.spec.chatTemplate !== null) return null;
    this.shipped ??= new ChatTemplate(readFileSync(QWEN3_TRAINING_TEMPLATE, 'utf8'));
    let same: boolean;
    try {
      same = this.shipped.render(input.messages, input.tools, this.folder.specialTokensMap).text === this.render(input.messages, input.tools).text;
    } catch (error) {
      if (!(error instanceof TemplateError)) throw error;
      same = false;
    }
    if (!same) return null;
    // As the user can type it from here: relative inside the working folder, else the whole path.
    const relative = path.relative(process.cwd(), QWEN3_TRAINING_TEMPLATE);
    return `--chat-template ${relative.startsWith('..') || path.isAbsolute(relative) ? QWEN3_TRAINING_TEMPLATE : relative}`;
  }

  /** Arguments and tool results that are JSON text, rendered as a JSON string literal: the template encoded them again. */
  private findDoubleEncoding(input: TrainerInput, text: string, findings: Finding[]): void {
    let args = 0;
    let results = 0;
    for (const m of input.messages) {
      if (m.role === 'assistant' && Array.isArray(m.tool_calls)) {
        for (const call of m.tool_calls as { function?: { arguments?: unknown } }[]) {
          const a = call?.function?.arguments;
          if (typeof a === 'string' && holdsJson(a) && text.includes(JSON.stringify(a))) args++;
        }
      } else if (m.role === 'tool' && typeof m.content === 'string' && holdsJson(m.content) && text.includes(JSON.stringify(m.content))) results++;
    }
    const remedy = 'a chat template that prints JSON text as it is (--chat-template FILE, and the same file as the trainer\'s chat_template)';
    if (args > 0) {
      findings.push({
        code: 'double_encoded',
        severity: 'warning',
        message: `tool-call arguments render as a JSON string literal (the template applies tojson to text that is already JSON): the model learns to write escaped JSON; remedy: ${remedy}`,
      });
    }
    if (results > 0) {
      findings.push({
        code: 'double_encoded',
        severity: 'warning',
        message: `tool results that are JSON render as a JSON string literal: the model reads escaped JSON; remedy: ${remedy}`,
      });
    }
  }

  private specialTokensIn(example: unknown): string[] {
    const pattern = this.specialToken;
    if (pattern === null) return [];
    const found = new Set<string>();
    const visit = (v: unknown): void => {
      if (typeof v === 'string') {
        for (const match of v.matchAll(pattern)) found.add(match[0]);
      } else if (Array.isArray(v)) v.forEach(visit);
      else if (typeof v === 'object' && v !== null && !(v instanceof String)) Object.values(v).forEach(visit);
    };
    visit(example);
    return [...found];
  }
}

/** A JSON object or array: what a template's tojson would quote if handed it as text. */
function holdsJson(text: string): boolean {
  const first = text.trimStart()[0];
  if (first !== '{' && first !== '[') return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** AutoModel's `_is_consistent_render_prefix`: exact, or but for a final end-of-sequence token the next turn replaces. */
function isPrefix(prefix: number[], full: number[], eos: number | null): boolean {
  if (prefix.length > full.length) return false;
  let i = 0;
  while (i < prefix.length && prefix[i] === full[i]) i++;
  if (i === prefix.length) return true;
  return prefix.length > 1 && eos !== null && i === prefix.length - 1 && prefix[i] === eos;
}
