"""The CPU demo end to end: verl 0.9.1's real V1 trainer with every rlif hook, a checkpoint, and a resume.

Asserts on real signals only: our reward function ran (verl logs ``critic/score/mean`` from it and our feedback hook
logs per-source rewards), gradients flowed, the reference model ran (the KL loss term against its log-probs is
logged and finite), the checkpoint exists, and the resumed run trained exactly step 3. The run has the judged
source (``--judge``, the stand-in judge on loopback) and a reasoning-gym source (``--reasoning-gym
family_relationships``): each family scored inside verl's loop, its flags came back through rlif's replay buffer and
the sampler was given its rewards.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

pytest.importorskip("verl")

from rlif.cpu_demo import DemoJudge, DemoLayout, demo_matrix_run, demo_overrides, read_metrics, run_demo
from rlif.demo_assets import JUDGE_SOURCE
from rlif.demo_judge import P_YES_RANGE
from rlif.verl_glue import cpu_support

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> DemoLayout:
    if not cpu_support.is_installed():
        pytest.fail("the CPU start-up hook is missing: run `python -m rlif.verl_glue.cpu_support install`")
    workdir = tmp_path_factory.mktemp("cpu_demo")
    assert run_demo(workdir, judge=JUDGE, reasoning_gym=(REASONING_GYM_TASK,)) == 0
    return DemoLayout(workdir)


JUDGE = DemoJudge()
"""The stand-in judge, which the demo serves on loopback while it runs."""
REASONING_GYM_TASK = "family_relationships"
"""The run's reasoning-gym task: the sampler's seed draws it at steps 1 and 3, one in each phase
(``test_glue_cpu_demo_config.py``)."""
REASONING_GYM_SOURCE = f"reasoning_gym/{REASONING_GYM_TASK}"


def test_two_steps_then_checkpoint(demo: DemoLayout) -> None:
    steps = read_metrics(demo.metrics_file(1))
    assert sorted(steps) == [1, 2]
    for metrics in steps.values():
        assert "critic/score/mean" in metrics  # our compute_score produced the scores verl trained on
        assert any(key.startswith("sampler/draws/") for key in metrics)
        assert any(key.startswith("train/") and key.endswith("/reward_mean") for key in metrics)
    assert max(steps[s]["actor/grad_norm"] for s in steps) > 0.0
    assert_reference_model_ran(steps)
    assert_sampler_and_reward_flag_metrics(steps)
    step_dir = demo.checkpoints / "global_step_2"
    assert (step_dir / "actor" / "model_world_size_1_rank_0.pt").is_file()
    assert (step_dir / "data.pt").is_file()


WEIGHT_DECAY = 0.01
"""verl 0.9.1's default AdamW weight decay (``actor.optim.weight_decay``), which the recipes keep."""
BETAS = (0.9, 0.999)
"""verl 0.9.1's default AdamW betas (``actor.optim.betas``)."""


def adam_step_factor(step: int) -> float:
    """|Adam update| / lr at optimizer step ``step`` when every earlier gradient was zero (m = v = 0 before it).

    m_t = (1 - b1) g and v_t = (1 - b2) g^2, bias-corrected by 1 - b^t: the update is lr * g / |g| times
    ((1 - b1) / (1 - b1^t)) / sqrt((1 - b2) / (1 - b2^t)), which is 1 at t = 1 and 0.744 at t = 2.
    """
    b1, b2 = BETAS
    return ((1 - b1) / (1 - b1**step)) / math.sqrt((1 - b2) / (1 - b2**step))


def test_one_update_at_the_matrix_learning_rate_moves_the_weights(demo: DemoLayout) -> None:
    """fp32 master weights: one AdamW step at lr 1e-6 moves every weight that has a gradient by about lr.

    Adam's first update is lr * g / (|g| + eps) with bias correction, i.e. lr in the direction of -g for any
    gradient far above eps (clipping scales all gradients alike and keeps that), plus decoupled weight decay
    lr * wd * |w|. The same steps on bf16 weights would round away: the test shows both on the demo's checkpoints.
    A step whose GRPO groups all tie (every sample of a prompt scores the same) has zero advantages and, with the
    actor still equal to the reference, a zero gradient; the test then checks the first step that has a gradient,
    against the checkpoint before it.
    """
    import torch
    from safetensors.torch import load_file

    lr = demo_matrix_run().train.lr
    assert lr == pytest.approx(1e-6)
    steps = read_metrics(demo.metrics_file(1))
    with_gradient = [s for s in sorted(steps) if steps[s]["actor/grad_norm"] > 0.0]
    assert with_gradient, "no demo step had a gradient (every GRPO group tied): nothing to check"
    step = with_gradient[0]
    assert steps[step]["actor/lr"] == pytest.approx(lr)  # no warm-up: every step runs at lr
    expected = lr * adam_step_factor(step)
    if step == 1:
        before = load_file(demo.workdir / "model" / "model.safetensors")
    else:
        previous = demo.checkpoints / f"global_step_{step - 1}" / "actor" / "model_world_size_1_rank_0.pt"
        before = {
            name: getattr(value, "_local_tensor", value)
            for name, value in torch.load(previous, map_location="cpu", weights_only=False).items()
            if name != "lm_head.weight"
        }
    shard = demo.checkpoints / f"global_step_{step}" / "actor" / "model_world_size_1_rank_0.pt"
    after = torch.load(shard, map_location="cpu", weights_only=False)
    checked = moved_total = total = 0
    for name, value in after.items():
        weight = getattr(value, "_local_tensor", value)  # one rank: the DTensor's local shard is the whole tensor
        if name not in before:
            # the tied output layer: safetensors stores it once as the embedding, the FSDP shard under both names
            assert name == "lm_head.weight", f"{name}: not in the base model"
            embedding = after["model.embed_tokens.weight"]
            assert torch.equal(weight, getattr(embedding, "_local_tensor", embedding))
            continue
        assert weight.dtype == torch.float32, f"{name}: master weights are {weight.dtype}"
        start = before[name]
        delta = (weight - start).abs()
        moved = delta[delta > 0]
        # a coordinate whose gradient is far below Adam's eps moves by far less than an fp32 ulp: a few per tensor
        assert moved.numel() / delta.numel() > 0.9, f"{name}: only {moved.numel() / delta.numel():.3f} moved"
        moved_total += moved.numel()
        total += delta.numel()
        # |step| = lr * factor (Adam's first update with a gradient) + lr * wd * |w| (weight decay), up to fp32
        # rounding of w + step
        assert 0.9 * expected < moved.median().item() < 1.1 * expected, name
        bound = expected + lr * WEIGHT_DECAY * start.abs().max().item()
        assert delta.max().item() <= bound + 4 * torch.finfo(torch.float32).eps * start.abs().max().item(), name
        if start.dim() == 2:
            # bf16 master weights: the same step leaves most weights exactly where they were
            same_in_bf16 = (start.bfloat16() == (start + (weight - start)).bfloat16()).float().mean().item()
            assert same_in_bf16 > 0.9, f"{name}: {same_in_bf16:.3f}"
        checked += 1
    assert checked == len(before)  # every tensor of the model (tied lm_head included in the embedding)
    assert moved_total / total > 0.99, f"only {moved_total / total:.4f} of all weights moved"


def test_resume_trains_exactly_step_three(demo: DemoLayout) -> None:
    resumed = read_metrics(demo.metrics_file(2))
    assert sorted(resumed) == [3]
    assert "critic/score/mean" in resumed[3]
    assert_reference_model_ran(resumed)  # the resumed trainer rebuilt the reference worker too
    # at lr 1e-6 two updates barely separate actor and reference, so the KL term is ~0 here; the weight test
    # above shows the updates themselves
    log = demo.log_file(2).read_text(encoding="utf-8", errors="replace")
    assert f"Resuming from {demo.checkpoints.resolve() / 'global_step_2'}" in log
    # the sampler continued from the saved state: cumulative draws grew past step 2's, pool by pool
    before = read_metrics(demo.metrics_file(1))[2]
    assert total_draws(resumed[3]) == total_draws(before) + 4
    assert_sampler_and_reward_flag_metrics(resumed, draws_before=pool_metrics(before, "sampler/draws/"))


def demo_weights(judged: bool = True, reasoning_gym: tuple[str, ...] = (REASONING_GYM_TASK,)) -> dict[str, float]:
    """The demo's ``fixed_ratio`` weights, as its params override carries them (each source is its own group); by
    default those of this module's run, with the judged and the reasoning-gym source."""
    prefix = "+data.rlif_sampler.params="
    # the stand-in's URL is known once it runs; weights do not vary with it
    judge = DemoJudge(url="http://127.0.0.1:1/v1") if judged else None
    layout = DemoLayout(Path("demo"))
    overrides = demo_overrides(
        Path("model"), Path("train"), Path("val"), layout, 2, judge=judge, reasoning_gym=reasoning_gym
    )
    (params,) = [override.removeprefix(prefix) for override in overrides if override.startswith(prefix)]
    return json.loads(params.strip("'"))["weights"]


def pool_metrics(metrics: dict[str, float], prefix: str) -> dict[str, float]:
    return {key.removeprefix(prefix): value for key, value in metrics.items() if key.startswith(prefix)}


def assert_sampler_and_reward_flag_metrics(
    steps: dict[int, dict[str, float]],
    draws_before: dict[str, float] | None = None,
    weights: dict[str, float] | None = None,
) -> None:
    """What the feedback hook logs on verl's real path, step by step (``draws_before``: the cumulative draws of the
    step before the first one given, for a resumed phase; ``weights``: the run's sampler weights, by default
    ``demo_weights()``).

    The IF length-cap flag travels from the reward's returned dict through verl's reward loop into TransferQueue's
    ``extra_fields.reward_extra_info`` and back out through the replay buffer: its rate appears for the IF source
    that was drawn (0.0 here: 16-token answers are far below the cap), and for no other family.
    """
    weights = demo_weights() if weights is None else weights
    expected_weights = {source: weight / sum(weights.values()) for source, weight in weights.items()}
    previous = dict(draws_before or {})
    for step in sorted(steps):
        metrics = steps[step]
        assert pool_metrics(metrics, "sampler/weight/") == pytest.approx(expected_weights), step
        step_draws = pool_metrics(metrics, "sampler/step_draws/")
        draws = pool_metrics(metrics, "sampler/draws/")
        assert sum(step_draws.values()) == 4, step  # data.train_batch_size prompts drawn for this step
        assert draws == {pool: previous.get(pool, 0.0) + n for pool, n in step_draws.items()}, step
        previous = draws
        counts = pool_metrics(metrics, "train/")
        scored = {key.removesuffix("/count") for key in counts if key.endswith("/count")}
        assert "iftrain" in scored, step
        assert [key for key in metrics if key.endswith("/if_over_length_cap")] == ["train/iftrain/if_over_length_cap"]
        assert metrics["train/iftrain/if_over_length_cap"] == 0.0, step
        for source in scored:
            assert metrics[f"sampler/nonfinite_reward_share/{source}"] == 0.0, (step, source)


def drawn_steps(steps: dict[int, dict[str, float]], source: str) -> list[int]:
    """The steps whose batch drew ``source`` (the demo's sources have one pool each: interval 0)."""
    return [step for step, metrics in sorted(steps.items()) if metrics.get(f"sampler/step_draws/{source}/0", 0) > 0]


def test_the_judged_source_is_scored_in_verl_s_loop_and_its_rewards_reach_the_sampler(demo: DemoLayout) -> None:
    """At each step that drew the judged source (steps 1 and 3, one in each phase: the sampler's seed makes it so),
    the judge family's flags came back through the replay buffer (``train/judge/demo/judge_gated`` and
    ``/judge_no_verdict``, and the buffer's own ``sampler/no_verdict/*``: the stand-in always answers, so nothing is
    dropped), and the sampler was given the source's rewards (``train/judge/demo/reward_mean`` and ``/count`` come
    from the records it got); a step that did not draw it has none of them.

    A judged response scores the stand-in's mean probability, inside ``P_YES_RANGE``; a gated one scores 0. So the
    mean reward the sampler got is the judged share times a mean probability in that range: judged rewards, not
    placeholders, reached it. Some response must have reached the judge: most pass the rule checks
    (``rlif.demo_assets``: 0.93 and 0.39 pass rates, and one row has none).
    """
    steps = read_metrics(demo.metrics_file(1)) | read_metrics(demo.metrics_file(2))
    assert sorted(steps) == [1, 2, 3]
    assert drawn_steps(steps, JUDGE_SOURCE) == [1, 3]
    source = f"train/{JUDGE_SOURCE}/"
    assert not [key for key in steps[2] if key.startswith(source)]
    judged_somewhere = False
    for step in drawn_steps(steps, JUDGE_SOURCE):
        metrics = steps[step]
        no_verdict, gated = metrics[source + "judge_no_verdict"], metrics[source + "judge_gated"]
        assert no_verdict == 0.0 and 0.0 <= gated <= 1.0, step
        assert metrics["sampler/no_verdict/rate"] == 0.0, step
        assert metrics["sampler/no_verdict/dropped_responses"] == 0.0, step
        assert metrics[source + "count"] == 4 * metrics[f"sampler/step_draws/{JUDGE_SOURCE}/0"], step  # 4 responses
        judged = 1.0 - gated - no_verdict
        mean = metrics[source + "reward_mean"]
        assert judged * P_YES_RANGE[0] - 1e-9 <= mean <= judged * P_YES_RANGE[1] + 1e-9, step
        judged_somewhere |= judged > 0 and mean > 0
    assert judged_somewhere, "no response of the judged source reached the judge: every one was gated"


def test_the_reasoning_gym_source_is_scored_in_verl_s_loop_and_its_rewards_reach_the_sampler(demo: DemoLayout) -> None:
    """At each step that drew the reasoning-gym source (steps 1 and 3, one in each phase), the family's flag came
    back through the replay buffer (``train/<source>/reasoning_gym_answered``: the share of responses with an
    ``<answer>`` span) and the sampler was given the source's rewards: 4 per drawn prompt, finite, each in [0, 1]
    and 0 without an answer span, so their mean is at most the answered share; a step that did not draw it has none
    of them. The sampler weighs the source as the demo's weights say (``assert_sampler_and_reward_flag_metrics``).
    """
    steps = read_metrics(demo.metrics_file(1)) | read_metrics(demo.metrics_file(2))
    assert drawn_steps(steps, REASONING_GYM_SOURCE) == [1, 3]
    source = f"train/{REASONING_GYM_SOURCE}/"
    assert not [key for key in steps[2] if key.startswith(source)]
    for step in drawn_steps(steps, REASONING_GYM_SOURCE):
        metrics = steps[step]
        assert metrics[source + "count"] == 4 * metrics[f"sampler/step_draws/{REASONING_GYM_SOURCE}/0"], step
        answered, mean = metrics[source + "reasoning_gym_answered"], metrics[source + "reward_mean"]
        assert 0.0 <= answered <= 1.0 and 0.0 <= mean <= answered, step
        assert metrics[f"sampler/nonfinite_reward_share/{REASONING_GYM_SOURCE}"] == 0.0, step


def total_draws(metrics: dict[str, float]) -> float:
    return sum(v for k, v in metrics.items() if k.startswith("sampler/draws/"))


def assert_reference_model_ran(steps: dict[int, dict[str, float]]) -> None:
    """The fsdp2 reference worker computed ``ref_log_prob``: verl timed it and the KL loss against it is finite."""
    for metrics in steps.values():
        assert "timing_s/ref" in metrics
        assert math.isfinite(metrics["actor/kl_loss"]) and metrics["actor/kl_loss"] >= 0.0  # low_var_kl is >= 0
        assert metrics["actor/kl_coef"] == pytest.approx(0.001)
