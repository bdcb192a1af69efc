/** hf-preference's entry beside the card: TRL's DPOTrainer on the folder. */
import type { CardDataset } from '../hf/card.js';
import { trlData, trlMaxLength, trlTrainer } from '../hf/card.js';
import type { TrainerSetup } from '../hf/trainer-setup.js';

/** Not train_trl.py: the card describes that name as hf's SFTTrainer script. */
export const TRL_DPO_FILE = 'train_dpo.py';

export function trlPreference(card: CardDataset, setup: TrainerSetup): string {
  const { load, hasValidation } = trlData(card, setup);
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
    'from pathlib import Path',
    '',
    'from datasets import load_dataset',
    'from transformers import AutoTokenizer',
    'from trl import DPOConfig, DPOTrainer',
    '',
    ...load,
    ...trlTrainer('DPOTrainer', `DPOConfig(output_dir=str(HERE / "dpo-out"), ${trlMaxLength(setup)})`, hasValidation),
  ].join('\n');
}
