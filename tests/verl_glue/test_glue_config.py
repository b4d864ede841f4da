"""Composing against verl 0.9.1's real config: shipped runs pass, and each mistake verl lets through is caught.

One subprocess composes every case, so verl's slow import is paid once; slow because it needs the verl environment.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rlif.cpu_demo import DemoJudge, DemoLayout, demo_overrides
from rlif.recipes.generate import CPU_MODEL_PLACEHOLDER, REPO_ROOT, default_verl_python
from rlif.runs.matrix import load_matrix
from rlif.verl_glue.config import run_verl_check
from rlif.verl_glue.overrides import all_overrides, runtime_values, substitute

pytestmark = pytest.mark.slow

BROKEN = {
    "misspelled_key": ("actor_rollout_ref.actor.ppo_micro_batch_size_per_gpus=2", "ppo_micro_batch_size_per_gpus"),
    "wrong_type": ("actor_rollout_ref.rollout.n=eight", "actor_rollout_ref.rollout.n"),
    "wrong_bool": ("data.filter_overlong_prompts=3", "data.filter_overlong_prompts"),
    "rollout_engine": ("actor_rollout_ref.rollout.name=vlm", "actor_rollout_ref.rollout.name"),
    "strategy": ("actor_rollout_ref.actor.strategy=fsdp3", "actor_rollout_ref.actor.strategy"),
    "reward_manager": ("reward.reward_manager.name=naiive", "reward.reward_manager.name"),
    "estimator": ("algorithm.adv_estimator=grpoo", "algorithm.adv_estimator"),
    "trainer_mode": ("trainer.v1.trainer_mode=syncc", "trainer.v1.trainer_mode"),
    "kl_type": ("actor_rollout_ref.actor.kl_loss_type=k9", "actor_rollout_ref.actor.kl_loss_type"),
    "validate_config": ("actor_rollout_ref.actor.loss_agg_mode=tokenmean", "validate_config"),
}


@pytest.fixture(scope="module")
def results():
    python = default_verl_python()
    if python is None:
        pytest.skip("no Python with verl 0.9.1 (the repository .venv)")
    matrix = load_matrix(REPO_ROOT / "recipe" / "matrix.yaml")
    runs = {}
    for run in matrix.runs:
        values = runtime_values(run, "/repo", CPU_MODEL_PLACEHOLDER if run.cpu_mode else None)
        runs[run.name] = [substitute(o, values) for o in all_overrides(run)]
    for steps, mode in ((2, "v1_sync"), (3, "v1_sync"), (2, "v1_colocate_async"), (3, "legacy")):
        layout = DemoLayout(Path("/demo"))
        overrides = demo_overrides(Path("/m"), Path("/t.parquet"), Path("/v.parquet"), layout, steps, trainer=mode)
        runs[f"cpu_demo_{mode}_{steps}"] = overrides
    judge = DemoJudge(url="http://127.0.0.1:8123/v1")
    for steps in (2, 3):
        layout = DemoLayout(Path("/demo"))
        overrides = demo_overrides(Path("/m"), Path("/t.parquet"), Path("/v.parquet"), layout, steps, judge=judge)
        runs[f"cpu_demo_judge_{steps}"] = overrides
        overrides = demo_overrides(
            Path("/m"), Path("/t.parquet"), Path("/v.parquet"), layout, steps, judge=judge,
            reasoning_gym=("family_relationships", "base_conversion"),
        )  # fmt: skip
        runs[f"cpu_demo_judge_reasoning_gym_{steps}"] = overrides
    good = runs[matrix.runs[0].name]
    for name, (override, _) in BROKEN.items():
        runs[f"broken_{name}"] = [*good, override]
    problems = run_verl_check(runs, python)
    return matrix, problems


def test_shipped_runs_compose_and_validate(results):
    matrix, problems = results
    shipped = {run.name for run in matrix.runs}
    assert [p for p in problems if p.run in shipped] == []


def test_the_cpu_demo_phases_compose_and_validate(results):
    """The demo's config (the matrix's CPU run plus its deltas, with and without the judged source and reasoning-gym
    sources) passes the same checks as every generated run."""
    _, problems = results
    assert [p for p in problems if p.run.startswith("cpu_demo_")] == []


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_mistake_is_caught_with_its_key(results, case):
    _, problems = results
    keys = [p.key for p in problems if p.run == f"broken_{case}"]
    assert any(BROKEN[case][1] in key for key in keys), keys


def test_unrunnable_checker_raises(tmp_path: Path):
    with pytest.raises(RuntimeError, match="failed to run"):
        run_verl_check({"x": []}, "/bin/false")


def test_the_launcher_runs_main_ppo_on_the_trainer_config_the_checks_compose():
    import importlib.resources

    from rlif.verl_glue.config import TRAINER_CONFIG_MODULE, TRAINER_CONFIG_NAME

    launcher = (REPO_ROOT / "scripts" / "slurm_launch.sh").read_text(encoding="utf-8")
    assert f"--config-path=pkg://{TRAINER_CONFIG_MODULE} " in launcher
    assert f"--config-name={TRAINER_CONFIG_NAME} " in launcher
    assert importlib.resources.files(TRAINER_CONFIG_MODULE).joinpath(f"{TRAINER_CONFIG_NAME}.yaml").is_file()
