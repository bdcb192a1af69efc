#!/usr/bin/env python3
"""Baseline for `traces dedupe --status ok`: keep the first ok record of each
(inputs_hash, config_hash), copy its line as is into OUT with the same layout.

    python3 bench/baselines/python-dedupe.py TREE OUT
"""
import os
import sys

import orjson

from tracetree import trace_files


def main():
    root, out_root = sys.argv[1], sys.argv[2]
    seen = set()
    kept = 0
    for path in trace_files(root):
        target = os.path.join(out_root, os.path.relpath(path, root))
        out = None
        with open(path, "rb") as f:
            for line in f:
                try:
                    rec = orjson.loads(line)
                except orjson.JSONDecodeError:
                    continue
                if not isinstance(rec, dict) or "exception" in rec or rec.get("outputs") is None:
                    continue
                key = (rec["inputs_hash"], rec["config_hash"])
                if key in seen:
                    continue
                seen.add(key)
                if out is None:
                    os.makedirs(os.path.dirname(target), exist_ok=True)
                    out = open(target, "wb")
                out.write(line if line.endswith(b"\n") else line + b"\n")
                kept += 1
        if out is not None:
            out.close()
    sys.stdout.write(orjson.dumps({"kept": kept}).decode() + "\n")


if __name__ == "__main__":
    main()
