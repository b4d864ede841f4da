"""learnability_ucb: GRPO advantages from groups, preference for learnable pools, exploration of unseen pools."""

from __future__ import annotations

import math
from collections import Counter

import pytest
from samplers_testkit import prepare

from samplers import Record, build_policy
from samplers.learnability_ucb import grpo_abs_advantages


def _group(source: str, interval: int, rewards: list[float], group: str) -> list[Record]:
    return [Record(source, interval, r, group=group) for r in rewards]


def test_advantages_match_grpo_by_hand() -> None:
    records = _group("a", 0, [1.0, 0.0, 0.0, 0.0], "g1") + _group("a", 0, [1.0, 1.0], "g2")
    records += [*_group("b", 0, [0.5], "single"), Record("b", 0, 1.0)]
    result = grpo_abs_advantages(records)
    # g1: mean 0.25, unbiased std 0.5 -> |A| = 1.5, 0.5, 0.5, 0.5; g2: std 0 -> |A| = 0.
    assert set(result) == {("a", 0)}
    total, count = result[("a", 0)]
    assert count == 6
    assert total == pytest.approx(1.5 / (0.5 + 1e-6))
    raw_total, _ = grpo_abs_advantages(records, normalize_by_std=False)[("a", 0)]
    assert raw_total == pytest.approx(0.75 + 0.25 * 3)


def test_groups_need_not_be_contiguous_and_nan_groups_are_skipped() -> None:
    records = [Record("a", 0, 1.0, group="x"), Record("a", 0, 0.0, group="y"), Record("a", 0, 0.0, group="x")]
    records += [Record("a", 0, 1.0, group="y"), Record("b", 0, float("nan"), group="z"), Record("b", 0, 1.0, group="z")]
    result = grpo_abs_advantages(records)
    assert set(result) == {("a", 0)}
    assert result[("a", 0)][1] == 4
    assert grpo_abs_advantages([]) == {}


def test_prefers_the_pool_with_mixed_outcomes() -> None:
    policy = prepare("learnability_ucb", {"difficulty_sources": [], "exploration": 0.1})
    solved = _group("iftrain", 0, [1.0] * 8, "s1") + _group("iftrain", 0, [1.0] * 8, "s2")
    mixed = _group("logicif", 0, [1.0, 0.0] * 4, "m1") + _group("logicif", 0, [1.0, 0.0] * 4, "m2")
    for _ in range(5):
        metrics = policy.update(solved + mixed)
    assert metrics["sampler/abs_advantage/iftrain/0"] == 0.0
    assert metrics["sampler/abs_advantage/logicif/0"] > 0.9
    drawn = Counter(policy.draw()[0] for _ in range(2000))
    assert drawn["logicif"] > 0.95 * 2000


def test_explores_pools_it_has_not_seen() -> None:
    policy = prepare("learnability_ucb", {"num_intervals": 2})
    assert sorted(p for p in policy.update([]) if p.startswith("sampler/pool_weight/")) == [
        "sampler/pool_weight/iftrain/0",
        "sampler/pool_weight/logicif/1",
        "sampler/pool_weight/logicif/2",
    ]
    # iftrain and logicif/1 are seen and all-solved; the unseen logicif/2 keeps its large bonus.
    seen = _group("iftrain", 0, [1.0] * 8, "a") + _group("logicif", 1, [1.0] * 8, "b")
    metrics = policy.update(seen)
    assert metrics["sampler/pool_weight/logicif/2"] > 0.99
    bonus_unseen = math.sqrt(2 * math.log(17))
    assert policy.scores()[("logicif", 2)] == pytest.approx(bonus_unseen)


def test_window_keeps_whole_recent_steps() -> None:
    policy = prepare("learnability_ucb", {"difficulty_sources": [], "window": 8})
    mixed = _group("logicif", 0, [1.0, 0.0] * 4, "m")
    solved = _group("logicif", 0, [1.0] * 8, "s")
    policy.update(mixed)
    assert policy.update(solved)["sampler/abs_advantage/logicif/0"] == 0.0
    policy = prepare("learnability_ucb", {"difficulty_sources": [], "window": 9})
    policy.update(mixed)
    mixed_abs_advantage = 0.5 / math.sqrt(8 * 0.25 / 7)  # |r - 0.5| over the unbiased std of [1, 0] * 4
    assert policy.update(solved)["sampler/abs_advantage/logicif/0"] == pytest.approx(mixed_abs_advantage / 2, rel=1e-5)


@pytest.mark.parametrize(
    "params",
    [
        {"exploration": -1.0},
        {"temperature": 0.0},
        {"window": 0},
        {"difficulty_sources": "logicif"},
        {"num_intervals": 0},
    ],
)
def test_rejects_bad_parameters(params: dict) -> None:
    with pytest.raises(ValueError):
        build_policy("learnability_ucb", params)
