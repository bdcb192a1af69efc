"""The trace files of a Synalinks tree, as the baselines find them (shared so they agree)."""
import os
import re

NAME = re.compile(r"^(.+)_\d{8}-\d{6}\.jsonl$")


def trace_files(root):
    """<program>/<module>/<module>_<ts>.jsonl and <program>/<program>_<ts>.jsonl, not datasets/."""
    out = []
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            rel = os.path.relpath(os.path.join(dirpath, name), root).split(os.sep)
            m = NAME.match(name)
            if m and len(rel) in (2, 3) and rel[0] != "datasets" and m.group(1) == rel[-2]:
                out.append(os.path.join(dirpath, name))
    return sorted(out)
