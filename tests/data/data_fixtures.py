"""Small source rows for data tests. The LogicIF and IF-training rows here are TEST FIXTURES written for these
tests (there is no real LogicIF or IF_multi_constraints data on the test machine); the IFEval and IFBench rows
come from the real benchmark files in shared/data.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SHARED_DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
"""``shared/data`` beside the checkout (``/work/shared/data`` here; CI clones put shared/ next to the repo)."""

IFEVAL_FILE = SHARED_DATA / "ifeval_input_data.jsonl"
IFBENCH_FILE = SHARED_DATA / "ifbench_test.jsonl"

_FIXTURE_FUNCTION = """def f(xs):
    total = 0
    steps = 0
    for x in xs:
        if x > {threshold}:
            total += x
        steps += 1
    return total, {{"steps": steps}}
"""


def logicif_fixture_row(task: int, case: int) -> dict[str, Any]:
    """A LogicIFEval-format row (test fixture): sum of the inputs above a per-task threshold."""
    threshold = task % 3
    xs = [case, case + 1, case + 2]
    total = sum(x for x in xs if x > threshold)
    return {
        "task_id": f"FIXTURE_{task:03d}",
        "test_case_id": case,
        "input": [xs],
        "code_output": {"output": total, "stats": {"steps": len(xs)}},
        "function": _FIXTURE_FUNCTION.format(threshold=threshold),
        "description": "fixture: sums the inputs above a threshold",
        "instruction": (
            f"(test fixture {task}/{case}) Add up every number in {xs} that is greater than {threshold}, counting "
            'each number you look at. Answer as JSON: {"output": <sum>, "stats": {"steps": <count>}}'
        ),
        "output_format": "int",
    }


def if_train_fixture_row(i: int) -> dict[str, Any]:
    """An open-instruct ``IF_multi_constraints_upto5``-format row (test fixture)."""
    return {
        "key": f"fixture-{i}",
        "messages": [{"role": "user", "content": f"(test fixture {i}) Describe the number {i} without any commas."}],
        "ground_truth": "[{'instruction_id': ['punctuation:no_comma'], 'kwargs': [None]}]",
        "dataset": "fixture",
        "constraint_type": "single",
        "constraint": "no commas",
    }


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    """Write rows as JSON lines and return the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def head_jsonl(source: Path, target: Path, n: int) -> Path:
    """Copy the first ``n`` lines of a jsonl file (keeps tests on real benchmark rows fast)."""
    lines = source.read_text(encoding="utf-8").splitlines(keepends=True)[:n]
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("".join(lines), encoding="utf-8")
    return target


def rlif_format_if_row(i: int, source: str = "iftrain") -> dict[str, Any]:
    """A row in RLIF's verl format for IF (test fixture): ground truth ``{"instruction_ids", "kwargs", "prompt"}``
    as a JSON string, kwargs null-padded, ``extra_info`` without rlif's ``item_id``/``difficulty``."""
    text = f"(test fixture {i}) Describe the number {i} in at least 5 words, without any commas."
    truth = {
        "instruction_ids": ["punctuation:no_comma", "length_constraints:number_words"],
        "kwargs": [None, {"relation": "at least", "num_words": 5.0, "num_sentences": None}],
        "prompt": text,
    }
    return {
        "data_source": source,
        "prompt": [{"role": "user", "content": text}],
        "ability": "instruction_following",
        "reward_model": {"style": "rule", "ground_truth": json.dumps(truth)},
        "extra_info": {"split": "train", "index": i, "complexity_score": None},
    }


def rlif_format_logicif_row(task: int, case: int, source: str = "logicif") -> dict[str, Any]:
    """A LogicIF row in RLIF's verl format (test fixture): ground truth ``{"task_id", "code_output"}``, the
    complexity score in ``extra_info.complexity_score`` (what RLIF's curriculum samplers read)."""
    raw = logicif_fixture_row(task, case)
    truth = {"task_id": raw["task_id"], "code_output": raw["code_output"]}
    return {
        "data_source": source,
        "prompt": [{"role": "user", "content": raw["instruction"]}],
        "ability": "logic_instruction_following",
        "reward_model": {"style": "rule", "ground_truth": json.dumps(truth)},
        "extra_info": {"split": "train", "index": case, "complexity_score": 10.0 + task + case / 2},
    }


def write_rlif_format_parquet(path: Path, rows: list[dict[str, Any]]) -> Path:
    """Write rows the way RLIF's files were written (pandas, arrow's inferred schema), not with rlif's schema."""
    import pandas as pd

    path.parent.mkdir(parents=True, exist_ok=True)
    columns = ["data_source", "prompt", "ability", "reward_model", "extra_info"]
    pd.DataFrame(rows, columns=columns).to_parquet(path, index=False)
    return path


def read_first_jsonl(path: Path, n: int) -> list[dict[str, Any]]:
    """The first ``n`` rows of a jsonl file."""
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line, _ in zip(handle, range(n), strict=False)]
