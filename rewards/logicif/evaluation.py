"""What evaluation reports about LogicIF (LogicIFEval): case-level and question-level accuracy, by difficulty level
and by the training curriculum's complexity interval (``training_interval``, set when the evaluation file is built
against a training file: ``rlif.data.logicif_intervals``), so a curriculum run's gains can be read per interval.

A case is one test input of a function; a question is the function, which counts only if all its cases are right.
With several samples per case, question-level accuracy is the expected value of that event when each case's
samples are drawn independently: the product of the cases' rates, which is the official 0/1 at one sample.
The headline is question-level (function-level) ``question_both_acc``, the accuracy LogicIFEval reports; the
case-level rates stand beside it.
"""

from __future__ import annotations

import math
from typing import Any

from rewards.registry import Evaluation, Grouping, Layout, Metric, PromptMean, Records, mean, per_prompt

PARTS = ("both", "output", "stats")
"""What a case can get right: the output and the stats counters together, the output, the stats."""


class FunctionUnits:
    """``units`` of question-level accuracy: one unit per function (``task_id``), its value the product over its
    cases of the case's mean ``logicif_<part>``; a function's cases are resampled together."""

    def __init__(self, part: str) -> None:
        self.part = part

    def __call__(self, records: Records) -> dict[str, tuple[float, float]]:
        key = f"logicif_{self.part}"
        functions: dict[str, list[float]] = {}
        for item_id, samples in per_prompt(records).items():
            rate = mean(r.get(key, 0.0) for r in samples)
            functions.setdefault(str(samples[0].get("task_id", item_id)), []).append(rate)
        return {name: (math.prod(rates), 1.0) for name, rates in functions.items()}


METRICS = (
    *(
        Metric(f"{part}_acc", f"mean over cases of the case's mean logicif_{part}", units=PromptMean(f"logicif_{part}"))
        for part in PARTS
    ),
    *(
        Metric(
            f"question_{part}_acc",
            f"mean over functions of the product over their cases of the case's mean logicif_{part}",
            units=FunctionUnits(part),
        )
        for part in PARTS
    ),
)


def logicif_metrics(records: Records) -> dict[str, Any]:
    """LogicIFEval case-level and question-level (function-level) accuracy of output, stats and both."""
    out: dict[str, Any] = {"cases": len({r["id"] for r in records}), "functions": 0}
    cases = per_prompt(records)
    functions: dict[str, list[str]] = {}
    for item_id, samples in cases.items():
        functions.setdefault(str(samples[0].get("task_id", item_id)), []).append(item_id)
    out["functions"] = len(functions)
    for part in PARTS:
        key = f"logicif_{part}"
        out[f"{part}_acc"] = mean(r.get(key, 0.0) for r in records)
        rate = {item_id: mean(r.get(key, 0.0) for r in samples) for item_id, samples in cases.items()}
        out[f"question_{part}_acc"] = mean(math.prod(rate[i] for i in ids) for ids in functions.values())
    return out


EVALUATION = Evaluation(
    metrics=METRICS,
    headline="question_both_acc",
    compute=logicif_metrics,
    counts=("cases", "functions"),
    record_fields=("difficulty_level", "task_id", "training_interval"),
    groupings=(
        Grouping(field="difficulty_level", key="by_difficulty", label="difficulty"),
        Grouping(field="training_interval", key="by_interval", label="training interval"),
    ),
    title="accuracy",
    layout=Layout.GROUPS_PER_SOURCE,
    table_order=20,
)
