"""The matrix's ``judge:`` setting: reward options filled, the judge server step in the script, GPUs split between
judge and training, and the refusals (docs/judge.md)."""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
from pathlib import Path

import pytest

from rlif.recipes.checks import check_run
from rlif.recipes.render import render_script
from rlif.runs.matrix import load_matrix
from rlif.runs.spec import build_run, deep_merge
from rlif.verl_glue.overrides import all_overrides, build_overrides, parse_override

MATRIX = Path(__file__).resolve().parents[2] / "recipe" / "matrix.yaml"
JUDGE = "Qwen/Qwen3-8B"


@pytest.fixture(scope="module")
def matrix():
    return load_matrix(MATRIX)


@pytest.fixture(scope="module")
def smoke(matrix):
    return next(r for r in matrix.runs if r.stage == "smoke")


def judged(matrix, run, **changes):
    return build_run(deep_merge(matrix.merged_raw(run.name), changes), where="test")


def overrides_of(run):
    return {o.key: o.value for o in build_overrides(run)}


def test_no_judge_by_default(matrix):
    for run in matrix.runs:
        assert not run.judge.enabled and run.judge.gpus == 0, run.name
        assert "judge_url" not in run.reward.kwargs, run.name


def test_a_judge_server_fills_the_reward_options_and_takes_its_gpus(matrix, smoke):
    run = judged(matrix, smoke, judge={"model": JUDGE, "gpus": 4, "port": 8123}, slurm={"gpus_per_node": 8})
    assert run.reward.kwargs["judge_url"] == "http://127.0.0.1:8123/v1"
    assert run.reward.kwargs["judge_model"] == JUDGE
    values = overrides_of(run)
    assert values["trainer.n_gpus_per_node"] == "4"
    assert values["reward.custom_reward_function.reward_kwargs.judge_model"] == JUDGE
    assert check_run(run, all_overrides(run)) == []
    script = render_script(run, build_overrides(run))
    lines = script.splitlines()
    assert f"judge_start 4 8123 {JUDGE}" in lines
    assert lines.index(f"judge_start 4 8123 {JUDGE}") < lines.index("ray_start")
    assert "--gpus 4 " in script  # the preflight checks the GPUs training sees


def test_an_external_judge_needs_no_gpus_and_no_server_step(matrix, smoke):
    run = judged(matrix, smoke, judge={"model": JUDGE, "url": "http://judge.example:9000/v1"})
    assert run.reward.kwargs["judge_url"] == "http://judge.example:9000/v1"
    assert overrides_of(run)["trainer.n_gpus_per_node"] == str(smoke.slurm.gpus_per_node)
    assert "judge_start" not in render_script(run, build_overrides(run))


def test_runs_without_a_judge_render_no_judge_step(matrix, smoke):
    assert "judge_start" not in render_script(smoke, build_overrides(smoke))


@pytest.mark.parametrize(
    ("judge", "slurm", "fragment"),
    [
        ({"model": JUDGE, "gpus": 8}, {"gpus_per_node": 8}, "leaves no training GPU"),
        ({"model": JUDGE, "gpus": 1}, {"nodes": 2, "gpus_per_node": 8}, "single-node"),
        ({"model": JUDGE, "gpus": 1, "url": "http://h:1/v1"}, {}, "url and judge.gpus together"),
        ({"gpus": 1}, {}, "judge.model is empty"),
        ({"model": JUDGE}, {}, "without judge.url or judge.gpus"),
        ({"model": JUDGE, "url": "judge:9000"}, {}, r"not an http\(s\) URL"),
        ({"model": JUDGE, "gpus": -1}, {}, "judge.gpus must be >= 0"),
        ({"model": JUDGE, "gpus": 1, "port": 0}, {}, "judge.port"),
    ],
)
def test_bad_judge_settings_are_refused_at_load(matrix, smoke, judge, slurm, fragment):
    with pytest.raises(ValueError, match=fragment):
        judged(matrix, smoke, judge=judge, slurm=slurm)


def test_the_judge_is_set_in_one_place(matrix, smoke):
    with pytest.raises(ValueError, match="keep the judge in judge: only"):
        judged(
            matrix,
            smoke,
            judge={"model": JUDGE, "url": "http://h:1/v1"},
            reward={"kwargs": {"judge_url": "http://other:1/v1", "judge_model": JUDGE}},
        )


def test_site_settings_that_leave_no_training_gpu_are_refused(matrix, smoke):
    run = judged(matrix, smoke, judge={"model": JUDGE, "gpus": 2}, slurm={"gpus_per_node": 8})
    shrunk = dataclasses.replace(run, slurm=dataclasses.replace(run.slurm, gpus_per_node=2))
    problems = check_run(shrunk, build_overrides(shrunk))
    assert any(p.key == "judge.gpus" for p in problems)
    assert any(p.key == "judge" and "leaves no training GPU" in p.message for p in problems)


def test_a_judge_on_the_legacy_trainer_or_colocated_with_a_reading_policy_is_refused(matrix, smoke):
    legacy = judged(matrix, smoke, judge={"model": JUDGE, "gpus": 1}, train={"trainer": "legacy"})
    assert any(p.key == "train.trainer" for p in check_run(legacy, build_overrides(legacy)))
    reading = judged(matrix, smoke, sampler={"name": "reward_curriculum", "params": {}})
    overrides = [*build_overrides(reading), parse_override("reward.reward_model.enable=true")]
    assert any(p.key == "sampler" and "colocated" in p.message for p in check_run(reading, overrides))


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_judged_script_is_valid_bash(tmp_path, matrix, smoke):
    run = judged(matrix, smoke, judge={"model": JUDGE, "gpus": 1})
    path = tmp_path / "judged.sh"
    path.write_text(render_script(run, build_overrides(run)))
    assert subprocess.run(["bash", "-n", str(path)], check=False).returncode == 0
