/**
 * Chat templates traces ships (`templates/` of the package): variants of a model's own
 * template with `{% generation %}` blocks, for trainers that build the answer-only mask from
 * them (AutoModel's ChatDataset, TRL's assistant_only_loss). Each renders the same text as the
 * model's own; test/model-templates.test.ts checks it.
 */
import { fileURLToPath } from 'node:url';

/** Qwen3's template with a generation block per assistant turn (Apache-2.0, from Qwen's tokenizer_config.json). */
export const QWEN3_TRAINING_TEMPLATE = fileURLToPath(new URL('../../../../templates/qwen3-training.jinja', import.meta.url));
