"""LogicIFEval rows placed in a training file's curriculum cut (``rlif.data.logicif_intervals``)."""

from __future__ import annotations

import json
from pathlib import Path

from rlif.data.logicif_intervals import interval_edges, interval_of, with_training_intervals


def _row(source: str, task: str, score: float) -> dict:
    return {"data_source": source, "extra_info": {"task_id": task, "difficulty": score}}


def test_eval_rows_take_the_interval_of_the_training_functions_as_hard() -> None:
    # 10 functions of 2 cases each, scores 1..10; no initial share, 5 intervals: two functions per interval.
    training = [_row("logicif", f"T{s}", float(s)) for s in range(1, 11) for _ in range(2)] + [_row("ifeval", "x", 0)]
    edges = interval_edges(training, num_intervals=5, initial_fraction=0.0)
    assert edges == [(1, 2.0), (2, 4.0), (3, 6.0), (4, 8.0), (5, 10.0)]
    assert [interval_of(s, edges) for s in (0.5, 2.0, 2.5, 9.0, 50.0)] == [1, 1, 2, 5, 5]


def test_the_eval_file_builder_option_writes_training_interval(tmp_path: Path) -> None:
    training = [_row("logicif", f"T{s}", float(s)) for s in range(1, 21)]
    path = tmp_path / "train.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in training), encoding="utf-8")
    rows = [_row("logicif", "E1", 1.0), _row("logicif", "E2", 20.0), _row("ifeval", "i", 0.0)]
    placed = with_training_intervals(rows, path)  # the stage-2 cut: initial 0.3, 10 intervals
    assert [r["extra_info"].get("training_interval") for r in placed] == [0, 10, None]
