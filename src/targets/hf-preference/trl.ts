/** hf-preference's entry beside the card: TRL's DPOTrainer on the folder. */
import type { CardDataset } from '../hf/card.js';
import { trlData, trlTrainer } from '../hf/card.js';

/** Not train_trl.py: the card describes that name as hf's SFTTrainer script. */
export const TRL_DPO_FILE = 'train_dpo.py';

export function trlPreference(card: CardDataset): string {
  const { load, hasValidation } = trlData(card);
  return [
    '"""TRL DPOTrainer on this folder (written by traces; the keys are TRL\'s, see docs/targets.md of traces).',
    '',
    "Rows are TRL's conversational preference rows: prompt, chosen and rejected message lists, and tools",
    'as JSON text, which DPOTrainer parses itself before the chat template. DPOTrainer tokenizes the rows',
    'as the dataset holds them, so no loader step runs here: one mapped into the dataset would be stored',
    'back with one schema, parsed tool-call arguments becoming a struct with every tool\'s keys. What the',
    'template gets: arguments as JSON text (Qwen3\'s template prints them as they are; templates that tojson',
    'them, such as Qwen2.5\'s, need a chat-template override), and from Parquet a null for each key a',
    'message lacks, which Qwen3\'s and Llama 3.1\'s templates render as if it were absent.',
    '"""',
    'from datasets import load_dataset',
    'from transformers import AutoTokenizer',
    'from trl import DPOConfig, DPOTrainer',
    '',
    'MODEL = "Qwen/Qwen3-0.6B"  # the model you fine-tune (an SFT checkpoint, usually)',
    'tokenizer = AutoTokenizer.from_pretrained(MODEL)',
    load,
    ...trlTrainer('DPOTrainer', 'DPOConfig(output_dir="dpo-out")', hasValidation),
  ].join('\n');
}
