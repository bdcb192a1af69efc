#!/usr/bin/env python3
"""Baseline for `traces stats`: the loop a user would write with orjson.

    python3 bench/baselines/python-stats.py TREE
"""
import sys

import orjson

from tracetree import trace_files


def main():
    root = sys.argv[1]
    counts = {"records": 0, "ok": 0, "exception": 0, "no_output": 0, "damaged_lines": 0}
    keys = set()
    tokens = {"prompt": 0, "completion": 0, "reasoning": 0, "cached": 0}
    cost = 0.0
    files = trace_files(root)
    for path in files:
        with open(path, "rb") as f:
            for line in f:
                try:
                    rec = orjson.loads(line)
                except orjson.JSONDecodeError:
                    counts["damaged_lines"] += 1
                    continue
                if not isinstance(rec, dict) or "synalinks_version" not in rec:
                    counts["damaged_lines"] += 1
                    continue
                counts["records"] += 1
                if "exception" in rec:
                    counts["exception"] += 1
                elif rec.get("outputs") is None:
                    counts["no_output"] += 1
                else:
                    counts["ok"] += 1
                    keys.add((rec["inputs_hash"], rec["config_hash"]))
                    usage = rec.get("usage") or {}
                    tokens["prompt"] += usage.get("prompt_tokens", 0)
                    tokens["completion"] += usage.get("completion_tokens", 0)
                    tokens["reasoning"] += usage.get("reasoning_tokens", 0)
                    tokens["cached"] += usage.get("cached_tokens", 0)
                    cost += rec.get("cost") or 0.0
    counts["unique_ok_keys"] = len(keys)
    counts["files"] = len(files)
    counts["tokens"] = tokens
    counts["cost_usd"] = cost
    sys.stdout.write(orjson.dumps(counts).decode() + "\n")


if __name__ == "__main__":
    main()
