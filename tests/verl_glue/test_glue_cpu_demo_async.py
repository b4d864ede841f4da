"""The CPU demo in verl 0.9.1's ``colocate_async`` trainer mode: rlif's feedback hook on verl's async replay buffer.

Two steps only (the resume path is the same code as in sync mode, which the sync demo test covers). Asserts that
the async feedback buffer ran (per-source rewards and sampler metrics in both steps' logs), that prompts for the
next batch were already drawn when a step's feedback arrived (the documented one-batch lag), and that the run
checkpointed.
"""

from __future__ import annotations

import pytest

pytest.importorskip("verl")

from rlif.cpu_demo import DemoLayout, read_metrics, run_demo
from rlif.verl_glue import cpu_support

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]

BATCH = 4
"""The demo's ``data.train_batch_size``."""


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> DemoLayout:
    if not cpu_support.is_installed():
        pytest.fail("the CPU start-up hook is missing: run `python -m rlif.verl_glue.cpu_support install`")
    workdir = tmp_path_factory.mktemp("cpu_demo_async")
    assert run_demo(workdir, trainer="v1_colocate_async") == 0
    return DemoLayout(workdir)


def total_draws(metrics: dict[str, float]) -> float:
    return sum(v for k, v in metrics.items() if k.startswith("sampler/draws/"))


def test_feedback_reaches_the_policy_in_async_mode(demo: DemoLayout) -> None:
    steps = read_metrics(demo.metrics_file(1))
    assert sorted(steps) == [1, 2]
    for metrics in steps.values():
        assert "critic/score/mean" in metrics
        assert any(key.startswith("train/") and key.endswith("/reward_mean") for key in metrics)
        assert any(key.startswith("sampler/weight/") for key in metrics)
    # the warm-up batch: when step 1's rewards arrive, the prompts of the next batch are already drawn
    assert total_draws(steps[1]) >= 2 * BATCH
    assert total_draws(steps[2]) > total_draws(steps[1])
    log = demo.log_file(1).read_text(encoding="utf-8", errors="replace")
    assert "'AsyncRewardFeedbackReplayBuffer'" in log and "'trainer_mode': 'colocate_async'" in log
    assert (demo.checkpoints / "global_step_2" / "actor" / "model_world_size_1_rank_0.pt").is_file()
