"""Stage 2's factorial cells and controls: fixed 1:1 with a curriculum, EMA on success, UCB that respects groups."""

from __future__ import annotations

import dataclasses
from collections import Counter

import pytest
from samplers_testkit import prepare, step_records

from samplers import Record

GROUPS = {"IF": ["iftrain", "ifeval"], "LogicIF": ["logicif"]}
ROWS = {"iftrain": 300, "ifeval": 100, "logicif": 400}


@dataclasses.dataclass(frozen=True)
class SuccessRecord(Record):
    """A record with the success indicator the feedback reads from the reward's ``acc``."""

    success: float | None = None


def _group_share(policy, group: list[str], draws: int = 6000) -> float:
    drawn = Counter(policy.draw()[0] for _ in range(draws))
    return sum(drawn[source] for source in group) / draws


@pytest.mark.parametrize("decay", [1.0, 0.5])
def test_fixed_one_to_one_curriculum_draws_half_from_each_group_whatever_the_rewards(decay: float) -> None:
    params = {"curriculum_sources": ["logicif"], "source_weighting": "fixed", "groups": GROUPS,
              "interval_decay": decay, "min_updates_per_unlock": 1, "check_every": 1,
              "gate_window": 2, "gate_min_responses": 8}  # fmt: skip
    policy = prepare("reward_curriculum", params, rows=ROWS)
    records = step_records([("iftrain", 0)] * 8 + [("logicif", 0)] * 8, lambda s, i, k: 1.0 if s == "iftrain" else 0.9)
    for _ in range(5):
        metrics = policy.update(records)
    assert not any(key.startswith("sampler/ema/") for key in metrics)  # no EMA between groups
    assert metrics["sampler/weight/IF"] == metrics["sampler/weight/LogicIF"] == 0.5
    assert metrics["sampler/newest_interval/logicif"] > 0  # the curriculum itself still unlocks
    assert _group_share(policy, ["logicif"]) == pytest.approx(0.5, abs=0.03)
    probabilities = policy.probabilities()
    assert sum(p for (source, _), p in probabilities.items() if source == "logicif") == pytest.approx(0.5)


def test_ema_on_success_ignores_the_reward_scale() -> None:
    # IF earns partial credit (0.8) but never succeeds; LogicIF is all-or-nothing and succeeds half the time.
    def records() -> list[Record]:
        out = []
        for k in range(8):
            out.append(SuccessRecord("iftrain", 0, 0.8, group=f"i{k}", success=0.0))
            out.append(SuccessRecord("logicif", 0, float(k % 2), group=f"l{k}", success=float(k % 2)))
        return out

    on_reward = prepare("ema_reweight", {"signal": "reward", "groups": GROUPS}, rows=ROWS)
    on_success = prepare("ema_reweight", {"signal": "success", "groups": GROUPS}, rows=ROWS)
    for _ in range(5):
        reward_metrics = on_reward.update(records())
        success_metrics = on_success.update(records())
    assert reward_metrics["sampler/weight/LogicIF"] > 0.5  # the lower reward, though the more successful
    assert success_metrics["sampler/weight/IF"] > 0.5  # IF is the one that fails
    assert success_metrics["sampler/signal_fallback"] == 0.0


def test_success_signal_counts_the_reward_of_records_without_an_indicator() -> None:
    policy = prepare("ema_reweight", {"groups": GROUPS}, rows=ROWS)  # success is the default
    records = step_records([("iftrain", 0), ("logicif", 0)], lambda s, i, k: 1.0)
    metrics = policy.update([dataclasses.replace(record, success=None) for record in records])
    assert metrics["sampler/signal_fallback"] == 8.0
    assert metrics["sampler/ema/IF"] == 1.0


def test_ema_rejects_an_unknown_signal() -> None:
    with pytest.raises(ValueError, match="signal"):
        prepare("ema_reweight", {"signal": "acc"})


def test_curriculum_ema_reads_the_signal_too() -> None:
    params = {"source_weighting": "ema", "source_params": {"signal": "success"}, "groups": GROUPS}
    policy = prepare("reward_curriculum", params, rows=ROWS)
    records = [SuccessRecord("iftrain", 0, 0.8, group="i", success=0.0)] * 4
    records += [SuccessRecord("logicif", 0, 0.0, group="l", success=1.0)] * 4
    for _ in range(5):
        metrics = policy.update(records)
    assert metrics["sampler/ema/IF"] == 0.0 and metrics["sampler/ema/LogicIF"] == 1.0


def test_ucb_gives_each_group_its_share_whatever_its_pool_count() -> None:
    params = {"difficulty_sources": ["logicif"], "num_intervals": 8, "groups": GROUPS}
    policy = prepare("learnability_ucb", params, rows=ROWS)
    metrics = policy.update([])
    assert metrics["sampler/weight/logicif"] == pytest.approx(0.5)
    assert metrics["sampler/weight/iftrain"] + metrics["sampler/weight/ifeval"] == pytest.approx(0.5)
    assert metrics["sampler/group_weight/IF"] == 0.5
    # Without groups the eight LogicIF pools outvote IF's two.
    ungrouped = prepare("learnability_ucb", {"difficulty_sources": ["logicif"], "num_intervals": 8}, rows=ROWS)
    assert ungrouped.update([])["sampler/weight/logicif"] == pytest.approx(0.8)
    # Learnability moves mass within LogicIF only; the split between groups stays 1:1.
    mixed = [Record("logicif", 3, float(k % 2), group=f"m{g}") for g in range(4) for k in range(8)]
    solved = [Record("logicif", 1, 1.0, group=f"s{g}") for g in range(4) for k in range(8)]
    for _ in range(5):
        metrics = policy.update(mixed + solved)
    assert metrics["sampler/pool_weight/logicif/3"] > metrics["sampler/pool_weight/logicif/1"]
    assert _group_share(policy, ["logicif"]) == pytest.approx(0.5, abs=0.03)


def test_ucb_group_weights_set_the_split_and_need_groups() -> None:
    policy = prepare("learnability_ucb", {"groups": GROUPS, "group_weights": {"IF": 1, "LogicIF": 3}}, rows=ROWS)
    assert policy.update([])["sampler/weight/logicif"] == pytest.approx(0.75)
    with pytest.raises(ValueError, match="group_weights needs groups"):
        prepare("learnability_ucb", {"group_weights": {"IF": 1}})


def test_ucb_with_groups_resumes_exactly() -> None:
    params = {"groups": GROUPS}
    policy = prepare("learnability_ucb", params, rows=ROWS)
    policy.update([Record("logicif", 1, float(k % 2), group="g") for k in range(8)])
    saved = policy.checkpoint()
    again = prepare("learnability_ucb", params, rows=ROWS)
    again.restore(saved)
    assert [policy.draw() for _ in range(50)] == [again.draw() for _ in range(50)]
