#!/usr/bin/env python3
"""Write samples/synalinks/, a small, deterministic Synalinks trace tree.

Dev tooling (not product code). Run from anywhere:

    python3 samples/make_samples.py

It rebuilds samples/synalinks/ from scratch (fixed seed, fixed uuids and
timestamps: the output is byte-identical on every run) and writes
test/fixtures/samples-expected.json with the counts the tests assert.

Every record is built the way synalinks.hooks.Recorder builds it (see
/work/shared/spec/synalinks-format.md): compact orjson, keys in the recorder's
order, `exception` only when present, and genuine hashes:
    inputs_hash = sha256(orjson.dumps(inputs, option=OPT_SORT_KEYS))
    inputs      = messages[:-1] when outputs is not None, else messages
    config_hash = sha256(orjson.dumps(config, option=OPT_SORT_KEYS))

The expected counts are computed twice, from the generator's own bookkeeping
and by re-scanning the written tree with the spec's rules, and must agree.
"""
from __future__ import annotations

import base64
import hashlib
import os
import random
import re
import shutil
import struct
import uuid
import zlib
from datetime import datetime, timedelta, timezone

import orjson

HERE = os.path.dirname(os.path.abspath(__file__))
PROJECT = os.path.dirname(HERE)
ROOT = os.path.join(HERE, "synalinks")
EXPECTED = os.path.join(PROJECT, "test", "fixtures", "samples-expected.json")

SYNALINKS_VERSION = "0.9.014"
# File-name timestamps are local time. Like the golden records, the machine that
# "recorded" these samples was on Europe/Paris summer time (UTC+2).
LOCAL_TZ = timezone(timedelta(hours=2))

rng = random.Random(20260707)


# --------------------------------------------------------------------------- helpers

def new_uuid() -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def new_tool_call_id() -> str:
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    return "call_" + "".join(rng.choice(alphabet) for _ in range(24))


def sha(obj) -> str:
    return hashlib.sha256(orjson.dumps(obj, option=orjson.OPT_SORT_KEYS)).hexdigest()


def lm_config(model: str, api_base=None, name: str = "language_model", **extra) -> dict:
    cfg = {
        "model": model,
        "api_base": api_base,
        "timeout": 600,
        "retry": 5,
        "retry_max_wait": 60,
        "caching": False,
        "cache_dir": None,
        "name": name,
        "description": "A language model API wrapper.",
    }
    cfg.update(extra)
    return {"module": "synalinks", "class_name": "LanguageModel", "config": cfg, "registered_name": None}


def usage(prompt: int, completion: int, cached: int = 0, cache_creation: int = 0, reasoning: int = 0) -> dict:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "cached_tokens": cached,
        "cache_creation_tokens": cache_creation,
        "reasoning_tokens": reasoning,
    }


# USD per token: (input, cached input, cache write, output)
PRICES = {
    "openai/gpt-4o-mini": (0.15e-6, 0.075e-6, 0.0, 0.60e-6),
    "anthropic/claude-sonnet-4-5": (3.0e-6, 0.30e-6, 3.75e-6, 15.0e-6),
}


def cost_of(model: str, u: dict) -> float:
    if model.startswith("ollama"):
        return 0.0
    p_in, p_cached, p_write, p_out = PRICES[model]
    fresh = u["prompt_tokens"] - u["cached_tokens"] - u["cache_creation_tokens"]
    return (fresh * p_in + u["cached_tokens"] * p_cached
            + u["cache_creation_tokens"] * p_write + u["completion_tokens"] * p_out)


MESSAGE_KEYS = ("role", "content", "reasoning_content", "tool_calls", "tool_call_id", "name")


def sanitize(message: dict) -> dict:
    """What synalinks keeps of a message: six keys, null values dropped, '' kept."""
    return {k: message[k] for k in MESSAGE_KEYS if k in message and message[k] is not None}


def tiny_png_data_url(rgb=(220, 38, 38)) -> str:
    """A real 1x1 PNG, as a data URL."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    idat = zlib.compress(b"\x00" + bytes(rgb), 9)
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")
    return "data:image/png;base64," + base64.b64encode(png).decode()


# --------------------------------------------------------------------------- recorder

class Book:
    """Bookkeeping of everything written, to derive the expected counts."""

    def __init__(self):
        self.records = []   # dicts: rel file, line, kind, record
        self.damaged = []   # dicts: file, line, offset
        self.skipped = []   # relative paths of non-trace files


BOOK = Book()


class Process:
    """One Python process running synalinks with record_traces() on.

    The file-name timestamp is taken at the process's first record and shared
    by every file the process writes; records are appended one line each.
    """

    def __init__(self, start: float):
        self.clock = start
        self.stamp = None
        self.lines: dict[str, list[bytes]] = {}
        self.last_usage: dict[str, tuple] = {}  # config_hash -> (usage, cost): the LM's stale values
        self.crashed = False

    def _path(self, program: str, module: str) -> str:
        if self.stamp is None:
            self.stamp = datetime.fromtimestamp(self.clock, LOCAL_TZ).strftime("%Y%m%d-%H%M%S")
        name = f"{module}_{self.stamp}.jsonl"
        if program == module:
            return f"{program}/{name}"
        return f"{program}/{module}/{name}"

    def record(self, program, module, config, inputs, *, kind="ok", outputs=None, structured=False,
               u=None, exception=None, parent="auto", duration=None, gap=None, truncate_at=None):
        assert not self.crashed
        rel = self._path(program, module)
        ts = self.clock
        if duration is None:
            duration = rng.uniform(0.4, 3.5) if kind == "ok" else rng.uniform(0.0004, 0.002)
        self.clock += duration + (gap if gap is not None else rng.uniform(0.001, 0.05))
        config_hash = sha(config)
        model = config["config"]["model"]

        if kind == "ok":
            assert outputs is not None and u is not None
            cost = cost_of(model, u)
            if structured:
                completion = {"role": "assistant", "content": orjson.dumps(outputs).decode()}
            else:
                completion = sanitize(outputs)
            messages = list(inputs) + [completion]
            self.last_usage[config_hash] = (u, cost)
        elif kind == "exception":
            assert exception
            u, cost, outputs, messages = None, None, None, list(inputs)
        elif kind == "no_output":
            # stale usage/cost from the previous call of the same LM
            u, cost = self.last_usage[config_hash]
            outputs, messages = None, list(inputs)
        else:
            raise ValueError(kind)

        rec = {
            "synalinks_version": SYNALINKS_VERSION,
            "call_id": new_uuid(),
            "parent_call_id": new_uuid() if parent == "auto" else parent,
            "program": program,
            "module": module,
            "timestamp": ts,
            "duration": duration,
            "usage": u,
            "cost": cost,
            "messages": messages,
            "inputs_hash": sha(messages[:-1] if outputs is not None else messages),
            "outputs": outputs,
            "config": config,
            "config_hash": config_hash,
        }
        if exception is not None:
            rec["exception"] = exception

        line = orjson.dumps(rec)
        lines = self.lines.setdefault(rel, [])
        if truncate_at is not None:
            # crash mid-write: the line is cut, no newline, nothing follows
            cut = line[: int(len(line) * truncate_at)]
            assert cut[-1:].isascii() and cut[-1] < 0x80
            offset = sum(len(x) for x in lines)
            lines.append(cut)
            BOOK.damaged.append({"file": rel, "line": len(lines), "offset": offset})
            self.crashed = True
        else:
            lines.append(line + b"\n")
            BOOK.records.append({"file": rel, "line": len(lines), "kind": kind, "record": rec})
        return rec

    def flush(self):
        for rel, lines in self.lines.items():
            path = os.path.join(ROOT, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "ab") as f:
                for line in lines:
                    f.write(line)


def write_other(rel: str, data: bytes):
    path = os.path.join(ROOT, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    BOOK.skipped.append(rel)


# --------------------------------------------------------------------------- content

def instructions(keys) -> dict:
    return {"role": "system",
            "content": "<instructions>\nYour task is to answer with a JSON containing the following keys: "
                       f"{list(keys)!r}\n</instructions>\n"}


def query(q: str) -> dict:
    return {"role": "user", "content": f"<input>\n{{'query': {q!r}}}\n</input>\n<output>\n"}


SCHEMA_ERROR = ("`schema` and `tools` cannot be passed to the same LM call: schema forces structured output, "
                "while tools let the LM choose which to call. Split into two calls: typically the tool-call "
                "generator uses `tools` and the final generator uses `schema`.")

GPT4O_MINI_T0 = lm_config("openai/gpt-4o-mini", temperature=0.0)
MISTRAL = lm_config("ollama_chat/mistral", api_base="http://localhost:11434")
MISTRAL_T07 = lm_config("ollama_chat/mistral", api_base="http://localhost:11434", temperature=0.7)
GPT4O_MINI = lm_config("openai/gpt-4o-mini")
QWEN3 = lm_config("ollama_chat/qwen3:8b", api_base="http://localhost:11434", temperature=0.6, top_p=0.95)
CLAUDE = lm_config("anthropic/claude-sonnet-4-5", max_tokens=4096,
                   thinking={"type": "enabled", "budget_tokens": 2048})

QA_KEYS = ("rationale", "answer")
COT_KEYS = ("answer", "thinking")


def build_my_program_process1(p: Process):
    """my_program: a structured generator, a chain-of-thought generator, and the
    Program calling the LM itself (depth-2 file beside the depth-3 folders)."""
    prog = "my_program"

    def qa(q, rationale, answer, u, **kw):
        return p.record(prog, "generator", GPT4O_MINI_T0, [instructions(QA_KEYS), query(q)],
                        outputs={"rationale": rationale, "answer": answer}, structured=True, u=u, **kw)

    def cot(q, answer, thinking, u):
        return p.record(prog, "generator_cot", MISTRAL_T07, [instructions(COT_KEYS), query(q)],
                        outputs={"answer": answer, "thinking": thinking}, structured=True, u=u)

    qa("What is the capital of France?",
       "Paris has been the capital of France since the late 10th century.", "Paris",
       usage(61, 24))
    cot("If a train leaves at 14:05 and arrives at 16:50, how long is the trip?",
        "2 hours 45 minutes",
        "From 14:05 to 16:05 is 2 hours, and from 16:05 to 16:50 is 45 minutes, so 2 h 45 min.",
        usage(74, 52))
    qa("Quelle est la ville française de l'aéronautique ?",
       "Toulouse accueille Airbus, l'ISAE-SUPAERO et le CNES : c'est le cœur de l'aéronautique française.",
       "Toulouse", usage(66, 41))
    # a streamed call: no outputs, no exception, stale usage/cost of the previous call
    p.record(prog, "generator", GPT4O_MINI_T0,
             [instructions(QA_KEYS), query("Summarize the plot of Les Misérables in one sentence.")],
             kind="no_output", duration=4.81236457824707)
    # A quiet failure for the quality stages: the call returned, status ok, and the model refused.
    qa("Which planet is known as the Red Planet? 🚀",
       "I'm sorry, but I can't help with that request.", "", usage(63, 14))
    p.record(prog, "my_program", MISTRAL,
             [{"role": "system", "content": "You are a concise assistant. Answer in one short paragraph."},
              # A planted secret for `traces scan` and the export's redaction: AWS's documented example
              # key (it ends in EXAMPLE), pasted as users paste real ones.
              {"role": "user", "content": "Explique la différence entre « latence » et « débit » en réseau. "
                                          "Mon outil de mesure utilise la clé AKIAIOSFODNN7EXAMPLE."}],
             outputs={"role": "assistant",
                      "content": "La latence est le délai d'un aller (ou aller-retour) d'un paquet, mesuré en "
                                 "millisecondes ; le débit est la quantité de données transférées par seconde. "
                                 "Une liaison peut avoir un gros débit et une latence élevée (satellite)."},
             u=usage(38, 71))
    cot("How many prime numbers are there between 10 and 30?",
        "6",
        "The primes between 10 and 30 are 11, 13, 17, 19, 23 and 29. That is 6 numbers.",
        usage(69, 58))
    p.record(prog, "generator", GPT4O_MINI_T0,
             [instructions(("answer",)), query("What is 2+2?")],
             kind="exception", exception=SCHEMA_ERROR)
    qa("Combien de côtés a un hexagone ?",
       "Un hexagone est un polygone à six côtés (hexa = six en grec).", "6", usage(64, 30))
    cot("Ordonne du plus petit au plus grand : 0,7 ; 0,65 ; 0,072.",
        "0,072 < 0,65 < 0,7",
        "En comparant les dixièmes : 0,0… < 0,6… < 0,7…, donc 0,072 < 0,65 < 0,7.",
        usage(81, 63))


def build_my_program_process2(p: Process):
    """A second process of the same module, hours later: a re-run of an earlier
    question (same inputs and config: same hashes, a different completion),
    a new question, then a crash mid-write."""
    prog = "my_program"
    p.record(prog, "generator", GPT4O_MINI_T0,
             [instructions(QA_KEYS), query("What is the capital of France?")],
             outputs={"rationale": "The seat of the French government and the largest city is Paris.",
                      "answer": "Paris"},
             structured=True, u=usage(61, 22))
    p.record(prog, "generator", GPT4O_MINI_T0,
             [instructions(QA_KEYS), query("At what temperature does water boil at sea level, in °C?")],
             outputs={"rationale": "At 1 atm pure water boils at 100 °C.", "answer": "100 °C"},
             structured=True, u=usage(70, 21))
    p.record(prog, "generator", GPT4O_MINI_T0,
             [instructions(QA_KEYS), query("Who wrote « Le Petit Prince » ?")],
             outputs={"rationale": "Antoine de Saint-Exupéry published it in 1943.",
                      "answer": "Antoine de Saint-Exupéry"},
             structured=True, u=usage(67, 25), truncate_at=0.62)


AGENT_SYSTEM = {
    "role": "system",
    "content": "<instructions>\nUse the tools to answer the query step by step. Call a tool whenever a "
               "computation is needed; when you have everything, answer without calling any tool.\n"
               "</instructions>\n",
}


def agent_run(p: Process, question: str, steps, final_text: str, final_outputs: dict, tool_usage, final_usage):
    """One FunctionCallingAgent run: each step's inputs are the previous step's
    full messages plus the tool results; the final generator sees everything."""
    prog = "math_agent"
    parent = new_uuid()  # the agent's invocation (never recorded itself)
    messages = [AGENT_SYSTEM, {"role": "user", "content": f"<input>\n{{'query': {question!r}}}\n</input>\n"}]
    for i, calls in enumerate(steps):
        tool_calls = [{"id": new_tool_call_id(), "type": "function",
                       "function": {"name": name, "arguments": args}} for name, args, _ in calls]
        outputs = {"role": "assistant", "content": "", "tool_calls": tool_calls}
        rec = p.record(prog, f"tool_calls_generator_{prog}", GPT4O_MINI, messages, outputs=outputs,
                       u=tool_usage[i], parent=parent)
        messages = list(rec["messages"])
        for tc, (name, _args, result) in zip(tool_calls, calls):
            messages.append({"role": "tool", "content": {"result": result, "log": "Successfully executed"},
                             "tool_call_id": tc["id"], "name": name})
    rec = p.record(prog, f"tool_calls_generator_{prog}", GPT4O_MINI, messages,
                   outputs={"role": "assistant", "content": final_text}, u=tool_usage[len(steps)],
                   parent=parent)
    messages = list(rec["messages"])
    p.record(prog, f"final_generator_{prog}", GPT4O_MINI, messages, outputs=final_outputs, structured=True,
             u=final_usage, parent=parent)


def build_math_agent(p: Process):
    agent_run(
        p, "How much is 423 multiplied by 362, plus 7?",
        steps=[
            [("multiply", {"a": 423, "b": 362}, float(423 * 362))],
            [("add", {"a": 153126.0, "b": 7}, 153126.0 + 7)],
        ],
        final_text="423 × 362 = 153126, and 153126 + 7 = 153133.",
        final_outputs={"answer": 153133.0},
        tool_usage=[usage(1112, 18), usage(1158, 19, cached=1024), usage(1201, 17, cached=1152)],
        final_usage=usage(1243, 9, cached=1152),
    )
    agent_run(
        p, "Un vélo coûte 480 € HT et un casque 65,90 € HT. Quel est le total TTC avec 20 % de TVA ?",
        steps=[
            [("multiply", {"a": 480, "b": 1.2}, 480 * 1.2),
             ("multiply", {"a": 65.9, "b": 1.2}, 65.9 * 1.2)],
            [("add", {"a": 576.0, "b": 79.08}, 576.0 + 79.08)],
        ],
        final_text="Vélo : 576,00 € TTC ; casque : 79,08 € TTC ; total : 655,08 € TTC.",
        final_outputs={"velo_ttc": 576.0, "casque_ttc": 79.08, "total_ttc": 655.08},
        tool_usage=[usage(1139, 46), usage(1234, 21, cached=1024), usage(1281, 38, cached=1152)],
        final_usage=usage(1334, 26, cached=1280),
    )


def build_direct_calls(p: Process):
    """The LM called directly: program == module == the LM's name, no parent."""
    p.record("language_model", "language_model", QWEN3,
             [{"role": "user", "content": "Is 1001 a prime number? Answer yes or no, then explain briefly."}],
             outputs={"role": "assistant",
                      "content": "No. 1001 = 7 × 11 × 13, so it is not prime.",
                      "reasoning_content": "Okay, let me check 1001. It's odd, digit sum is 2 so not divisible by 3. "
                                           "Try 7: 7 × 143 = 1001. And 143 = 11 × 13. So 1001 = 7 × 11 × 13, "
                                           "not prime."},
             u=usage(31, 142), parent=None)
    p.record("language_model", "language_model", GPT4O_MINI,
             [{"role": "user", "content": [
                 {"type": "text", "text": "Décris cette image en une phrase."},
                 {"type": "image_url", "image_url": {"url": tiny_png_data_url()}},
             ]}],
             outputs={"role": "assistant",
                      "content": "C'est une image d'un seul pixel, de couleur rouge vif."},
             u=usage(96, 17), parent=None)


def build_anthropic(p: Process):
    """Anthropic extended thinking: raw thinking_blocks in outputs, folded into
    reasoning_content (joined with \\n, redacted blocks skipped)."""
    def call(question, blocks, content, u):
        thinking = "\n".join(b["thinking"] for b in blocks if b["type"] == "thinking")
        outputs = {"role": "assistant", "content": content, "reasoning_content": thinking,
                   "thinking_blocks": blocks}
        p.record("language_model", "language_model", CLAUDE, [{"role": "user", "content": question}],
                 outputs=outputs, u=u, parent=None, duration=rng.uniform(4.0, 9.0))

    def sig() -> str:
        return base64.b64encode(rng.randbytes(72)).decode()

    call("A bat and a ball cost $1.10 in total. The bat costs $1.00 more than the ball. How much is the ball?",
         [{"type": "thinking",
           "thinking": "Let the ball be x. Then the bat is x + 1.00, and x + x + 1.00 = 1.10, so 2x = 0.10 "
                       "and x = 0.05.",
           "signature": sig()}],
         "The ball costs $0.05 (and the bat $1.05).",
         usage(58, 187, reasoning=121))
    call("Traduis en anglais : « Il pleut des cordes, on reste à la maison ☔ ».",
         [{"type": "thinking",
           "thinking": "« Il pleut des cordes » is an idiom: the English equivalent is \"it's raining cats and dogs\".",
           "signature": sig()},
          {"type": "redacted_thinking", "data": base64.b64encode(rng.randbytes(96)).decode()},
          {"type": "thinking",
           "thinking": "Keep the umbrella emoji at the end.",
           "signature": sig()}],
         "\"It's raining cats and dogs, so we're staying home ☔.\"",
         usage(49, 233, reasoning=164))


def build_non_traces():
    write_other("synalinks.json", orjson.dumps(
        {"backend": "pydantic", "epsilon": 1e-07, "floatx": "float32"}, option=orjson.OPT_INDENT_2) + b"\n")
    write_other("notes.jsonl",
                b'{"note":"rerun math_agent with gpt-4o once the budget is approved"}\n'
                b'{"note":"generator_cot: try temperature 0.2"}\n')
    write_other("knowledge.db", b"SQLite format 3\x00\x10\x00\x01\x01\x00@  \x00\x00\x00\x02")
    write_other("datasets/some_ds/train.jsonl", b"".join(orjson.dumps(x) + b"\n" for x in [
        {"question": "What is 7 * 8?", "answer": "56"},
        {"question": "Quelle est la capitale de l'Italie ?", "answer": "Rome"},
        {"question": "What colour is the sky?", "answer": "blue"},
    ]))
    # looks exactly like a trace file, but the stem is not the folder's name
    msgs = [instructions(QA_KEYS), query("This file must be skipped.")]
    out = {"rationale": "Its stem does not match its folder.", "answer": "skip"}
    u = usage(60, 20)
    rec = {
        "synalinks_version": SYNALINKS_VERSION, "call_id": new_uuid(), "parent_call_id": new_uuid(),
        "program": "my_program", "module": "generator", "timestamp": 1767222000.123456, "duration": 0.9,
        "usage": u, "cost": cost_of("openai/gpt-4o-mini", u),
        "messages": msgs + [{"role": "assistant", "content": orjson.dumps(out).decode()}],
        "inputs_hash": sha(msgs), "outputs": out, "config": GPT4O_MINI_T0, "config_hash": sha(GPT4O_MINI_T0),
    }
    write_other("my_program/generator/other_20260101-000000.jsonl", orjson.dumps(rec) + b"\n")


# --------------------------------------------------------------------------- scan (spec rules)

KEY_ORDER = ["synalinks_version", "call_id", "parent_call_id", "program", "module", "timestamp", "duration",
             "usage", "cost", "messages", "inputs_hash", "outputs", "config", "config_hash"]
FILE_RE = re.compile(r"^(?P<module>.+)_(?P<ts>\d{8}-\d{6})\.jsonl$")


def scan(root: str):
    """Re-read the tree with the spec's rules, independently of the bookkeeping."""
    trace_files, skipped = [], []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for fn in sorted(filenames):
            rel = os.path.relpath(os.path.join(dirpath, fn), root).replace(os.sep, "/")
            parts = rel.split("/")
            m = FILE_RE.match(parts[-1])
            ok = (m is not None and len(parts) in (2, 3) and parts[0] != "datasets"
                  and m.group("module") == parts[-2])
            (trace_files if ok else skipped).append(rel)
    trace_files.sort()
    records, damaged = [], []
    for rel in trace_files:
        with open(os.path.join(root, rel), "rb") as f:
            data = f.read()
        offset = 0
        for i, line in enumerate(data.split(b"\n")[: None if not data.endswith(b"\n") else -1], start=1):
            try:
                rec = orjson.loads(line)
            except orjson.JSONDecodeError:
                damaged.append({"file": rel, "line": i, "offset": offset})
                offset += len(line) + 1
                continue
            offset += len(line) + 1
            # genuine hashes and byte-exact re-serialisation
            assert orjson.dumps(rec) == line, (rel, i)
            inputs = rec["messages"][:-1] if rec["outputs"] is not None else rec["messages"]
            assert sha(inputs) == rec["inputs_hash"], (rel, i)
            assert sha(rec["config"]) == rec["config_hash"], (rel, i)
            assert list(rec) == KEY_ORDER + (["exception"] if "exception" in rec else []), (rel, i)
            parts = rel.split("/")
            assert rec["program"] == parts[0] and rec["module"] == parts[-2], (rel, i)
            if "exception" in rec:
                kind = "exception"
                assert rec["usage"] is None and rec["cost"] is None and rec["outputs"] is None
            elif rec["outputs"] is None:
                kind = "no_output"
            else:
                kind = "ok"
            records.append({"file": rel, "line": i, "kind": kind, "record": rec})
    return trace_files, sorted(skipped), records, damaged


def expected_from(trace_files, skipped, records, damaged) -> dict:
    ok = [r["record"] for r in records if r["kind"] == "ok"]
    keys = {(r["inputs_hash"], r["config_hash"]) for r in ok}
    per_program, per_module, per_file = {}, {}, {}
    for r in records:
        rec = r["record"]
        per_program[rec["program"]] = per_program.get(rec["program"], 0) + 1
        mk = f'{rec["program"]}/{rec["module"]}'
        per_module[mk] = per_module.get(mk, 0) + 1
    for rel in trace_files:
        per_file[rel] = {
            "records": sum(1 for r in records if r["file"] == rel),
            "damaged_lines": sum(1 for d in damaged if d["file"] == rel),
        }
    kinds = {k: sum(1 for r in records if r["kind"] == k) for k in ("ok", "exception", "no_output")}
    per_module_kinds = {}
    for r in records:
        mk = f'{r["record"]["program"]}/{r["record"]["module"]}'
        d = per_module_kinds.setdefault(mk, {"ok": 0, "exception": 0, "no_output": 0})
        d[r["kind"]] += 1
    tok = lambda k: sum(r["usage"][k] for r in ok)  # noqa: E731
    assert len(damaged) == 1
    return {
        "note": ("Generated by samples/make_samples.py from samples/synalinks; do not edit by hand. "
                 "records = parsed trace records (ok + exception + no_output), damaged lines excluded. "
                 "unique_ok_keys = distinct (inputs_hash, config_hash) pairs among ok records; "
                 "duplicate_ok_records = ok - unique_ok_keys. Token and cost sums cover ok records only "
                 "(no_output usage/cost is stale). cost_sum_ok is a float sum in the order of trace_files "
                 "then line: compare with a tolerance (1e-12). Paths are relative to samples/synalinks. "
                 "per_module keys are '<program>/<module>'. File-name timestamps are local time UTC+2."),
        "root": "samples/synalinks",
        "synalinks_version": SYNALINKS_VERSION,
        "records": len(records),
        "ok": kinds["ok"],
        "exception": kinds["exception"],
        "no_output": kinds["no_output"],
        "damaged_lines": len(damaged),
        "unique_ok_keys": len(keys),
        "unique_ok_inputs_hashes": len({r["inputs_hash"] for r in ok}),
        "duplicate_ok_records": len(ok) - len(keys),
        "distinct_config_hashes": len({r["record"]["config_hash"] for r in records}),
        "per_program": dict(sorted(per_program.items())),
        "per_module": dict(sorted(per_module.items())),
        "per_module_kinds": dict(sorted(per_module_kinds.items())),
        "tokens_ok": {
            "prompt": tok("prompt_tokens"),
            "completion": tok("completion_tokens"),
            "total": tok("total_tokens"),
            "reasoning": tok("reasoning_tokens"),
            "cached": tok("cached_tokens"),
            "cache_creation": tok("cache_creation_tokens"),
        },
        "cost_sum_ok": sum(r["cost"] for r in ok),
        "trace_files": trace_files,
        "per_file": per_file,
        "skipped_paths": skipped,
        "damaged_line": damaged[0],
    }


# --------------------------------------------------------------------------- main

def main():
    if os.path.exists(ROOT):
        shutil.rmtree(ROOT)
    os.makedirs(ROOT)

    # 2026-07-07 10:15:30 local (08:15:30 UTC): a script running my_program
    p1 = Process(1783412130.4567847)
    build_my_program_process1(p1)
    # same day 14:30:02 local: a second process of the same program, which crashes
    p2 = Process(1783427402.0913532)
    build_my_program_process2(p2)
    # next day: the math agent, two runs in one process
    p3 = Process(1783521045.3381705)
    build_math_agent(p3)
    # direct LM calls from a notebook, then another process with Claude
    p4 = Process(1783494312.7204213)
    build_direct_calls(p4)
    p5 = Process(1783494753.2650187)
    build_anthropic(p5)
    for p in (p1, p2, p3, p4, p5):
        p.flush()
    build_non_traces()

    trace_files, skipped, records, damaged = scan(ROOT)

    # the scan must agree with what was written
    def key(r):
        return (r["file"], r["line"])
    assert sorted(map(key, records)) == sorted(map(key, BOOK.records)), "records differ"
    assert {key(r): r["kind"] for r in records} == {key(r): r["kind"] for r in BOOK.records}
    assert damaged == BOOK.damaged, (damaged, BOOK.damaged)
    assert skipped == sorted(BOOK.skipped), (skipped, BOOK.skipped)

    expected = expected_from(trace_files, skipped, records, damaged)
    os.makedirs(os.path.dirname(EXPECTED), exist_ok=True)
    with open(EXPECTED, "wb") as f:
        f.write(orjson.dumps(expected, option=orjson.OPT_INDENT_2) + b"\n")
    print(f"wrote {len(records)} records in {len(trace_files)} trace files under {os.path.relpath(ROOT, PROJECT)}")
    print(f"wrote {os.path.relpath(EXPECTED, PROJECT)}")


if __name__ == "__main__":
    main()
