/**
 * Finds tokenizer control strings in training text. OpenAI rejects a file
 * holding any of its own (`<|endoftext|>`, `<|im_start|>`, `<|fim_suffix|>`, …),
 * and in any trainer such a string in content can be read as a real turn or
 * document boundary by the chat template.
 *
 * How broad: the `<|name|>` shape with a name of letters, digits, `_`, `.` and
 * `-` (covers OpenAI's and Harmony's tokens, Llama's `<|eot_id|>` and
 * `<|reserved_special_token_0|>`, Phi's `<|user|>`), plus DeepSeek's full-width
 * `<｜…｜>` form. A bare `<|` or `|>` (as in shell or Elixir text) is not matched.
 */

/** The tokens OpenAI names; always reported, whatever the general shape decides. */
export const KNOWN_SPECIAL_TOKENS: readonly string[] = [
  '<|endoftext|>',
  '<|im_start|>',
  '<|im_end|>',
  '<|im_sep|>',
  '<|fim_prefix|>',
  '<|fim_middle|>',
  '<|fim_suffix|>',
  '<|endofprompt|>',
];

const SPECIAL_TOKEN_SHAPE = /<\|[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}\|>|<｜[^｜<>\s]{1,64}｜>/g;

/** Distinct special tokens in a text, in order of first appearance. */
export function findSpecialTokens(text: string): string[] {
  // Cheap pre-check: almost no text holds either opener.
  if (!text.includes('<|') && !text.includes('<｜')) return [];
  return [...new Set(text.match(SPECIAL_TOKEN_SHAPE) ?? [])];
}

/** Distinct special tokens in every string value of a JSON value (object keys excluded). */
export function findSpecialTokensDeep(value: unknown): string[] {
  const found = new Set<string>();
  const visit = (v: unknown): void => {
    if (typeof v === 'string') {
      for (const t of findSpecialTokens(v)) found.add(t);
    } else if (Array.isArray(v)) {
      for (const x of v) visit(x);
    } else if (typeof v === 'object' && v !== null) {
      for (const x of Object.values(v)) visit(x);
    }
  };
  visit(value);
  return [...found];
}
