import { DEFAULT_KEY, KEY_MEANING } from './keys.js';

/**
 * Every reason a record can be dropped for, in the order the pipeline meets them, with the
 * few words a summary prints beside its count: `prefix` alone tells a newcomer nothing.
 * report.json lists every reason of its command with its count, zero included, in this order
 * (see `droppedCounts`); a reason missing here is still counted, after these, unglossed.
 */
export const DROP_REASON_GLOSS: Readonly<Record<string, string>> = {
  damaged: 'a line that is no record: not JSON, cut short, or not a trace (every command lists it)',
  // Any status can be left out (filter --status exception keeps failures, leaving the ok calls): say which rule, not that it failed.
  status: 'its status (ok, exception or no_output) is not one --status keeps',
  filter: 'outside a selection option (--program, --module, --model, --since, --grep, …)',
  text_too_long: 'holds a text longer than a JavaScript string can be (about 536 MB), which a stage needs as text (--grep, --near-duplicates, export)',
  excluded: 'its call_id is in the --exclude file',
  not_in_keep_list: 'its call_id is not in the --keep-list',
  seen: 'its key is in the --against output already',
  truncated: 'the answer stopped at the token limit (a recorded stop reason, the recorded max_tokens, or --max-completion-tokens)',
  empty: 'no messages, or a completion with neither text, tool calls nor structured output (white space only counts as none)',
  broken: 'an unclosed or unopened <think> tag, or the answer left in the reasoning field with the content empty',
  repetition: 'the answer repeats itself (Gopher repetition rules; off unless --quality names it)',
  refusal: 'the answer refuses (--drop refusals; flagged and kept by default)',
  identity: 'the answer speaks as another model (--drop identity; flagged and kept by default)',
  contaminated: 'its user text shares a word 8-gram with an evaluation item (--decontaminate)',
  duplicate: `the same key as a kept record (--key, default: ${KEY_MEANING[DEFAULT_KEY]})`,
  near_duplicate: 'nearly the same text as a kept record (--near-duplicates)',
  prefix: 'an earlier agent step, contained in a later one that is kept (--trajectories last)',
  not_exportable: 'the recorder kept no LLM input or output for this step',
  no_completion: "the last message is not the assistant's: nothing to learn",
  not_representable: 'holds what the format cannot write (tool results for NeMo Customizer, images as text, audio)',
  special_token: 'its text holds a special token such as <|endoftext|>, which gets the whole file rejected',
  too_long: 'more tokens than --max-example-tokens (or, with --tokenizer DIR, --max-seq-length)',
  template_error: "the model's chat template (--tokenizer DIR) raises on it, or its loss mask cannot be located",
  tool_sequence: 'a tool call not answered at once, in order and by a unique id, as the chat API requires',
  image_too_large: 'an image over OpenAI\'s 10 MB limit',
  image_format: 'an image that is not JPEG, PNG or WEBP',
  too_many_images: 'more images than OpenAI takes in one example (64)',
  secret: 'holds a secret, and --drop-on secrets drops such examples',
  redacted_tool_name: "a tool's name holds what --scrub redacts, and a redacted name is no valid tool name",
  not_strict_json: 'holds a value a strict JSON reader rejects',
  duplicate_example: 'written, the same example as one already written (in either split)',
  no_pair: 'in no preference pair (preference formats): the only answer to its prompt, no signal, identical answers, a failed call, scores under --min-margin, or its pairs not written for their other record',
};

/**
 * The reasons a command can drop a record for, as DROP_REASON_GLOSS orders them; damaged lines
 * are no records: reports count them apart (`damaged_lines`).
 */
export const CURATION_REASONS = [
  'status',
  'filter',
  'text_too_long',
  'truncated',
  'broken',
  'empty',
  'repetition',
  'refusal',
  'identity',
  'contaminated',
  'excluded',
  'not_in_keep_list',
  'seen',
  'duplicate',
  'near_duplicate',
  'prefix',
] as const;
export const EXPORT_REASONS = [
  ...CURATION_REASONS,
  'not_exportable',
  'no_completion',
  'not_representable',
  'special_token',
  'too_long',
  'template_error',
  'tool_sequence',
  'image_too_large',
  'image_format',
  'too_many_images',
  'secret',
  'redacted_tool_name',
  'not_strict_json',
  'duplicate_example',
] as const;

/** What a preference export (openai-preference, hf-preference, nemo-preference) can drop a record for. */
export const PREFERENCE_REASONS = [...EXPORT_REASONS.filter((r) => r !== 'duplicate' && r !== 'near_duplicate' && r !== 'prefix'), 'no_pair'] as const;

/**
 * The count of every reason in `reasons`, zero included, in that order, then any other reason
 * `counts` holds: a reader of report.json finds each reason's key whether or not it dropped.
 */
export function droppedCounts(reasons: readonly string[], counts: Readonly<Record<string, number>>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const reason of reasons) out[reason] = counts[reason] ?? 0;
  for (const [reason, n] of Object.entries(counts)) if (!(reason in out)) out[reason] = n;
  return out;
}

/** The gloss of a reason, or '' for one this table does not know. */
export function glossOf(reason: string): string {
  return Object.hasOwn(DROP_REASON_GLOSS, reason) ? DROP_REASON_GLOSS[reason] : '';
}
