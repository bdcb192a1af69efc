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
    try {
      text = this.compiled.render({
        ...specialTokens,
        messages: templateValue(messages),
        tools: tools === null ? null : templateValue(tools),
        documents: null,
        add_generation_prompt: false,
      });
    } catch (error) {
      throw new TemplateError((error as Error).message);
    }
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

/** A parsed line as the template sees it: numbers (kept as their recorded text) become numbers. */
export function templateValue(value: unknown): unknown {
  if (isJsonNumber(value)) return Number(value.valueOf());
  if (Array.isArray(value)) return value.map(templateValue);
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = templateValue(v);
    return out;
  }
  return value;
}
