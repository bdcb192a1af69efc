#!/usr/bin/env python3
"""Checks a tree written by bench/generate.ts with Python + orjson, independently of the
TypeScript code: every line re-serializes byte for byte (orjson.dumps(orjson.loads(line))
== line), keys are in the recorder's order, both hashes are what synalinks computes, and the
counts equal DIR.expected.json.

    python3 bench/check_tree.py DIR

Prints a JSON report on stdout; exit code 0 when everything agrees, 1 otherwise.
"""
import hashlib
import os
import re
import sys

import orjson

KEY_ORDER = ["synalinks_version", "call_id", "parent_call_id", "program", "module", "timestamp", "duration",
             "usage", "cost", "messages", "inputs_hash", "outputs", "config", "config_hash"]
FILE_RE = re.compile(r"^(?P<module>.+)_(?P<ts>\d{8}-\d{6})\.jsonl$")


def sha(obj) -> str:
    return hashlib.sha256(orjson.dumps(obj, option=orjson.OPT_SORT_KEYS)).hexdigest()


def trace_files(root):
    found, skipped = [], []
    for dirpath, dirnames, filenames in os.walk(root):
        for fn in filenames:
            rel = os.path.relpath(os.path.join(dirpath, fn), root).replace(os.sep, "/")
            parts = rel.split("/")
            m = FILE_RE.match(parts[-1])
            ok = (m is not None and len(parts) in (2, 3) and parts[0] != "datasets"
                  and m.group("module") == parts[-2])
            (found if ok else skipped).append(rel)
    return sorted(found), sorted(skipped)


def main():
    root = sys.argv[1].rstrip("/")
    with open(root + ".expected.json", "rb") as f:
        expected = orjson.loads(f.read())
    files, skipped = trace_files(root)
    problems = []
    counts = {"records": 0, "ok": 0, "exception": 0, "no_output": 0}
    damaged = []
    keys = set()
    tokens = {"prompt": 0, "completion": 0, "reasoning": 0, "cached": 0}
    cost = 0.0
    per_module = {}
    for rel in files:
        with open(os.path.join(root, rel), "rb") as f:
            data = f.read()
        lines = data.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        for i, line in enumerate(lines, start=1):
            try:
                rec = orjson.loads(line)
                if not isinstance(rec, dict):
                    raise ValueError("not an object")
            except (orjson.JSONDecodeError, ValueError):
                damaged.append({"file": rel, "line": i})
                continue
            where = f"{rel}:{i}"
            if orjson.dumps(rec) != line:
                problems.append(f"{where}: not byte-identical to orjson.dumps")
            if list(rec) != KEY_ORDER + (["exception"] if "exception" in rec else []):
                problems.append(f"{where}: key order {list(rec)}")
            inputs = rec["messages"][:-1] if rec["outputs"] is not None else rec["messages"]
            if sha(inputs) != rec["inputs_hash"]:
                problems.append(f"{where}: inputs_hash differs")
            if sha(rec["config"]) != rec["config_hash"]:
                problems.append(f"{where}: config_hash differs")
            parts = rel.split("/")
            if rec["program"] != parts[0] or rec["module"] != parts[-2]:
                problems.append(f"{where}: program/module do not match the path")
            counts["records"] += 1
            if "exception" in rec:
                kind = "exception"
                if rec["usage"] is not None or rec["cost"] is not None or rec["outputs"] is not None:
                    problems.append(f"{where}: exception record with usage/cost/outputs")
            elif rec["outputs"] is None:
                kind = "no_output"
            else:
                kind = "ok"
                keys.add((rec["inputs_hash"], rec["config_hash"]))
                u = rec["usage"]
                tokens["prompt"] += u["prompt_tokens"]
                tokens["completion"] += u["completion_tokens"]
                tokens["reasoning"] += u["reasoning_tokens"]
                tokens["cached"] += u["cached_tokens"]
                cost += rec["cost"]
            counts[kind] += 1
            mk = f'{rec["program"]}/{rec["module"]}'
            per_module[mk] = per_module.get(mk, 0) + 1

    def compare(name, got, want):
        if got != want:
            problems.append(f"{name}: python {got!r} != expected {want!r}")

    for k in ("records", "ok", "exception", "no_output"):
        compare(k, counts[k], expected[k])
    compare("damaged_lines", len(damaged), expected["damaged_lines"])
    compare("damaged", damaged, [{"file": d["file"], "line": d["line"]} for d in expected["damaged"]])
    compare("unique_ok_keys", len(keys), expected["unique_ok_keys"])
    compare("trace_files", len(files), expected["trace_files"])
    compare("skipped_paths", skipped, expected["skipped_paths"])
    compare("per_module", per_module, expected["per_module"])
    for k in tokens:
        compare(f"tokens_ok.{k}", tokens[k], expected["tokens_ok"][k])
    if abs(cost - expected["cost_sum_ok"]) > 1e-9 * max(1.0, abs(cost)):
        problems.append(f"cost_sum_ok: python {cost!r} != expected {expected['cost_sum_ok']!r}")
    report = {"orjson": orjson.__version__, "records": counts["records"], "files": len(files),
              "problems": problems[:50], "problem_count": len(problems)}
    sys.stdout.write(orjson.dumps(report).decode() + "\n")
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
