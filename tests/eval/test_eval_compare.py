"""``python -m rlif.eval compare`` on synthetic graph evaluations: verdicts on equal and clearly different pairs,
refusals of different sampling and of barely overlapping prompt sets, and the intervals every metrics file carries."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from synthetic_evals import SAMPLING, graph_records, write_evaluation

from rlif.eval.cli import main
from rlif.eval.compare import compare, load_evaluation
from rlif.eval.metrics import compute_metrics


def test_every_metrics_file_carries_intervals_with_counts(tmp_path: Path) -> None:
    directory = write_evaluation(tmp_path / "a", graph_records(0.4, prompts=200))
    intervals = json.loads((directory / "metrics.json").read_text())["intervals"]
    headline = intervals["graph/optimal_rate"]
    assert headline["low"] < headline["value"] < headline["high"] and headline["level"] == 0.95
    assert headline["n"] == 200 and headline["prompts"] == 200 and headline["samples"] == 1600
    tsp = intervals["graph/tsp/optimal_rate"]
    assert tsp["n"] == 50 and tsp["samples"] == 400
    assert {"graph/tsp/pass@1", "graph/tsp/pass@8", "graph/tsp/acc"} <= set(intervals)
    assert "graph/tsp/pass@64" not in intervals  # only 8 samples per prompt


def test_prompts_weigh_equally_with_uneven_samples() -> None:
    records = [{"id": "a", "data_source": "graph/tsp", "acc": 1.0, "graph_optimal": 1.0, "sample": i} for i in range(7)]
    records.append({"id": "b", "data_source": "graph/tsp", "acc": 0.0, "graph_optimal": 0.0, "sample": 0})
    metrics = compute_metrics(records)["metrics"]
    assert metrics["graph/tsp/optimal_rate"] == pytest.approx(0.5)
    assert metrics["graph/tsp/acc"] == pytest.approx(0.5)


def test_same_setting_twice_is_no_detectable_difference(tmp_path: Path) -> None:
    # Fixed draws: a 95% interval excludes 0 on one equal pair in twenty (seeds 1 and 2 are such a pair).
    a = load_evaluation(write_evaluation(tmp_path / "a", graph_records(0.4, seed=3)))
    b = load_evaluation(write_evaluation(tmp_path / "b", graph_records(0.4, seed=4)))
    result = compare(a, b)
    assert result.metric == "graph/optimal_rate"
    assert result.difference.verdict == "no detectable difference at this size"
    assert result.shared == 600 and result.difference.interval.units == 600


def test_a_large_gap_is_detected_in_either_order(tmp_path: Path) -> None:
    a = load_evaluation(write_evaluation(tmp_path / "a", graph_records(0.55, seed=1)))
    b = load_evaluation(write_evaluation(tmp_path / "b", graph_records(0.4, seed=2)))
    assert compare(a, b).difference.verdict == "A better"
    assert compare(b, a).difference.verdict == "B better"
    assert compare(a, b, "graph/missing_rate").difference.verdict == "no detectable difference at this size"


def test_different_sampling_is_refused_naming_what_differs(tmp_path: Path) -> None:
    a = load_evaluation(write_evaluation(tmp_path / "a", graph_records(0.4)))
    b = load_evaluation(write_evaluation(tmp_path / "b", graph_records(0.4), {**SAMPLING, "temperature": 1.0}))
    with pytest.raises(ValueError, match=r"temperature: 0\.6 vs 1\.0"):
        compare(a, b)


def test_barely_overlapping_prompts_are_refused(tmp_path: Path) -> None:
    a = load_evaluation(write_evaluation(tmp_path / "a", graph_records(0.4, prompts=100)))
    b = load_evaluation(write_evaluation(tmp_path / "b", graph_records(0.4, prompts=100, first=50)))
    with pytest.raises(ValueError, match="share 50 of 100 prompts"):
        compare(a, b)


def test_compare_command_prints_steps_interval_and_verdict(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    a = write_evaluation(
        tmp_path / "run" / "500", graph_records(0.55, seed=1), model_description="checkpoint run step 500"
    )
    b = write_evaluation(tmp_path / "base" / "0", graph_records(0.4, seed=2), model_description="Qwen/Qwen3-1.7B")
    assert main(["compare", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "A: checkpoint run step 500" in out and "B: Qwen/Qwen3-1.7B" in out
    assert "95% interval" in out and "verdict: A better" in out
    assert main(["compare", str(a), str(b), "--metric", "graph/nothing"]) == 2
