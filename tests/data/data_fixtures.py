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
