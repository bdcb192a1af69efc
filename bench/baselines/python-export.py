#!/usr/bin/env python3
"""Baseline for `traces export --format openai`: ok records, deduplicated on
(inputs_hash, config_hash), written as {"messages": [...]} to OUT/training.jsonl.

    python3 bench/baselines/python-export.py TREE OUT
"""
import os
import sys

import orjson

from tracetree import trace_files


def main():
    root, out_dir = sys.argv[1], sys.argv[2]
    os.makedirs(out_dir, exist_ok=True)
    seen = set()
    written = 0
    with open(os.path.join(out_dir, "training.jsonl"), "wb") as out:
        for path in trace_files(root):
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
                    out.write(orjson.dumps({"messages": rec["messages"]}) + b"\n")
                    written += 1
    sys.stdout.write(orjson.dumps({"written": written}).decode() + "\n")


if __name__ == "__main__":
    main()
