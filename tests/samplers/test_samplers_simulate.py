"""The CPU simulation harness runs every strategy and reports consistent, reproducible trajectories."""

from __future__ import annotations

from samplers.simulate import STRATEGIES, LearnerConfig, Strategy, simulate, summarize

SMALL = LearnerConfig(rows=200, prompts=16, responses=4, steps=40)


def test_every_strategy_runs_and_is_reproducible() -> None:
    results = {}
    for strategy in STRATEGIES:
        run = simulate(strategy, SMALL, seed=0)
        assert len(run.heldout) == len(run.logicif_share) == SMALL.steps
        assert all(0.0 <= value <= 1.0 for value in run.heldout + run.batch_reward + run.logicif_share)
        results[strategy.label] = [run]
    again = simulate(STRATEGIES[1], SMALL, seed=0)
    assert again.heldout == results[STRATEGIES[1].label][0].heldout
    table = summarize(results)
    assert table.count("\n") == len(STRATEGIES) + 1


def test_curriculum_reports_unlocks_in_order() -> None:
    strategy = Strategy(
        "fast gate", "reward_curriculum", {"min_updates_per_level": 2, "check_every": 1, "threshold": 0.3}
    )
    run = simulate(strategy, SMALL, seed=1)
    assert run.unlock_steps == sorted(run.unlock_steps)
    assert len(run.unlock_steps) >= 1
    levels = list(run.logicif_level)
    assert levels == sorted(levels)


def test_learning_happens() -> None:
    run = simulate(STRATEGIES[0], SMALL, seed=2)
    assert run.heldout[-1] > run.heldout[0]
