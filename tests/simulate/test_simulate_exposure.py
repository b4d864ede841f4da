"""What each simulated arm was shown: shares, unique rows and draws per row from pools as large as the run's data,
the learner's forgetting and interference switches, and the per-stage table for the shipped matrix."""

from __future__ import annotations

import statistics
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest

from rlif.runs.matrix import load_matrix
from rlif.simulate import LearnerConfig, Strategy, main, parse_rows, rows_from_name, run_config, run_rows, simulate
from rlif.simulate.cli import run_seeds
from rlif.simulate.exposure import exposure

MATRIX = Path(__file__).resolve().parents[2] / "recipe" / "matrix.yaml"
STAGE2 = [run for run in load_matrix(MATRIX).runs if run.stage == "stage2"]
REDUCED = {"prompts": 64, "responses": 4, "steps": 60}
"""A stage-2 arm at a batch shape a test can afford; the pools keep the run's own row counts."""


@pytest.fixture(scope="module")
def stage2_exposure() -> dict[str, list]:
    """Each stage-2 arm at the reduced shape, seeds 0 and 1."""
    figures = {}
    for run in STAGE2:
        strategy, config = run_config(run, "improving", root=MATRIX.parents[1])
        config = replace(config, **REDUCED)
        figures[run.name] = [exposure(simulate(strategy, config, seed)) for seed in (0, 1)]
    return figures


def _mean_share(figures: list, group: str) -> float:
    return statistics.fmean(e.share[group] for e in figures)


def test_rows_come_from_the_file_name_as_the_planner_reads_it() -> None:
    assert rows_from_name("verl_data/if40000_logicif40000.parquet") == {"iftrain": 40000, "logicif": 40000}
    assert rows_from_name("verl_data/if80000_logicif0.parquet") == {"iftrain": 80000, "logicif": 0}
    graph = rows_from_name("verl_data/graph/6np_45000/train_mixed.parquet")
    assert graph is not None and len(graph) == 6 and sum(graph.values()) == 45000
    assert rows_from_name("verl_data/somewhere.parquet") is None
    assert run_rows(("verl_data/somewhere.parquet",), Path("/nonexistent")) is None
    for run in STAGE2:
        _strategy, config = run_config(run, "improving", root=Path("/nonexistent"))
        assert dict(config.source_rows) == rows_from_name(run.train_files[0]), run.name
    # a run that leaves a source out of its data simulates no such source
    stage1 = next(run for run in load_matrix(MATRIX).runs if run.train_files == ("verl_data/if80000_logicif0.parquet",))
    strategy, config = run_config(stage1, "improving", steps=2, root=Path("/nonexistent"))
    assert set(simulate(strategy, replace(config, prompts=8), 0).row_draws) == {"iftrain"}


def test_rows_come_from_the_data_when_the_file_exists(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [("iftrain", 0.0)] * 7 + [("logicif", float(d)) for d in range(30)]
    table = pa.table(
        {
            "data_source": [source for source, _ in rows],
            "extra_info": [{"difficulty": difficulty, "split": "train"} for _, difficulty in rows],
        }
    )
    (tmp_path / "verl_data").mkdir()
    pq.write_table(table, tmp_path / "verl_data" / "if40000_logicif40000.parquet")
    found = run_rows(("verl_data/if40000_logicif40000.parquet",), tmp_path)
    assert found is not None and found.origin == "files"
    assert dict(found.counts) == {"iftrain": 7, "logicif": 30}
    assert list(found.difficulties["logicif"]) == [float(d) for d in range(30)]
    _strategy, config = run_config(STAGE2[0], "improving", root=tmp_path, source_rows={"logicif": 30})
    assert dict(config.source_rows) == {"iftrain": 7, "logicif": 30}


def test_rows_option_is_checked() -> None:
    assert parse_rows(["logicif=500", " iftrain = 9"]) == {"logicif": 500, "iftrain": 9}
    for bad in ("logicif", "=5", "logicif=-1", "logicif=many"):
        with pytest.raises(ValueError, match="SOURCE=N"):
            parse_rows([bad])


def test_every_stage2_arm_is_exposed_within_bounds(stage2_exposure: dict[str, list]) -> None:
    assert STAGE2, "the matrix has no stage2 run"
    for run in STAGE2:
        for e in stage2_exposure[run.name]:
            assert abs(sum(e.share.values()) - 1.0) < 1e-9, run.name
            drawn = REDUCED["prompts"] * REDUCED["steps"]
            for group, share in e.share.items():
                # a row is new or a repeat: unique rows never exceed the group's prompts or rows
                assert e.unique[group] <= min(e.rows[group], round(share * drawn)), (run.name, group)
                assert e.unique[group] >= 0.9 * share * drawn  # pools of 40,000 rows repeat little in 3,840 prompts
            assert set(e.share) == {"IF", "LogicIF"}
            if run.sampler.name == "reward_curriculum":
                # the newest interval at the end bounds where LogicIF rows came from
                newest = max(len(steps) for steps in e.unlocks.values())
                assert all(count == 0 for count in e.draws_max["LogicIF"][newest + 1 :]), run.name
            else:
                assert min(e.draws_max["LogicIF"]) >= 1, run.name  # every bucket is drawn from


def test_fixed_1v1_draws_half_logicif_and_ema_more(stage2_exposure: dict[str, list]) -> None:
    by_sampler = {run.sampler.name: run.name for run in STAGE2 if not run.sampler.params.get("weights")}
    fixed = _mean_share(stage2_exposure[by_sampler["fixed_ratio"]], "LogicIF")
    assert abs(fixed - 0.5) < 0.04
    assert _mean_share(stage2_exposure[by_sampler["ema_reweight"]], "LogicIF") > fixed + 0.08


def test_small_pools_make_repetition_visible() -> None:
    strategy = Strategy("fixed 1:1", "fixed_ratio")
    config = LearnerConfig(prompts=32, responses=4, steps=40, source_rows={"iftrain": 200, "logicif": 110})
    e = exposure(simulate(strategy, config, seed=0))
    assert e.rows == {"iftrain": 200, "logicif": 110}
    assert e.unique["logicif"] == 110  # 640 LogicIF draws over 110 rows see every row
    assert statistics.fmean(e.draws_mean["logicif"]) > 4 and max(e.draws_max["logicif"]) > 6


SMALL = LearnerConfig(rows=300, prompts=8, responses=4, steps=150)


def test_forgetting_lowers_what_is_rarely_practised() -> None:
    strategy = Strategy("fixed 1:1", "fixed_ratio")
    for seed in (0, 1):
        plain = simulate(strategy, SMALL, seed)
        forgetful = simulate(strategy, replace(SMALL, forgetting=0.05), seed)
        # same draws (forgetting changes skills, then rewards): compare what the learner keeps
        assert forgetful.heldout_by_source["logicif"][-1] < plain.heldout_by_source["logicif"][-1] - 0.02
        assert statistics.fmean(forgetful.final_success["logicif"][-3:]) <= statistics.fmean(
            plain.final_success["logicif"][-3:]
        )


def test_interference_moves_the_other_source_by_its_sign() -> None:
    strategy = Strategy("fixed 1:1", "fixed_ratio")
    for seed in (0, 1):
        final = {
            factor: simulate(strategy, replace(SMALL, interference=factor), seed).heldout_by_source["iftrain"][-1]
            for factor in (-0.5, 0.0, 0.5)
        }
        assert final[-0.5] < final[0.0] < final[0.5], final


def test_seeds_come_from_the_option_then_the_run_then_the_default() -> None:
    declared = SimpleNamespace(seeds=[1, 2, 3])
    assert run_seeds(declared, None) == [1, 2, 3]
    assert run_seeds(declared, 2) == [0, 1]
    assert run_seeds(SimpleNamespace(), None) == [0, 1, 2]


def test_stage_table_renders_for_the_shipped_matrix(tmp_path: Path, capsys) -> None:
    assert main(["--stage", "stage2", "--steps", "2", "--seeds", "1", "--out", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    table = [line for line in printed.splitlines() if line.startswith("|")]
    arms = {run.arm: run for run in STAGE2}  # the seeds of one arm share its row
    assert len(table) == 2 + len(arms)
    header = table[0]
    for column in ("held-out IF", "held-out LogicIF", "LogicIF share", "unique LogicIF rows", "hardest LogicIF"):
        assert column in header
    for arm, run in arms.items():
        line = next(line for line in table if f"`{arm}`" in line)
        assert f"{run.train.train_batch_size} x {run.train.rollout_n}, 2 |" in line
        assert "of 40,000" in line
    assert (tmp_path / "stage_stage2.png").is_file()


def test_run_reports_exposure_for_an_arm_without_curriculum(tmp_path: Path, capsys) -> None:
    name = next(run.name for run in STAGE2 if run.sampler.name == "fixed_ratio")
    argv = ["--run", name, "--learner", "improving", "--steps", "2", "--seeds", "1", "--out", str(tmp_path)]
    assert main([*argv, "--rows", "logicif=3000", "--response-tokens", "logicif=4000"]) == 0
    printed = capsys.readouterr().out
    for line in ("held-out success: overall", "share of prompts: IF", "unique rows seen: IF", "of 3,000"):
        assert line in printed
    assert "draws per LogicIF row by bucket (mean/max, max over seeds): 0: " in printed
    assert f"{name} [improving] tokens generated: LogicIF " in printed
    assert f"{name} [improving] unlocks: -" in printed
