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
    print("| trainer | export | commit | steps run | loss finite | counts agreeing with `_traces/examples.jsonl` |")
    print("|---|---|---|---|---|---|")
    for r in json.loads(Path(result).read_text()):
        source = next((s for k, s in SOURCES.items() if r["trainer"].startswith(k)), "")
        outcome = " — " + r["error"].splitlines()[0][:160] if "error" in r else ""
        print(f"| {r['trainer']} | {r['export']} | {commits.get(source, '?')} | {r.get('steps', 0)} | {'yes' if r['loss_finite'] else 'no'} | {counts(r)}{outcome} |")


def counts(r):
    """Both counts agreeing, else tokens and trained tokens apart, with how the trained tokens differ."""
    c = r.get("counts")
    if not c:
        return f"max_length {r['max_length']}, longest chosen conversation {r['longest_chosen']}" if "longest_chosen" in r else "-"
    if c["agree"] == c["examples"]:
        return f"{c['agree']} of {c['examples']}"
    aligned = c["rows"]
    text = f"both {c['agree']} of {c['examples']}; tokens {c['tokens_agree']} of {aligned}, trained {c['trained_agree']} of {aligned}"
    if c["trained_diff"]:
        spread = ", ".join(f"{int(d):+d} ×{k}" for d, k in sorted(c["trained_diff"].items(), key=lambda item: int(item[0])))
        text += f" (trained, trainer − report: {spread})"
    if c["left_out"]:
        text += f"; {len(c['left_out'])} left out (line{'s' if len(c['left_out']) > 1 else ''} {', '.join(str(e['line']) for e in c['left_out'])})"
    return text

if __name__ == "__main__":
    main(*sys.argv[1:3])
