"""Ablation chain resolution on synthetic results: winner, margin, direction, ties, refusals, inherited settings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlif.eval.chain import Link, MissingResultsError, latest_results, resolve

VOLUMES = ("graph_v45k", "graph_v60k", "graph_v90k")
RESULTS = {
    "graph_v45k": {"graph/optimal_rate": 0.31, "graph/hallucination_rate": 0.20},
    "graph_v60k": {"graph/optimal_rate": 0.35, "graph/hallucination_rate": 0.12},
    "graph_v90k": {"graph/optimal_rate": 0.342, "graph/hallucination_rate": 0.15},
}
SETTINGS = {run: {"train_files": f"verl_data/graph/{run}.parquet", "lr": 1e-6} for run in VOLUMES}


def test_the_best_run_wins_and_passes_on_its_settings() -> None:
    link = Link("reward_variants", "volume", VOLUMES, "graph/optimal_rate", ("train_files",))
    resolution = resolve(link, RESULTS, SETTINGS)
    assert resolution.winner == "graph_v60k"
    assert [run for run, _ in resolution.ranking] == ["graph_v60k", "graph_v90k", "graph_v45k"]
    assert resolution.margin == pytest.approx(0.008)
    assert resolution.inherited == {"train_files": "verl_data/graph/graph_v60k.parquet"}
    assert resolution.explain() == (
        "stage reward_variants: graph_v60k wins stage volume with the highest graph/optimal_rate = 0.3500, "
        "ahead of graph_v90k (0.3420) by 0.0080"
    )


def test_failure_rates_are_won_by_the_lowest_value() -> None:
    resolution = resolve(Link("next", "volume", VOLUMES, "graph/hallucination_rate"), RESULTS)
    assert resolution.winner == "graph_v60k" and resolution.margin == pytest.approx(0.03)
    assert "with the lowest graph/hallucination_rate" in resolution.explain()


def test_a_tie_goes_to_the_first_listed_candidate_and_says_so() -> None:
    results = {"a": {"m/acc": 0.5}, "b": {"m/acc": 0.5}}
    resolution = resolve(Link("s2", "s1", ("b", "a"), "m/acc"), results)
    assert resolution.winner == "b" and resolution.margin == 0
    assert resolution.explain().endswith("tied with a (the first listed candidate wins a tie)")
    single = resolve(Link("s2", "s1", ("a",), "m/acc"), results)
    assert single.margin is None and single.explain().endswith("(the only candidate)")


def test_missing_results_are_all_listed() -> None:
    results = {"graph_v45k": RESULTS["graph_v45k"], "graph_v90k": {"graph/feasible_rate": 0.9}}
    with pytest.raises(MissingResultsError) as error:
        resolve(Link("reward_variants", "volume", VOLUMES, "graph/optimal_rate"), results)
    assert str(error.value) == (
        "stage reward_variants cannot choose from stage volume by graph/optimal_rate: missing results for "
        "graph_v60k (not evaluated), graph_v90k (no graph/optimal_rate)"
    )
    with pytest.raises(ValueError, match="has no runs to choose from"):
        resolve(Link("s2", "s1", (), "m/acc"), results)
    with pytest.raises(ValueError, match="the winning run graph_v60k has no setting 'model'"):
        resolve(Link("s2", "volume", VOLUMES, "graph/optimal_rate", ("model",)), RESULTS, SETTINGS)


def test_latest_results_read_the_newest_step_of_each_run(tmp_path: Path) -> None:
    def write(run: str, step: str, value: float) -> None:
        directory = tmp_path / run / step
        directory.mkdir(parents=True)
        (directory / "metrics.json").write_text(json.dumps({"metrics": {"graph/optimal_rate": value, "x": None}}))

    write("graph_v45k", "100", 0.2)
    write("graph_v45k", "350", 0.31)
    write("graph_v60k", "90", 0.4)
    results = latest_results(tmp_path, VOLUMES)
    assert results == {"graph_v45k": {"graph/optimal_rate": 0.31}, "graph_v60k": {"graph/optimal_rate": 0.4}}
    with pytest.raises(MissingResultsError, match=r"graph_v90k \(not evaluated\)"):
        resolve(Link("s", "volume", VOLUMES, "graph/optimal_rate"), results)
    (tmp_path / "graph_v90k" / "7").mkdir(parents=True)
    (tmp_path / "graph_v90k" / "7" / "metrics.json").write_text("{broken")
    with pytest.raises(ValueError, match=r"graph_v90k/7/metrics.json: not valid JSON"):
        latest_results(tmp_path, VOLUMES)
