"""Loaded by Python at start-up (this folder on PYTHONPATH) when a written script is run as a user would.

It changes no line of the script: it caps every transformers Trainer at TRAINER_CHECK_STEPS optimizer
steps on the CPU, with no checkpoint or report, and writes to TRAINER_CHECK_OUT (JSON) what the
trainer was handed (each training row's tokens and trained tokens, after the trainer's own
processing and truncation) and the losses of the steps it ran.
"""
import json
import os

OUT = os.environ.get("TRAINER_CHECK_OUT")

if OUT:
    import transformers

    _post_init = transformers.TrainingArguments.__post_init__

    def _capped(self):
        self.max_steps = int(os.environ.get("TRAINER_CHECK_STEPS", "2"))
        self.save_strategy = "no"
        self.eval_strategy = "no"
        self.report_to = []
        self.logging_steps = 1
        self.use_cpu = True
        self.per_device_train_batch_size = 1
        self.gradient_accumulation_steps = 1
        self.dataloader_num_workers = 0
        _post_init(self)

    transformers.TrainingArguments.__post_init__ = _capped

    _train = transformers.Trainer.train

    def _counted_train(self, *args, **kwargs):
        rows = []
        for row in self.train_dataset:
            chosen = row.get("chosen_ids", row.get("chosen_input_ids"))
            if chosen is not None:  # DPO: the prompt and the chosen answer, as the chosen conversation
                prompt = row.get("prompt_ids", row.get("prompt_input_ids", []))
                rows.append({"tokens": len(prompt) + len(chosen), "trained": len(chosen)})
            elif "labels" in row:
                rows.append({"tokens": len(row["input_ids"]), "trained": sum(1 for label in row["labels"] if label != -100)})
            else:
                mask = row.get("assistant_masks") or row.get("completion_mask")
                rows.append({"tokens": len(row["input_ids"]), "trained": sum(mask) if mask is not None else len(row["input_ids"])})
        result = _train(self, *args, **kwargs)
        losses = [h["loss"] for h in self.state.log_history if "loss" in h]
        with open(OUT, "w") as f:
            json.dump({"rows": rows, "steps": self.state.global_step, "losses": losses, "max_length": getattr(self.args, "max_length", None)}, f)
        return result

    transformers.Trainer.train = _counted_train
