"""The CPU demo end to end: verl 0.9.1's real V1 trainer with every rlif hook, a checkpoint, and a resume.

Asserts on real signals only: our reward function ran (verl logs ``critic/score/mean`` from it and our feedback hook
logs per-source rewards), gradients flowed, the reference model ran (the KL loss term against its log-probs is
logged and finite), the checkpoint exists, and the resumed run trained exactly step 3.
"""

from __future__ import annotations

import math

import pytest

pytest.importorskip("verl")

from rlif import cpu_support
from rlif.cpu_demo import DemoLayout, read_metrics, run_demo

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> DemoLayout:
    if not cpu_support.is_installed():
        pytest.fail("the CPU start-up hook is missing: run scripts/setup_env.sh (python -m rlif.cpu_support install)")
    workdir = tmp_path_factory.mktemp("cpu_demo")
    assert run_demo(workdir) == 0
    return DemoLayout(workdir)


def test_two_steps_then_checkpoint(demo: DemoLayout) -> None:
    steps = read_metrics(demo.metrics_file(1))
    assert sorted(steps) == [1, 2]
    for metrics in steps.values():
        assert "critic/score/mean" in metrics  # our compute_score produced the scores verl trained on
        assert any(key.startswith("sampler/draws/") for key in metrics)
        assert any(key.startswith("train/") and key.endswith("/reward_mean") for key in metrics)
    assert max(steps[s]["actor/grad_norm"] for s in steps) > 0.0
    assert_reference_model_ran(steps)
    step_dir = demo.checkpoints / "global_step_2"
    assert (step_dir / "actor" / "model_world_size_1_rank_0.pt").is_file()
    assert (step_dir / "data.pt").is_file()


def test_resume_trains_exactly_step_three(demo: DemoLayout) -> None:
    resumed = read_metrics(demo.metrics_file(2))
    assert sorted(resumed) == [3]
    assert "critic/score/mean" in resumed[3]
    assert_reference_model_ran(resumed)  # the resumed trainer rebuilt the reference worker too
    # the reference is the base model while the actor resumed from 2 updates, so their log-probs now differ
    assert resumed[3]["actor/kl_loss"] > 0.0
    log = demo.log_file(2).read_text(encoding="utf-8", errors="replace")
    assert f"Resuming from {demo.checkpoints.resolve() / 'global_step_2'}" in log
    # the sampler continued from the saved state: cumulative draws grew past step 2's
    before = read_metrics(demo.metrics_file(1))[2]
    assert total_draws(resumed[3]) == total_draws(before) + 4


def total_draws(metrics: dict[str, float]) -> float:
    return sum(v for k, v in metrics.items() if k.startswith("sampler/draws/"))


def assert_reference_model_ran(steps: dict[int, dict[str, float]]) -> None:
    """The fsdp2 reference worker computed ``ref_log_prob``: verl timed it and the KL loss against it is finite."""
    for metrics in steps.values():
        assert "timing_s/ref" in metrics
        assert math.isfinite(metrics["actor/kl_loss"]) and metrics["actor/kl_loss"] >= 0.0  # low_var_kl is >= 0
        assert metrics["actor/kl_coef"] == pytest.approx(0.001)
