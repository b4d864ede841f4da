"""The CPU simulation harness: reproducible trajectories, and each policy's mechanism visible in its outputs."""

from __future__ import annotations

import statistics

from rlif.simulate import STRATEGIES, LearnerConfig, RunResult, Strategy, simulate, summarize

SMALL = LearnerConfig(rows=200, prompts=16, responses=4, steps=40)
BY_LABEL = {strategy.label: strategy for strategy in STRATEGIES}


def test_every_strategy_runs_and_is_reproducible() -> None:
    results = {}
    for strategy in STRATEGIES:
        run = simulate(strategy, SMALL, seed=0)
        assert len(run.heldout) == len(run.logicif_share) == len(run.policy_metrics) == SMALL.steps
        assert all(0.0 <= value <= 1.0 for value in run.heldout + run.batch_reward + run.logicif_share)
        results[strategy.label] = [run]
    again = simulate(STRATEGIES[1], SMALL, seed=0)
    assert again.heldout == results[STRATEGIES[1].label][0].heldout
    table = summarize(results)
    assert table.count("\n") == len(STRATEGIES) + 1
    for line in table.splitlines()[2:]:
        label, final_unlocked = line.split(" | ")[0][2:], line.split(" | ")[-1][:-2]
        # the last column is the newest unlocked LogicIF interval at the end, for curriculum strategies only
        unlocks = results[label][0].unlock_steps
        assert final_unlocked == (str(len(unlocks)) if unlocks else "-"), line


def test_ema_moves_share_to_the_weaker_source() -> None:
    """LogicIF starts weaker than iftrain: EMA reweighting draws clearly more of it than the fixed 1:1 mix."""
    for seed in (0, 1):
        fixed = simulate(BY_LABEL["fixed 1:1"], SMALL, seed=seed)
        ema = simulate(BY_LABEL["EMA"], SMALL, seed=seed)
        assert statistics.fmean(fixed.heldout_by_source["logicif"][:5]) < statistics.fmean(
            fixed.heldout_by_source["iftrain"][:5]
        )
        assert abs(statistics.fmean(fixed.logicif_share) - 0.5) < 0.1
        assert statistics.fmean(ema.logicif_share) > statistics.fmean(fixed.logicif_share) + 0.1
        # the policy's own weights say the same as the draws
        assert all(m["sampler/weight/logicif"] > m["sampler/weight/iftrain"] for m in ema.policy_metrics[5:])


def test_interval_decay_trains_the_hardest_buckets_more() -> None:
    """Down-weighting older intervals puts more practice on the newest (hardest) unlocked ones."""
    config = LearnerConfig(rows=200, prompts=16, responses=4, steps=120)
    plain = BY_LABEL["EMA + curriculum, gate on source"]
    decay = BY_LABEL["EMA + curriculum + decay 0.5, gate on source"]
    assert decay.params == {**plain.params, "interval_decay": 0.5}
    for seed in (0, 1):
        hardest_plain = statistics.fmean(simulate(plain, config, seed=seed).final_bucket_success[-3:])
        hardest_decay = statistics.fmean(simulate(decay, config, seed=seed).final_bucket_success[-3:])
        assert hardest_decay > 1.2 * hardest_plain, (seed, hardest_plain, hardest_decay)


def _newest(run: RunResult) -> list[float]:
    return [m["sampler/newest_interval/logicif"] for m in run.policy_metrics]


def test_every_unlock_passed_its_gate() -> None:
    params = {
        "threshold": 0.3,
        "min_updates_per_unlock": 2,
        "check_every": 2,
        "gate_alpha": 0.3,
        "gate_on": "source",
        "gate_statistic": "ema",
    }
    run = simulate(Strategy("fast gate", "reward_curriculum", params), SMALL, seed=1)
    assert len(run.unlock_steps) >= 3
    newest = _newest(run)
    raised = [step for step in range(1, SMALL.steps + 1) if newest[step - 1] > (newest[step - 2] if step > 1 else 0)]
    assert (
        raised == run.unlock_steps
    )  # the recorded unlocks are exactly where the newest interval went up, one at a time
    assert all(newest[step - 1] - (newest[step - 2] if step > 1 else 0) == 1 for step in raised)
    previous = 0
    for step in run.unlock_steps:
        assert run.policy_metrics[step - 1]["sampler/gate_ema/logicif"] > params["threshold"], step
        assert step % params["check_every"] == 0, step
        assert step - previous >= params["min_updates_per_unlock"], step
        previous = step
    # and no check with the gate open was skipped while intervals remained and enough updates had passed
    last = max(newest)
    for step in range(1, SMALL.steps + 1):
        since = step - max([u for u in run.unlock_steps if u < step], default=0)
        gate = run.policy_metrics[step - 1]["sampler/gate_ema/logicif"]
        at = newest[step - 2] if step > 1 else 0
        if step % params["check_every"] == 0 and since >= params["min_updates_per_unlock"] and at < last:
            assert (gate > params["threshold"]) == (step in run.unlock_steps), step


def test_floor_keeps_every_source_above_it() -> None:
    """A sharp EMA rule pushes the stronger source down to the floor and no further."""
    floor = 0.2
    strategy = Strategy("sharp EMA", "ema_reweight", {"floor": floor, "temperature": 0.02, "alpha": 0.5})
    run = simulate(strategy, SMALL, seed=3)
    weights = [{k: v for k, v in m.items() if k.startswith("sampler/weight/")} for m in run.policy_metrics]
    assert all(len(step) == 2 and abs(sum(step.values()) - 1.0) < 1e-9 for step in weights)
    lowest = min(min(step.values()) for step in weights)
    assert lowest >= floor - 1e-12
    assert lowest < floor + 0.01  # the floor is what binds, so the bound above is tested
    # the draws follow: the weaker source never takes (much) more than 1 - floor of a batch on average
    assert statistics.fmean(run.logicif_share) <= 1.0 - floor + 0.1


def test_learning_happens() -> None:
    run = simulate(STRATEGIES[0], SMALL, seed=2)
    assert run.heldout[-1] > run.heldout[0]
