#!/usr/bin/env python3
"""Baseline for `traces verify`: recompute both hashes with orjson, count mismatches.

    python3 bench/baselines/python-verify.py TREE
"""
import hashlib
import sys

import orjson

from tracetree import trace_files


def sha(obj):
    return hashlib.sha256(orjson.dumps(obj, option=orjson.OPT_SORT_KEYS)).hexdigest()


def main():
    checked = mismatches = damaged = 0
    for path in trace_files(sys.argv[1]):
        with open(path, "rb") as f:
            for line in f:
                try:
                    rec = orjson.loads(line)
                except orjson.JSONDecodeError:
                    damaged += 1
                    continue
                if not isinstance(rec, dict) or "messages" not in rec:
                    damaged += 1
                    continue
                checked += 1
                messages = rec["messages"]
                inputs = messages[:-1] if rec.get("outputs") is not None else messages
                if sha(inputs) != rec.get("inputs_hash") or sha(rec.get("config")) != rec.get("config_hash"):
                    mismatches += 1
    sys.stdout.write(orjson.dumps({"checked": checked, "mismatches": mismatches, "damaged_lines": damaged}).decode() + "\n")


if __name__ == "__main__":
    main()
