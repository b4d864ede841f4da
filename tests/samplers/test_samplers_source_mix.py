"""fixed_ratio and ema_reweight: ratios, EMA moving mass to the weaker source, the floor, and validation."""

from __future__ import annotations

from collections import Counter

import pytest
from samplers_testkit import prepare, step_records

from samplers import build_policy


def _share(policy, source: str, draws: int = 4000) -> float:
    counts = Counter(policy.draw()[0] for _ in range(draws))
    return counts[source] / draws


def test_fixed_ratio_defaults_to_one_to_one() -> None:
    policy = prepare("fixed_ratio")
    assert abs(_share(policy, "logicif") - 0.5) < 0.04
    metrics = policy.update([])
    assert metrics["sampler/weight/iftrain"] == metrics["sampler/weight/logicif"] == 0.5


def test_fixed_ratio_any_weights_and_ignores_rewards() -> None:
    policy = prepare("fixed_ratio", {"weights": {"iftrain": 3, "logicif": 1}})
    policy.update(step_records([("logicif", 0)] * 10, lambda s, i, k: 0.0))
    assert abs(_share(policy, "iftrain") - 0.75) < 0.04


@pytest.mark.parametrize("weights", [{"iftrain": 1.0}, {"iftrain": 1.0, "logicif": 1.0, "typo": 1.0}])
def test_weights_must_name_exactly_the_sources(weights: dict[str, float]) -> None:
    with pytest.raises(ValueError, match="weights must name exactly"):
        prepare("fixed_ratio", {"weights": weights})


def test_source_mix_refuses_difficulty_intervals() -> None:
    policy = build_policy("fixed_ratio")
    with pytest.raises(ValueError, match="interval 0"):
        policy.set_pools({("logicif", 0): 3, ("logicif", 1): 3})


def test_ema_moves_mass_to_the_weaker_source() -> None:
    policy = prepare("ema_reweight", {"alpha": 0.5, "temperature": 0.3, "floor": 0.05})
    records = step_records([("iftrain", 0)] * 8 + [("logicif", 0)] * 8, lambda s, i, k: 0.9 if s == "iftrain" else 0.1)
    for _ in range(10):
        metrics = policy.update(records)
    assert metrics["sampler/ema/logicif"] == pytest.approx(0.1)
    assert metrics["sampler/ema/iftrain"] == pytest.approx(0.9)
    assert metrics["sampler/weight/logicif"] > 0.85
    assert _share(policy, "logicif") > 0.8


def test_ema_waits_for_every_source_before_reweighting() -> None:
    policy = prepare("ema_reweight")
    metrics = policy.update(step_records([("logicif", 0)] * 4, lambda s, i, k: 0.0))
    assert metrics["sampler/weight/logicif"] == 0.5
    assert "sampler/ema/iftrain" not in metrics


@pytest.mark.parametrize("floor", [0.05, 0.2])
def test_ema_floor_keeps_every_source_alive(floor: float) -> None:
    policy = prepare("ema_reweight", {"floor": floor, "temperature": 0.01, "alpha": 1.0})
    records = step_records([("iftrain", 0), ("logicif", 0)], lambda s, i, k: 1.0 if s == "iftrain" else 0.0)
    metrics = policy.update(records)
    assert metrics["sampler/weight/iftrain"] == pytest.approx(floor)
    assert _share(policy, "iftrain", 20000) > floor * 0.8


def test_ema_prior_weights_shift_the_balance() -> None:
    policy = prepare("ema_reweight", {"weights": {"iftrain": 3.0, "logicif": 1.0}, "floor": 0.0, "alpha": 1.0})
    metrics = policy.update(step_records([("iftrain", 0), ("logicif", 0)], lambda s, i, k: 0.5))
    assert metrics["sampler/weight/iftrain"] == pytest.approx(0.75)


@pytest.mark.parametrize(
    "params", [{"alpha": 0.0}, {"alpha": 1.5}, {"temperature": 0.0}, {"floor": -0.1}, {"floor": 1.0}, {"bogus": 1}]
)
def test_ema_rejects_bad_parameters(params: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        build_policy("ema_reweight", params)


def test_ema_floor_too_large_for_the_sources() -> None:
    with pytest.raises(ValueError, match="exceeds 1"):
        prepare("ema_reweight", {"floor": 0.4}, rows={"a": 3, "b": 3, "c": 3})


def test_unknown_sources_and_non_finite_rewards_are_ignored_and_counted() -> None:
    policy = prepare("ema_reweight", {"alpha": 1.0})
    records = step_records([("iftrain", 0), ("logicif", 0)], lambda s, i, k: 0.5)
    records += step_records([("unknown", 0)], lambda s, i, k: 1.0, n=3)
    records += step_records([("logicif", 0)], lambda s, i, k: float("nan"), n=2)
    metrics = policy.update(records)
    assert metrics["sampler/ignored_records"] == 5.0
    assert metrics["sampler/ema/logicif"] == 0.5


def test_draw_counts_are_reported() -> None:
    policy = prepare("fixed_ratio")
    drawn = Counter(policy.draw() for _ in range(50))
    metrics = policy.update([])
    assert metrics["sampler/draws/iftrain/0"] == drawn[("iftrain", 0)]
    assert metrics["sampler/draws/logicif/0"] + metrics["sampler/draws/iftrain/0"] == 50
