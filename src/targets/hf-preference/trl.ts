/** hf-preference's entry beside the card: TRL's DPOTrainer on the folder, after the loader step. */
import type { CardDataset } from '../hf/card.js';
import { PY_AS_CHAT, trlData, trlTrainer } from '../hf/card.js';

/** Not train_trl.py: the card describes that name as hf's SFTTrainer script. */
export const TRL_DPO_FILE = 'train_dpo.py';

export function trlPreference(card: CardDataset): string {
  const { load, hasValidation } = trlData(card);
  return [
    '"""TRL DPOTrainer on this folder (written by traces; the keys are TRL\'s, see docs/targets.md of traces).',
    '',
    "Rows are TRL's conversational preference rows: prompt, chosen and rejected message lists, and tools",
    'as JSON text, which DPOTrainer parses itself. The loader step leaves out the null keys a columnar',
    'file gives every message, and parses tool-call arguments, before DPOTrainer applies the chat template.',
    '"""',
    ...PY_AS_CHAT,
    '',
    'from datasets import load_dataset',
    'from transformers import AutoTokenizer',
    'from trl import DPOConfig, DPOTrainer',
    '',
    'MODEL = "Qwen/Qwen3-0.6B"  # the model you fine-tune (an SFT checkpoint, usually)',
    'tokenizer = AutoTokenizer.from_pretrained(MODEL)',
    load,
    'data = data.map(lambda row: {key: as_chat(row[key]) for key in ("prompt", "chosen", "rejected")})',
    ...trlTrainer('DPOTrainer', 'DPOConfig(output_dir="dpo-out")', hasValidation),
  ].join('\n');
}
