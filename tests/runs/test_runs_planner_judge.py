"""The planner counts a judge server's GPUs: in the GPU-hours, not in training's world size."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from rlif.recipes.generate import REPO_ROOT
from rlif.runs.matrix import load_matrix
from rlif.runs.planner import plan_run
from rlif.runs.spec import build_run, deep_merge

MATRIX = Path(__file__).resolve().parents[2] / "recipe" / "matrix.yaml"


@pytest.fixture(scope="module")
def smoke():
    matrix = load_matrix(MATRIX)
    run = next(r for r in matrix.runs if r.stage == "smoke")
    return matrix, run


def test_judge_gpus_are_in_the_gpu_hours_and_out_of_the_world(smoke):
    matrix, run = smoke
    raw = deep_merge(matrix.merged_raw(run.name), {"slurm": {"nodes": 1, "gpus_per_node": 8}})
    alone = build_run(raw, where="test")
    judged = build_run(deep_merge(raw, {"judge": {"model": "Qwen/Qwen3-8B", "gpus": 4}}), where="test")
    plan, judged_plan = plan_run(alone, REPO_ROOT), plan_run(judged, REPO_ROOT)
    assert (plan.world, plan.gpus, plan.judge_gpus) == (8, 8, 0)
    assert (judged_plan.world, judged_plan.gpus, judged_plan.judge_gpus) == (4, 8, 4)
    if judged_plan.steps is not None:
        assert judged_plan.gpu_hours() == pytest.approx(judged_plan.step_seconds * judged_plan.steps * 8 / 3600)
        # half the training GPUs: each step is no faster, and the run still pays for all eight
        assert judged_plan.gpu_hours() >= plan.gpu_hours()


def test_a_judge_that_leaves_no_training_gpu_is_refused(smoke):
    matrix, run = smoke
    raw = deep_merge(matrix.merged_raw(run.name), {"slurm": {"nodes": 1, "gpus_per_node": 8}})
    judged = build_run(deep_merge(raw, {"judge": {"model": "Qwen/Qwen3-8B", "gpus": 4}}), where="test")
    shrunk = dataclasses.replace(judged, slurm=dataclasses.replace(judged.slurm, gpus_per_node=4))
    with pytest.raises(ValueError, match="leave no GPU to train on"):
        plan_run(shrunk, REPO_ROOT)
