"""reward_curriculum: interval assignment, per-source gating, unlock order and timing, recency decay, composition."""

from __future__ import annotations

from collections import Counter

import pytest
from samplers_testkit import prepare, step_records

from samplers import build_policy

GATE = {
    "num_intervals": 4,
    "initial_fraction": 0.3,
    "min_updates_per_unlock": 2,
    "check_every": 1,
    "gate_alpha": 1.0,
    "gate_on": "source",
    "gate_statistic": "ema",
}
"""The former point gate (a success EMA): these tests pin the timing rules every gate statistic shares."""


def _logicif_step(reward: float, iftrain_reward: float = 0.0) -> list:
    pools = [("iftrain", 0)] * 4 + [("logicif", 0)] * 4
    return step_records(pools, lambda s, i, k: reward if s == "logicif" else iftrain_reward)


def test_only_curriculum_sources_get_intervals() -> None:
    policy = build_policy("reward_curriculum", GATE)
    assert policy.assign_intervals("iftrain", [5.0, 1.0, 3.0]) == [0, 0, 0]
    assert sorted(set(policy.assign_intervals("logicif", [float(d) for d in range(100)]))) == [0, 1, 2, 3, 4]
    graph = build_policy("reward_curriculum", {"curriculum_sources": ["graph/"], "num_intervals": 2})
    assert graph.assign_intervals("graph/tsp", [3.0, 2.0, 1.0, 0.0]) == [2, 2, 1, 0]
    assert graph.assign_intervals("logicif", [3.0, 2.0]) == [0, 0]


def test_starts_on_the_initial_interval_only() -> None:
    policy = prepare("reward_curriculum", GATE)
    drawn = Counter(policy.draw() for _ in range(2000))
    assert set(drawn) == {("iftrain", 0), ("logicif", 0)}


def test_unlocks_in_order_only_past_the_threshold() -> None:
    policy = prepare("reward_curriculum", {**GATE, "threshold": 0.5})
    newest = []
    for reward in [0.4, 0.49, 0.4, 0.6, 0.6, 0.6, 0.6, 0.3, 0.3, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7]:
        newest.append(policy.update(_logicif_step(reward))["sampler/newest_interval/logicif"])
    # Below 0.5 nothing unlocks; above 0.5 one unlock per min_updates_per_unlock=2 updates, never skipping an interval.
    assert newest == [0, 0, 0, 1, 1, 2, 2, 2, 2, 3, 3, 4, 4, 4, 4, 4]
    assert policy.unlock_steps() == {"logicif": [4, 6, 10, 12]}


@pytest.mark.parametrize("gate_on", ["source", "newest"])
def test_threshold_is_strict_and_min_updates_hold_back(gate_on: str) -> None:
    """ "Larger than the threshold": a reward exactly at 0.5 never unlocks, one just above does."""
    params = {**GATE, "threshold": 0.5, "min_updates_per_unlock": 3, "gate_on": gate_on}
    at = prepare("reward_curriculum", params)
    assert [at.update(_logicif_step(0.5))["sampler/newest_interval/logicif"] for _ in range(30)] == [0] * 30
    above = prepare("reward_curriculum", params)
    newest = [above.update(_logicif_step(0.5 + 1e-9))["sampler/newest_interval/logicif"] for _ in range(4)]
    assert newest == [0, 0, 1, 1]


def test_newest_gating_is_the_default() -> None:
    assert build_policy("reward_curriculum").gate_on == "newest"


def test_check_every_counts_updates_from_the_start() -> None:
    policy = prepare("reward_curriculum", {**GATE, "min_updates_per_unlock": 1, "check_every": 3})
    newest = [policy.update(_logicif_step(1.0))["sampler/newest_interval/logicif"] for _ in range(7)]
    assert newest == [0, 0, 1, 1, 1, 2, 2]


def test_gates_per_source_so_if_rewards_cannot_unlock_logicif() -> None:
    policy = prepare("reward_curriculum", {**GATE, "threshold": 0.5})
    for _ in range(20):
        metrics = policy.update(_logicif_step(0.1, iftrain_reward=1.0))
    assert metrics["sampler/newest_interval/logicif"] == 0
    assert metrics["sampler/gate_ema/logicif"] == pytest.approx(0.1)


def test_steps_without_records_of_a_source_do_not_count_toward_its_unlock() -> None:
    policy = prepare("reward_curriculum", {**GATE, "min_updates_per_unlock": 2})
    only_if = step_records([("iftrain", 0)] * 4, lambda s, i, k: 1.0)
    policy.update(_logicif_step(1.0))
    for _ in range(5):
        assert policy.update(only_if)["sampler/newest_interval/logicif"] == 0
    assert policy.update(_logicif_step(1.0))["sampler/newest_interval/logicif"] == 1


def test_unlocked_intervals_are_drawn_and_locked_ones_are_not() -> None:
    policy = prepare("reward_curriculum", {**GATE, "min_updates_per_unlock": 1})
    policy.update(_logicif_step(1.0))
    drawn = Counter(policy.draw() for _ in range(4000))
    assert {pool for pool in drawn if pool[0] == "logicif"} == {("logicif", 0), ("logicif", 1)}
    # interval_decay=1: uniform over unlocked rows, 30 rows in interval 0 and 17 in interval 1.
    assert drawn[("logicif", 0)] / (drawn[("logicif", 0)] + drawn[("logicif", 1)]) == pytest.approx(30 / 47, abs=0.04)


def test_gate_on_newest_ignores_the_easy_intervals() -> None:
    params = {**GATE, "min_updates_per_unlock": 1, "gate_on": "newest"}
    source_gate = prepare("reward_curriculum", {**params, "gate_on": "source"})
    newest_gate = prepare("reward_curriculum", params)

    def step(newest: int) -> list:
        # interval 0 always solved; the newest unlocked interval never; weighted over the source this is 0.75.
        pools = [("logicif", 0)] * 3 + [("logicif", newest)]
        return step_records(pools, lambda s, i, k: float(i == 0))

    for _ in range(2):
        source_metrics = source_gate.update(step(int(source_gate.update([])["sampler/newest_interval/logicif"])))
    assert source_metrics["sampler/newest_interval/logicif"] == 2
    newest_gate.update(step(0))  # the newest unlocked interval is interval 0 itself: solved, so interval 1 unlocks
    for _ in range(3):
        metrics = newest_gate.update(step(1))
    assert metrics["sampler/newest_interval/logicif"] == 1
    assert metrics["sampler/gate_ema/logicif"] == 0.0


def test_gate_on_newest_restarts_the_ema_at_each_unlock() -> None:
    policy = prepare("reward_curriculum", {**GATE, "min_updates_per_unlock": 1, "gate_on": "newest", "gate_alpha": 0.1})
    metrics = policy.update(step_records([("logicif", 0)] * 2, lambda s, i, k: 1.0))
    assert metrics["sampler/newest_interval/logicif"] == 1
    assert "sampler/gate_ema/logicif" not in metrics
    metrics = policy.update(step_records([("logicif", 1)] * 2, lambda s, i, k: 0.25))
    assert metrics["sampler/gate_ema/logicif"] == 0.25


def test_decay_moves_mass_to_the_newest_interval() -> None:
    plain = prepare("reward_curriculum", {**GATE, "min_updates_per_unlock": 1})
    decayed = prepare("reward_curriculum", {**GATE, "min_updates_per_unlock": 1, "interval_decay": 0.5})
    for _ in range(3):
        plain_metrics = plain.update(_logicif_step(1.0))
        decayed_metrics = decayed.update(_logicif_step(1.0))
    newest = "sampler/interval_weight/logicif/3"
    assert decayed_metrics["sampler/newest_interval/logicif"] == plain_metrics["sampler/newest_interval/logicif"] == 3
    assert decayed_metrics[newest] > plain_metrics[newest]
    # rows 30, 17, 18, 17 weighted by 0.125, 0.25, 0.5, 1.
    expected = 17 / (30 * 0.125 + 17 * 0.25 + 18 * 0.5 + 17)
    assert decayed_metrics[newest] == pytest.approx(expected)
    weights = [decayed_metrics[f"sampler/interval_weight/logicif/{i}"] for i in range(5)]
    assert weights[3] == max(weights) and weights[4] == 0.0


def test_composes_with_ema_source_weighting() -> None:
    policy = prepare(
        "reward_curriculum",
        {**GATE, "source_weighting": "ema", "source_params": {"alpha": 1.0, "temperature": 0.2, "floor": 0.1}},
    )
    metrics = policy.update(_logicif_step(0.2, iftrain_reward=0.9))
    assert metrics["sampler/weight/logicif"] > 0.8
    assert metrics["sampler/ema/iftrain"] == pytest.approx(0.9)
    assert metrics["sampler/newest_interval/logicif"] == 0


def test_fixed_source_weighting_with_weights() -> None:
    policy = prepare("reward_curriculum", {**GATE, "source_params": {"weights": {"iftrain": 1, "logicif": 3}}})
    drawn = Counter(policy.draw()[0] for _ in range(4000))
    assert drawn["logicif"] / 4000 == pytest.approx(0.75, abs=0.03)


def test_several_curriculum_sources_gate_independently() -> None:
    policy = prepare(
        "reward_curriculum", {**GATE, "curriculum_sources": ["graph/"]}, rows={"graph/tsp": 50, "graph/mis": 50}
    )
    records = step_records([("graph/tsp", 0)] * 3 + [("graph/mis", 0)] * 3, lambda s, i, k: float(s == "graph/tsp"))
    for _ in range(2):
        metrics = policy.update(records)
    assert metrics["sampler/newest_interval/graph/tsp"] == 1
    assert metrics["sampler/newest_interval/graph/mis"] == 0


def test_non_curriculum_source_with_intervals_is_refused() -> None:
    policy = build_policy("reward_curriculum", GATE)
    with pytest.raises(ValueError, match="not curriculum-gated"):
        policy.set_pools({("iftrain", 0): 5, ("iftrain", 2): 5, ("logicif", 0): 5})


@pytest.mark.parametrize(
    "params",
    [
        {"curriculum_sources": "logicif"},
        {"curriculum_sources": []},
        {"gate_alpha": 0.0},
        {"min_updates_per_unlock": 0},
        {"check_every": 0},
        {"interval_decay": 0.0},
        {"interval_decay": 1.5},
        {"num_intervals": 0},
        {"initial_fraction": 1.0},
        {"source_weighting": "softmax"},
        {"gate_on": "batch"},
        {"source_weighting": "ema", "source_params": {"temp": 1.0}},
    ],
)
def test_rejects_bad_parameters(params: dict) -> None:
    with pytest.raises(ValueError):
        build_policy("reward_curriculum", params)
