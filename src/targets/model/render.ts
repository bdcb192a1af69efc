/**
 * Renders a conversation with a model's chat template as transformers' `apply_chat_template`
 * does with `tokenize=False`: `@huggingface/jinja` (Hugging Face's own JavaScript Jinja, whose
 * `tojson` is transformers' `json.dumps(ensure_ascii=False)` with Python's separators, and
 * whose `raise_exception` and `strftime_now` are transformers' globals), trim_blocks and
 * lstrip_blocks on, called with `messages`, `tools` (None when the example has none),
 * `documents=None`, `add_generation_prompt=False` and the tokenizer's special tokens map
 * (`bos_token`, `eos_token`, …).
 *
 * transformers' `{% generation %}…{% endgeneration %}` marks the assistant text a trainer
 * learns (`return_assistant_tokens_mask`). @huggingface/jinja accepts the tags and drops them;
 * here each becomes an output of a noncharacter (U+FDD0 opens, U+FDD1 closes) that the
 * render's text then loses, leaving the spans' character offsets.
 */
import { Template } from '@huggingface/jinja';
import { isJsonNumber } from '../../canonical/json-value.js';
import { pythonNumber } from './python-numbers.js';

export class TemplateError extends Error {}

const OPEN = '\uFDD0';
const CLOSE = '\uFDD1';
/** The tags with what lstrip_blocks takes before them (at a line's start) and trim_blocks after (one newline). */
const GENERATION_TAG = /(?:^[ \t]*)?\{%(-?)\s*(end)?generation\s*(-?)%\}\n?/gm;

/** A `{% generation %}` tag in any whitespace-control form (`{%- generation %}`, `{% generation -%}`): the Python of the trainers' scripts uses the same pattern. */
export const GENERATION_BLOCK = /\{%-?\s*generation\s*-?%\}/;

export interface Rendered {
  text: string;
  /** Character ranges of `{% generation %}` blocks, in order; empty when the template has none. */
  generation: [number, number][];
}

export class ChatTemplate {
  private readonly compiled: Template;
  readonly hasGeneration: boolean;

  constructor(source: string) {
    this.hasGeneration = GENERATION_BLOCK.test(source);
    const marked = this.hasGeneration
      ? source.replace(GENERATION_TAG, (_tag: string, left: string, end: string | undefined, right: string) => `{{${left} "${end === undefined ? OPEN : CLOSE}" ${right}}}`)
      : source;
    try {
      this.compiled = new Template(marked);
    } catch (error) {
      throw new TemplateError(`the chat template does not parse: ${(error as Error).message}`);
    }
  }

  /** Throws `TemplateError` with the template's own message when rendering raises. */
  render(messages: unknown[], tools: unknown[] | null, specialTokens: Record<string, unknown>): Rendered {
    let text: string;
    const spelled = new PythonSpelling();
    try {
      text = this.compiled.render({
        ...specialTokens,
        messages: templateValue(messages, spelled),
        tools: tools === null ? null : templateValue(tools, spelled),
        documents: null,
        add_generation_prompt: false,
      });
    } catch (error) {
      throw new TemplateError((error as Error).message);
    }
    text = spelled.restore(text);
    if (!this.hasGeneration) return { text, generation: [] };
    const generation: [number, number][] = [];
    let out = '';
    let open = -1;
    let from = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if (c !== OPEN && c !== CLOSE) continue;
      out += text.slice(from, i);
      from = i + 1;
      if (c === OPEN) open = out.length;
      else if (open >= 0) {
        generation.push([open, out.length]);
        open = -1;
      }
    }
    return { text: out + text.slice(from), generation };
  }
}

/**
 * The numbers a JavaScript Jinja would print otherwise than the Python trainer does: the
 * trainer's `json.loads` makes `153126.0` a float, which its template prints as `153126.0`,
 * where a JavaScript number prints `153126` (and `1e-05`, 20-digit integers differ too). Each
 * goes into the template as a placeholder float of its own, printed alike by `{{ }}` and
 * `tojson`, and the rendered text gets the Python spelling back: the tokens counted are those
 * of the text the trainer tokenizes, whose numbers are the recorded ones.
 */
class PythonSpelling {
  private readonly texts = new Map<string, string>();

  /** The value to render for a number's recorded text. */
  value(recorded: string): number {
    const js = Number(recorded);
    const python = pythonNumber(recorded);
    if (String(js) === python) return js;
    const placeholder = Number(`1.${String(this.texts.size).padStart(6, '0')}987654321e-300`);
    this.texts.set(String(placeholder), python);
    return placeholder;
  }

  restore(text: string): string {
    return this.texts.size === 0 ? text : text.replace(/1\.\d{6}987654321e-300/g, (placeholder) => this.texts.get(placeholder) ?? placeholder);
  }
}

/** A parsed line as the template sees it: numbers (kept as their recorded text) become numbers, spelled as Python prints them. */
function templateValue(value: unknown, spelled: PythonSpelling): unknown {
  if (isJsonNumber(value)) return spelled.value(value.valueOf());
  if (Array.isArray(value)) return value.map((item) => templateValue(item, spelled));
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = templateValue(v, spelled);
    return out;
  }
  return value;
}
