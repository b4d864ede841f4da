"""Ablation chain resolution on synthetic evaluations: a clear margin wins, a within-noise margin is a tie broken by
the stated rule, seeds are averaged, lower-is-better metrics, a composite criterion, and refusals of base-model,
mixed and missing steps."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from synthetic_evals import graph_records, write_evaluation

from rlif.eval.chain import CandidateResult, Link, MissingResultsError, final_results, resolve

VOLUMES = ("graph_v45k", "graph_v60k", "graph_v90k")
SETTINGS = {run: {"train_files": f"verl_data/graph/{run}.parquet"} for run in VOLUMES}


def results(rates: dict[str, float], step: int = 500, prompts: int = 600) -> dict[str, CandidateResult]:
    return {
        run: CandidateResult(run, step, graph_records(rate, prompts=prompts, seed=index + 10))
        for index, (run, rate) in enumerate(rates.items())
    }


def link(**kwargs) -> Link:
    return Link("graph_sampling", "graph_volume", VOLUMES, "graph/optimal_rate", ("train_files",), **kwargs)


def test_a_clear_margin_wins_and_passes_on_its_settings() -> None:
    resolution = resolve(link(), results({"graph_v45k": 0.30, "graph_v60k": 0.45, "graph_v90k": 0.32}), SETTINGS)
    assert resolution.winner == "graph_v60k" and resolution.tied == ("graph_v60k",)
    assert resolution.inherited == {"train_files": "verl_data/graph/graph_v60k.parquet"}
    line = resolution.explain()
    assert line.startswith("stage graph_sampling: graph_v60k wins stage graph_volume by graph/optimal_rate at step 500")
    assert "outside the 95% paired interval" in line
    assert resolution.rows[0].arm == "graph_v60k"
    assert "behind" in "\n".join(resolution.table())


def test_a_within_noise_margin_is_a_tie_broken_by_the_stated_rule() -> None:
    rule = "smaller volume, then mixed, then binary"
    resolution = resolve(
        link(tie_rule=rule), results({"graph_v45k": 0.40, "graph_v60k": 0.40, "graph_v90k": 0.40}), SETTINGS
    )
    assert len(resolution.tied) >= 2
    assert resolution.winner == resolution.tied[0] == next(run for run in VOLUMES if run in resolution.tied)
    assert "a tie within the 95% paired interval" in resolution.explain()
    assert f"resolved by the rule '{rule}': {resolution.winner}" in resolution.explain()


def test_seeds_of_one_run_are_averaged_into_one_arm() -> None:
    runs = ("graph_a_s1", "graph_a_s2", "graph_b_s1", "graph_b_s2")
    rates = {"graph_a_s1": 0.30, "graph_a_s2": 0.34, "graph_b_s1": 0.50, "graph_b_s2": 0.46}
    resolution = resolve(Link("next", "prev", runs, "graph/optimal_rate"), results(rates))
    assert [row.arm for row in resolution.rows] == ["graph_b", "graph_a"]
    assert resolution.rows[0].runs == ("graph_b_s1", "graph_b_s2") and resolution.winner == "graph_b_s1"


def test_failure_rates_are_won_by_the_lowest_value() -> None:
    found = results({"graph_v45k": 0.3, "graph_v60k": 0.6, "graph_v90k": 0.3})
    for result in found.values():  # missing answers where not optimal
        for record in result.records:
            record["graph_missing"] = 1.0 - record["graph_optimal"]
    resolution = resolve(Link("next", "volume", VOLUMES, "graph/missing_rate"), found)
    assert resolution.rows[0].arm == "graph_v60k" and resolution.winner == "graph_v60k"


def test_a_composite_criterion_weighs_its_metrics() -> None:
    found = results({"graph_v45k": 0.3, "graph_v60k": 0.6, "graph_v90k": 0.3})
    for result in found.values():
        for record in result.records:
            record["graph_quality"] = 1.0 if result.run == "graph_v90k" else 0.0
    weights = (("graph/optimal_rate", 0.2), ("graph/mean_quality_ratio", 0.8))
    resolution = resolve(link(weights=weights), found, SETTINGS)
    assert resolution.winner == "graph_v90k"
    assert resolution.rows[0].value == pytest.approx(0.2 * resolution_value(found["graph_v90k"]) + 0.8)


def resolution_value(result: CandidateResult) -> float:
    return sum(r["graph_optimal"] for r in result.records) / len(result.records)


def test_missing_and_mixed_steps_are_refused_with_the_list(tmp_path: Path) -> None:
    write_evaluation(tmp_path / "graph_v45k" / "500", graph_records(0.35, prompts=40))
    write_evaluation(tmp_path / "graph_v60k" / "0", graph_records(0.36, prompts=40))
    write_evaluation(tmp_path / "graph_v90k" / "0", graph_records(0.36, prompts=40))
    write_evaluation(tmp_path / "graph_v90k" / "250", graph_records(0.36, prompts=40))
    found = final_results(tmp_path, dict.fromkeys(VOLUMES, 500))
    with pytest.raises(MissingResultsError) as caught:
        resolve(link(), found, SETTINGS)
    message = str(caught.value)
    assert "graph_v60k (no evaluation at its final step 500; evaluated at [0])" in message
    assert "graph_v90k (no evaluation at its final step 500; evaluated at [0, 250])" in message
    mixed = {**results({"graph_v45k": 0.3, "graph_v60k": 0.3}), **results({"graph_v90k": 0.3}, step=400)}
    with pytest.raises(MissingResultsError, match=r"final steps differ: graph_v45k at 500, .* graph_v90k at 400"):
        resolve(link(), mixed, SETTINGS)


def test_a_base_model_step_never_competes(tmp_path: Path) -> None:
    # v90000 has only a base-model evaluation (step 0): it must not win by being the newest step.
    write_evaluation(tmp_path / "graph_v45k" / "500", graph_records(0.35, prompts=40))
    write_evaluation(tmp_path / "graph_v60k" / "500", graph_records(0.349, prompts=40))
    write_evaluation(tmp_path / "graph_v90k" / "0", graph_records(0.36, prompts=40))
    with pytest.raises(
        MissingResultsError, match=r"graph_v90k \(no evaluation at its final step 500; evaluated at \[0\]\)"
    ):
        resolve(link(), final_results(tmp_path, dict.fromkeys(VOLUMES, 500)), SETTINGS)


def test_no_candidates_is_an_error() -> None:
    with pytest.raises(ValueError, match="has no runs to choose from"):
        resolve(Link("next", "volume", (), "graph/optimal_rate"), {})


def _tiered(step_dir: Path, fast: list[dict], full: list[dict]) -> None:
    write_evaluation(step_dir / "val", fast)
    write_evaluation(step_dir / "bench", full)
    manifest = {
        "run": step_dir.parent.name,
        "benchmarks": {
            "val": {"dir": "val", "tier": "fast", "n": 8, "max_tokens": 8192, "headline": ["graph/tsp/acc"]},
            "bench": {"dir": "bench", "tier": "full", "n": 8, "max_tokens": 8192, "headline": ["graph/mis/acc"]},
        },
    }
    (step_dir / "benchmarks.json").write_text(json.dumps(manifest))


def test_benchmark_tiers_select_on_the_fast_tier_only(tmp_path: Path) -> None:
    runs = ("graph_v45k", "graph_v60k")
    for index, run in enumerate(runs):
        records = graph_records(0.3 + 0.2 * index, prompts=160, seed=index)
        fast = [r for r in records if r["data_source"] != "graph/mis"]
        full = [r for r in records if r["data_source"] == "graph/mis"]
        _tiered(tmp_path / run / "500", fast, full)
    found = final_results(tmp_path, dict.fromkeys(runs, 500))
    assert all(isinstance(r, CandidateResult) and r.reported for r in found.values())
    tiered = Link("s", "graph_volume", runs, "graph/optimal_rate")
    assert resolve(tiered, found).winner == "graph_v60k"
    with pytest.raises(MissingResultsError, match=r"graph/mis/optimal_rate is a full-tier metric: reported, never"):
        resolve(Link("s", "graph_volume", runs, "graph/mis/optimal_rate"), found)


def test_a_test_file_metric_is_never_selected_on() -> None:
    records = [{**r, "split": "test"} for r in graph_records(0.3, prompts=40)]
    found = {run: CandidateResult(run, 500, records) for run in VOLUMES}
    with pytest.raises(MissingResultsError, match=r"graph/optimal_rate is measured on test files"):
        resolve(link(), found, SETTINGS)


def test_a_composite_of_metrics_on_the_same_prompts_resamples_them_together() -> None:
    """Two criterion metrics measured on the same prompts move together; resampling them apart would drop their
    covariance and narrow the interval. Half of one metric plus half of itself must have that metric's interval."""
    found = results({"graph_v45k": 0.40, "graph_v60k": 0.45, "graph_v90k": 0.38}, prompts=300)
    single = resolve(link(), found, SETTINGS)
    halves = resolve(link(weights=(("graph/optimal_rate", 0.5), ("graph/optimal_rate", 0.5))), found, SETTINGS)
    for one, two in zip(single.rows, halves.rows, strict=True):
        assert one.arm == two.arm
        if one.lead is not None:
            assert two.lead == pytest.approx(one.lead)
