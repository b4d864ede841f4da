"""The CPU demo on verl 0.9.1's legacy trainer (``train.trainer: legacy``): feedback through ``on_batch_end``.

verl's legacy trainer calls the dataset's ``on_batch_end`` after it has logged and checkpointed a step and never
after a run's last step, so the demo trains 3 steps and then trains step 3 again from the step-2 checkpoint. Asserts
that rlif's own metrics file carries the per-source and sampler metrics of the V1 demo for every step verl gave
feedback for, that the post-feedback sampler state was saved beside the checkpoint, and that the resume is exact:
the second step-3 checkpoint holds the same sampler state as the first.
"""

from __future__ import annotations

import pytest

pytest.importorskip("verl")

from test_glue_cpu_demo import assert_reference_model_ran, assert_sampler_and_reward_flag_metrics, demo_weights

from rlif.cpu_demo import DemoLayout, read_metrics, run_demo
from rlif.verl_glue import cpu_support
from rlif.verl_glue.hooks import LEGACY_STATE

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> DemoLayout:
    if not cpu_support.is_installed():
        pytest.fail("the CPU start-up hook is missing: run `python -m rlif.verl_glue.cpu_support install`")
    workdir = tmp_path_factory.mktemp("cpu_demo_legacy")
    assert run_demo(workdir, trainer="legacy") == 0
    return DemoLayout(workdir)


def test_the_legacy_trainer_ran_with_rlif_s_feedback(demo: DemoLayout) -> None:
    steps = read_metrics(demo.metrics_file(1))
    assert sorted(steps) == [1, 2, 3]
    for metrics in steps.values():
        assert "critic/score/mean" in metrics  # our compute_score produced the scores verl trained on
    assert_reference_model_ran(steps)
    log = demo.log_file(1).read_text(encoding="utf-8", errors="replace")
    assert "'use_v1': False" in log
    # feedback for every step but a run's last: steps 1 and 2 of phase 1, none from phase 2 (its only step is last)
    ours = read_metrics(demo.legacy_metrics_file)
    assert sorted(ours) == [1, 2]
    assert_sampler_and_reward_flag_metrics(ours, weights=demo_weights(judged=False, reasoning_gym=()))
    for step in (1, 2):
        assert (demo.checkpoints / f"global_step_{step}" / LEGACY_STATE).is_file()
    assert not (demo.checkpoints / "global_step_3" / LEGACY_STATE).exists()


def test_the_resume_redraws_step_three_exactly(demo: DemoLayout) -> None:
    import torch

    resumed = read_metrics(demo.metrics_file(2))
    assert sorted(resumed) == [3]
    log = demo.log_file(2).read_text(encoding="utf-8", errors="replace")
    assert f"Resuming from {demo.checkpoints.resolve() / 'global_step_2'}" in log
    first = torch.load(demo.legacy_resume_copy, weights_only=False)["dataset_state"]
    again = torch.load(demo.checkpoints / "global_step_3" / "data.pt", weights_only=False)["dataset_state"]
    assert first["draws"] == again["draws"] == 12
    assert first == again
