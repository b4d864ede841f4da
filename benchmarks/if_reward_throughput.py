"""Throughput of rlif's instruction-following reward (strict + loose), per core, next to the official IFEval code.

Workload (all from ``shared/data`` beside the checkout, deterministic):
- ``answers``: every IFBench sample response of 1-8 KB, each scored against IFEval row ``(7 * i) % 541``'s
  instructions (the real IFEval mix: 1-3 instructions per prompt, 25 ids).
- ``thinking``: the same answers behind a ~30 KB ``<think>...</think>`` trace made of other sample responses.

rlif is timed through the router entry verl calls (``rewards.compute_score``: thinking split, parsing the cached
canonical ground truth, strict and loose verdicts, metrics). The official side is lm-eval's copy of Google's
IFEval checkers driven the way its ``evaluation_lib`` does it (build each instruction from the row's kwargs,
``check_following`` on the response, then on the eight loose variants until one passes), with langdetect seeded;
it gets the text after ``</think>`` for the thinking workload, as open-instruct's verifier does. It runs only when
``RLIF_IF_ORACLE`` names a directory holding ``lm_eval/tasks/ifeval`` (docs/instruction-following.md).

Both run in this one process on one core; the ratio is what matters on a shared machine. Writes
``benchmarks/if_reward_throughput.md``.

Usage: ``python benchmarks/if_reward_throughput.py [--repeat 3]``
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rewards import compute_score
from rewards.instruction_following import normalize_ground_truth

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
"""``shared/data`` beside the checkout (``/work/shared/data`` here)."""
RESULTS = Path(__file__).with_suffix(".md")
THINKING_BYTES = 30_000


def load_workloads() -> dict[str, list[tuple[str, str, dict[str, Any]]]]:
    """Return ``{workload: [(response, canonical_ground_truth, ifeval_row)]}``."""
    rows = [json.loads(line) for line in (DATA / "ifeval_input_data.jsonl").open(encoding="utf-8")]
    samples = [
        json.loads(line)["response"] for line in (DATA / "ifbench_sample_responses.jsonl").open(encoding="utf-8")
    ]
    answers = [text for text in samples if 1_000 <= len(text.encode()) <= 8_000]
    pairs = []
    for index, answer in enumerate(answers):
        row = rows[(7 * index) % len(rows)]
        pairs.append((answer, normalize_ground_truth(row, where=f"ifeval key {row['key']}"), row))
    thinking = []
    for index, (answer, ground_truth, row) in enumerate(pairs):
        trace: list[str] = []
        cursor = index + 1
        while sum(map(len, trace)) < THINKING_BYTES:
            trace.append(samples[cursor % len(samples)])
            cursor += 1
        thinking.append((f"<think>\n{''.join(trace)[:THINKING_BYTES]}\n</think>\n\n{answer}", ground_truth, row))
    return {"answers (1-8 KB)": pairs, "thinking (30 KB trace + answer)": thinking}


def time_rlif(cases: list[tuple[str, str, dict[str, Any]]], repeat: int) -> float:
    """CPU seconds per response for rlif (best of ``repeat``)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        for response, ground_truth, _ in cases:
            compute_score("ifeval", response, ground_truth)
        best = min(best, time.process_time() - start)
    return best / len(cases)


def official_scorer() -> Callable[[str, dict[str, Any]], tuple[list[bool], list[bool]]] | None:
    """The official IFEval checkers as its evaluation_lib runs them, or None when RLIF_IF_ORACLE is not set."""
    oracle = os.environ.get("RLIF_IF_ORACLE")
    if not oracle:
        return None
    sys.path.insert(0, oracle)
    import langdetect

    langdetect.DetectorFactory.seed = 0
    registry = importlib.import_module("lm_eval.tasks.ifeval.instructions_registry").INSTRUCTION_DICT

    def score(response: str, row: dict[str, Any]) -> tuple[list[bool], list[bool]]:
        lines = response.split("\n")
        first, last, both = "\n".join(lines[1:]).strip(), "\n".join(lines[:-1]).strip(), "\n".join(lines[1:-1]).strip()
        variants = [response, response.replace("*", ""), first, last, both]
        variants += [first.replace("*", ""), last.replace("*", ""), both.replace("*", "")]
        strict, loose = [], []
        for instruction_id, kwargs in zip(row["instruction_id_list"], row["kwargs"], strict=True):
            instruction = registry[instruction_id](instruction_id)
            instruction.build_description(**{k: v for k, v in kwargs.items() if v is not None})
            args = instruction.get_instruction_args()
            if args and "prompt" in args:
                instruction.build_description(prompt=row["prompt"])
            strict.append(bool(response.strip() and instruction.check_following(response)))
            loose.append(any(text.strip() and instruction.check_following(text) for text in variants))
        return strict, loose

    return score


def _official_versions() -> str:
    """Where the official checkers came from and the nltk they ran with (its version changes word counts)."""
    import nltk

    return f"lm_eval.tasks.ifeval from {os.environ['RLIF_IF_ORACLE']}, nltk {nltk.__version__}, langdetect seeded"


def time_official(scorer: Callable, cases: list[tuple[str, str, dict[str, Any]]], repeat: int) -> float:
    """CPU seconds per response for the official checkers, fed the text after the last ``</think>``."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        for response, _, row in cases:
            scorer(response.rpartition("</think>")[2].strip(), row)
        best = min(best, time.process_time() - start)
    return best / len(cases)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="timing repeats; the best is kept")
    args = parser.parse_args()

    workloads = load_workloads()
    warm = next(iter(workloads.values()))
    for response, ground_truth, _ in warm:  # imports nltk, loads the Punkt tables and langdetect's profiles
        compute_score("ifeval", response, ground_truth)
    official = official_scorer()
    if official is not None:
        for response, _, row in warm:
            official(response, row)

    lines = [
        "# IF reward throughput (strict + loose), one core",
        "",
        f"Written by `benchmarks/if_reward_throughput.py` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
        f"Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} cores (shared machine: ratios "
        "within one run are what matter). CPU time per response, best of "
        f"{args.repeat}. Official side: {_official_versions() if official is not None else 'not run'}.",
        "",
        "| workload | responses | rlif responses/s | official IFEval responses/s | speed-up |",
        "|---|---|---|---|---|",
    ]
    for name, cases in workloads.items():
        ours = time_rlif(cases, args.repeat)
        theirs = time_official(official, cases, args.repeat) if official is not None else None
        official_cell = f"{1 / theirs:,.0f}" if theirs else "not run (set RLIF_IF_ORACLE)"
        ratio_cell = f"{theirs / ours:.1f}x" if theirs else "-"
        lines.append(f"| {name} | {len(cases)} | {1 / ours:,.0f} | {official_cell} | {ratio_cell} |")
        print(lines[-1])
    RESULTS.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
