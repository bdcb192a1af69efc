"""The check's table in Markdown: trainer, commit, steps run, loss finite, counts agreeing.

    python3 table.py RESULT.json SRC

SRC/COMMITS names the commit of each trainer's sources, one `owner+name commit` a line.
"""
import json
import sys
from pathlib import Path

SOURCES = {"TRL": "huggingface+trl", "Axolotl": "axolotl-ai-cloud+axolotl", "LLaMA-Factory": "hiyouga+LLaMA-Factory", "AutoModel": "NVIDIA-NeMo+Automodel"}


def main(result, src):
    commits = {}
    listing = Path(src) / "COMMITS"
    if listing.exists():
        for line in listing.read_text().splitlines():
            name, _, commit = line.partition(" ")
            commits[name] = commit[:12]
    print("| trainer | export | commit | steps run | loss finite | counts agreeing (tokens and trained, per example) |")
    print("|---|---|---|---|---|---|")
    for r in json.loads(Path(result).read_text()):
        source = next((s for k, s in SOURCES.items() if r["trainer"].startswith(k)), "")
        c = r.get("counts")
        counts = f"{c['agree']} of {c['examples']} ({c['rows']} rows)" if c else "-"
        outcome = r.get("error", "").splitlines()[0][:120] if "error" in r else ""
        print(f"| {r['trainer']} | {r['export']} | {commits.get(source, '?')} | {r.get('steps', 0)} | {'yes' if r['loss_finite'] else 'no'} | {counts}{' — ' + outcome if outcome else ''} |")


if __name__ == "__main__":
    main(*sys.argv[1:3])
