"""The curriculum interval of a LogicIFEval row: where its complexity score falls in a training file's cut.

A stage-2 run cuts its LogicIF rows by complexity score (``extra_info.difficulty``) into an easiest initial share and
``num_intervals`` near-equal intervals, each function whole (``samplers.intervals.split_functions_by_difficulty``).
Reporting evaluation by those intervals asks how the model does on functions as hard as the ones each interval
trained on. The training cut is redone here with the same function and parameters, and each interval is described
by the highest score among its training rows; an evaluation function takes the first interval whose highest score
reaches its own (a score tied across a boundary takes the easier interval), and one harder than every training
function takes the hardest interval. The evaluation score is computed by the same code as the training one
(``rlif.data.logicif_complexity``), so both sides of the comparison are one scale.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rlif.data.files import read_source_rows
from rlif.data.sources import LOGICIF_SOURCE
from samplers.intervals import split_functions_by_difficulty

NUM_INTERVALS = 10
"""The stage-2 runs' ``num_intervals`` (``recipe/matrix.yaml``)."""
INITIAL_FRACTION = 0.3
"""The stage-2 samplers' initial share (the reward curriculum's default, the learnability bandit's setting)."""


def interval_edges(
    rows: Sequence[dict[str, Any]], *, num_intervals: int = NUM_INTERVALS, initial_fraction: float = INITIAL_FRACTION
) -> list[tuple[int, float]]:
    """``(interval, highest score)`` of each non-empty interval of the training cut of ``rows``' LogicIF rows.

    Raises:
        ValueError: no LogicIF row, or a row without a finite ``extra_info.difficulty`` (as the sampler refuses it).
    """
    logicif = [r for r in rows if r.get("data_source") == LOGICIF_SOURCE]
    if not logicif:
        raise ValueError("the training file has no LogicIF rows to cut into intervals")
    scores = [r["extra_info"].get("difficulty") for r in logicif]
    functions = [r["extra_info"].get("task_id") for r in logicif]
    intervals = split_functions_by_difficulty(LOGICIF_SOURCE, scores, functions, initial_fraction, num_intervals)
    highest: dict[int, float] = {}
    for interval, score in zip(intervals, scores, strict=True):
        highest[interval] = max(highest.get(interval, float("-inf")), float(score))
    return sorted(highest.items())


def interval_of(score: float, edges: Sequence[tuple[int, float]]) -> int:
    """The interval of a function of complexity ``score`` under the cut that ``edges`` (``interval_edges``) describe."""
    at = bisect.bisect_left([high for _, high in edges], score)
    return edges[min(at, len(edges) - 1)][0]


def with_training_intervals(
    rows: Sequence[dict[str, Any]],
    training_file: Path,
    *,
    num_intervals: int = NUM_INTERVALS,
    initial_fraction: float = INITIAL_FRACTION,
) -> list[dict[str, Any]]:
    """``rows`` with ``extra_info.training_interval`` on each LogicIF row: its interval under ``training_file``'s cut.

    Raises:
        ValueError: as ``interval_edges``, or the training file cannot be read.
    """
    edges = interval_edges(
        list(read_source_rows(training_file)), num_intervals=num_intervals, initial_fraction=initial_fraction
    )
    return [_placed(row, edges) if row["data_source"] == LOGICIF_SOURCE else row for row in rows]


def _placed(row: dict[str, Any], edges: Sequence[tuple[int, float]]) -> dict[str, Any]:
    interval = interval_of(float(row["extra_info"]["difficulty"]), edges)
    return {**row, "extra_info": {**row["extra_info"], "training_interval": interval}}
