"""Runs the trainers' own code on traces' exports and compares what each trains with the report.

    python3 check.py WORK MODEL RESULT.json

WORK holds the exports run.sh made (hf-*, pref-*, nemo-*); MODEL the tiny Qwen3 folder they were
counted with (tiny_qwen3.py). The trainers' sources are on PYTHONPATH (run.sh). For each export:

- TRL SFT / DPO: the written train_trl.py / train_dpo.py, run by Python from another folder as a
  user would; hook/sitecustomize.py caps the trainer at two optimizer steps and records the rows
  the trainer was handed, after its own processing.
- Axolotl: `load_dataset_with_config` on each entry of axolotl.yaml as written (from the folder),
  its chat_template strategy and TokenizedPromptDataset, then two steps of transformers' Trainer
  on those rows (Axolotl's own trainer needs triton).
- LLaMA-Factory: `get_dataset` on dataset_info.json as written (template qwen3), then two steps
  of transformers' Trainer on its rows.
- AutoModel: ChatDataset on the nemo file, with the chat template the export counted with, then
  two steps of transformers' Trainer.

Each trainer's tokens and trained tokens per example are compared with `_traces/examples.jsonl`.
"""
import json
import math
import os
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
STEPS = 2


def expected_rows(folder, prefix):
    """The report's counts of the examples written to files whose path starts with `prefix`, in file order."""
    rows = [json.loads(line) for line in (Path(folder) / "_traces" / "examples.jsonl").read_text().splitlines() if line]
    rows = [r for r in rows if r["file"].startswith(prefix)]
    rows.sort(key=lambda r: (r["file"], r["line"]))
    return rows


def compare(got, expected):
    """Each trainer row set against the report's examples, in file order.

    A trainer may leave examples out (LLaMA-Factory skips a conversation it cannot read whole), so the
    rows are aligned to the examples first: in order, each row to one example, choosing the alignment
    whose token counts differ least. Then per aligned example: do the tokens agree, do the trained
    tokens agree, and by how much the trained tokens differ (trainer minus report), which is how a
    trainer that counts its own way shows (Axolotl skips Qwen3's empty think block, LLaMA-Factory
    trains the line break after each answer).
    """
    n, m = len(expected), len(got)
    if m > n:
        return {"examples": n, "rows": m, "agree": 0, "tokens_agree": 0, "trained_agree": 0, "left_out": [], "trained_diff": {}, "differ": [], "differ_count": n, "note": "more rows than examples"}
    inf = float("inf")
    # cost[i][j]: the least total token difference aligning the first j rows with the first i examples.
    cost = [[inf] * (m + 1) for _ in range(n + 1)]
    cost[0][0] = 0
    for i in range(1, n + 1):
        for j in range(0, min(i, m) + 1):
            skip = cost[i - 1][j]
            take = cost[i - 1][j - 1] + abs(got[j - 1]["tokens"] - expected[i - 1]["tokens"]) if j else inf
            cost[i][j] = min(skip, take)
    pairs, left_out = [], []
    i, j = n, m
    while i > 0:
        if j and cost[i][j] == cost[i - 1][j - 1] + abs(got[j - 1]["tokens"] - expected[i - 1]["tokens"]):
            pairs.append((expected[i - 1], got[j - 1]))
            j -= 1
        else:
            left_out.append(expected[i - 1])
        i -= 1
    pairs.reverse()
    left_out.reverse()
    tokens_agree = sum(1 for e, g in pairs if g["tokens"] == e["tokens"])
    trained_agree = sum(1 for e, g in pairs if g["trained"] == e["trained_tokens"])
    agree = sum(1 for e, g in pairs if (g["tokens"], g["trained"]) == (e["tokens"], e["trained_tokens"]))
    diff = {}
    for e, g in pairs:
        d = g["trained"] - e["trained_tokens"]
        if d:
            diff[str(d)] = diff.get(str(d), 0) + 1
    differ = [{"file": e["file"], "line": e["line"], "report": [e["tokens"], e["trained_tokens"]], "trainer": [g["tokens"], g["trained"]]} for e, g in pairs if (g["tokens"], g["trained"]) != (e["tokens"], e["trained_tokens"])]
    return {
        "examples": n,
        "rows": m,
        "agree": agree,
        "tokens_agree": tokens_agree,
        "trained_agree": trained_agree,
        "trained_diff": diff,
        "left_out": [{"file": e["file"], "line": e["line"], "report": [e["tokens"], e["trained_tokens"]]} for e in left_out],
        "differ": differ[:8],
        "differ_count": len(differ),
        "trainer_rows": [[g["tokens"], g["trained"]] for g in got],  # table.py and a later compare need no rerun
    }


def run_script(folder, script):
    """The written script, run from another folder with the step cap (hook/sitecustomize.py)."""
    out = Path(tempfile.mkdtemp()) / "result.json"
    env = dict(os.environ, TRAINER_CHECK_OUT=str(out), TRAINER_CHECK_STEPS=str(STEPS), PYTHONPATH=f"{HERE / 'hook'}:{os.environ.get('PYTHONPATH', '')}")
    elsewhere = tempfile.mkdtemp()
    run = subprocess.run([sys.executable, str(Path(folder) / script)], cwd=elsewhere, env=env, capture_output=True, text=True)
    if run.returncode != 0 or not out.exists():
        raise RuntimeError(f"{script} exited {run.returncode}: {run.stderr[-3000:]}")
    result = json.loads(out.read_text())
    result["stderr_tail"] = run.stderr[-600:]
    return result


def train_rows(model_dir, rows):
    """Two optimizer steps of transformers' Trainer on tokenized rows (input_ids, labels): the losses."""
    import torch
    from transformers import AutoModelForCausalLM, DataCollatorForSeq2Seq, Trainer, TrainingArguments

    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    data = [{"input_ids": list(r["input_ids"]), "labels": list(r["labels"]), "attention_mask": [1] * len(r["input_ids"])} for r in rows if any(l != -100 for l in r["labels"])]
    args = TrainingArguments(output_dir=tempfile.mkdtemp(), max_steps=STEPS, per_device_train_batch_size=1, logging_steps=1, save_strategy="no", report_to=[], use_cpu=True, dataloader_num_workers=0)
    trainer = Trainer(model=model, args=args, train_dataset=data, data_collator=DataCollatorForSeq2Seq(tokenizer, padding=True))
    trainer.train()
    return {"steps": trainer.state.global_step, "losses": [h["loss"] for h in trainer.state.log_history if "loss" in h]}


def counted(rows):
    return [{"tokens": len(r["input_ids"]), "trained": sum(1 for l in r["labels"] if l != -100)} for r in rows]


def axolotl(folder, model_dir):
    import yaml
    from transformers import AutoTokenizer

    from axolotl.datasets import TokenizedPromptDataset
    from axolotl.prompt_strategies.chat_template import load
    from axolotl.utils.data.shared import load_dataset_with_config
    from axolotl.utils.dict import DictDefault

    config = yaml.safe_load((Path(folder) / "axolotl.yaml").read_text())
    tokenizer = AutoTokenizer.from_pretrained(config["base_model"])
    cfg = DictDefault({**config, "sequence_len": 32768, "train_on_inputs": False})
    cwd = os.getcwd()
    os.chdir(folder)  # the entries' paths are the folder's, as the file says
    try:
        rows = []
        for entry in config["datasets"]:
            data = load_dataset_with_config(DictDefault(entry), use_auth_token=False)
            strategy = load(tokenizer, cfg, DictDefault(entry))
            rows.extend(TokenizedPromptDataset(strategy, data, process_count=1))
    finally:
        os.chdir(cwd)
    return rows


def llama_factory(folder, model_dir):
    from transformers import AutoTokenizer

    from llamafactory.data import get_dataset, get_template_and_fix_tokenizer
    from llamafactory.hparams import get_train_args

    entries = json.loads((Path(folder) / "dataset_info.json").read_text())
    train = [name for name in entries if name.startswith("traces_train")]
    model_args, data_args, training_args, _finetuning, _generating = get_train_args(
        {
            "model_name_or_path": model_dir,
            "stage": "sft",
            "do_train": True,
            "finetuning_type": "full",
            "dataset": ",".join(train),
            "dataset_dir": str(folder),
            "template": "qwen3",
            "cutoff_len": 32768,
            "output_dir": tempfile.mkdtemp(),
            "overwrite_cache": True,
            "report_to": "none",
            "use_cpu": True,
        }
    )
    # llamafactory.model's load_tokenizer, less its package (which imports TRL's value-head model, gone from TRL's main).
    tokenizer_module = {"tokenizer": AutoTokenizer.from_pretrained(model_dir), "processor": None}
    template = get_template_and_fix_tokenizer(tokenizer_module["tokenizer"], data_args)
    module = get_dataset(template, model_args, data_args, training_args, stage="sft", **tokenizer_module)
    return list(module["train_dataset"])


def automodel(folder, model_dir, template_file):
    from transformers import AutoTokenizer

    from nemo_automodel.components.datasets.llm.chat_dataset import ChatDataset

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    training = sorted(str(p) for p in Path(folder).glob("training*.jsonl"))
    data = ChatDataset(training if len(training) > 1 else training[0], tokenizer, chat_template=template_file)
    rows = []
    for i in range(len(data)):
        row = data[i]
        # ChatDataset's rows are shifted (labels[i] is token i+1, input_ids lack the last token): unshifted,
        # as transformers' causal models take them and as the report counts the whole render.
        ids, labels = list(row["input_ids"]), list(row["labels"])
        last = labels[-1] if labels and labels[-1] != -100 else tokenizer.convert_tokens_to_ids("<|im_end|>")
        rows.append({"input_ids": ids + [last], "labels": [-100] + labels})
    return rows


def finite(losses):
    return len(losses) > 0 and all(math.isfinite(x) for x in losses)


def main(work, model_dir, result_file):
    work = Path(work)
    template = str(Path(__file__).resolve().parents[2] / "templates" / "qwen3-training.jinja")
    results = []

    only = [name for name in os.environ.get("TRAINER_CHECK_ONLY", "").split(",") if name]

    def attempt(trainer, export, fn):
        if only and not any(trainer.startswith(name) for name in only):
            return
        entry = {"trainer": trainer, "export": export}
        try:
            entry.update(fn())
        except Exception as error:  # noqa: BLE001 - every failure is a finding of the check
            entry["error"] = f"{type(error).__name__}: {error}"
            entry["traceback"] = traceback.format_exc()[-2500:]
        entry["loss_finite"] = finite(entry.get("losses", []))
        results.append(entry)
        print(json.dumps({k: v for k, v in entry.items() if k not in ("traceback",)})[:1500], flush=True)

    for folder in sorted(work.glob("hf-*")):
        def trl_sft(folder=folder):
            r = run_script(folder, "train_trl.py")
            return {"steps": r["steps"], "losses": r["losses"], "max_length": r["max_length"], "counts": compare(r["rows"], expected_rows(folder, "data/train-"))}

        attempt("TRL SFTTrainer (train_trl.py)", folder.name, trl_sft)
        if (folder / "axolotl.yaml").exists():
            def axo(folder=folder):
                rows = axolotl(folder, model_dir)
                return {**train_rows(model_dir, rows), "counts": compare(counted(rows), expected_rows(folder, "data/train-"))}

            attempt("Axolotl (axolotl.yaml; steps: transformers Trainer)", folder.name, axo)

        def lf(folder=folder):
            rows = llama_factory(folder, model_dir)
            # Its own rows hold only the examples it reads whole: compared where they line up.
            return {**train_rows(model_dir, rows), "counts": compare(counted(rows), expected_rows(folder, "data/train-"))}

        attempt("LLaMA-Factory (dataset_info.json; steps: transformers Trainer)", folder.name, lf)

    for folder in sorted(work.glob("pref-*")):
        def dpo(folder=folder):
            r = run_script(folder, "train_dpo.py")
            # examples.jsonl of a preference export names the pairs, not their counts: the longest chosen conversation is max_length.
            longest = max((row["tokens"] for row in r["rows"]), default=0)
            return {"steps": r["steps"], "losses": r["losses"], "max_length": r["max_length"], "longest_chosen": longest, "counts": None}

        attempt("TRL DPOTrainer (train_dpo.py)", folder.name, dpo)

    for folder in sorted(work.glob("nemo-*")):
        def am(folder=folder):
            rows = automodel(folder, model_dir, template)
            return {**train_rows(model_dir, rows), "counts": compare(counted(rows), expected_rows(folder, "training"))}

        attempt("AutoModel ChatDataset (steps: transformers Trainer)", folder.name, am)

    Path(result_file).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main(*sys.argv[1:4])
