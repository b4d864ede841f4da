"""Fingerprints on resume, source groups, and the checks that turn silent misconfiguration into errors/warnings."""

from __future__ import annotations

import logging
from collections import Counter

import pytest
from samplers_testkit import prepare, step_records

from samplers import Record, build_policy
from samplers.diagnostics import PoolSizeWatch, RewardHealth


def _checkpoint(rows: dict[str, int], name: str = "reward_curriculum", reverse: bool = False) -> dict:
    policy = build_policy(name, {"num_intervals": 4})
    sizes: Counter = Counter()
    for source, count in rows.items():
        values = [float(count - i if reverse else i) for i in range(count)]
        sizes.update((source, interval) for interval in policy.assign_intervals(source, values))
    policy.set_pools(dict(sizes))
    return policy.checkpoint()


def _fresh(rows: dict[str, int], reverse: bool = False):
    policy = build_policy("reward_curriculum", {"num_intervals": 4})
    sizes: Counter = Counter()
    for source, count in rows.items():
        values = [float(count - i if reverse else i) for i in range(count)]
        sizes.update((source, interval) for interval in policy.assign_intervals(source, values))
    policy.set_pools(dict(sizes))
    return policy


def test_same_data_restores_silently() -> None:
    saved = _checkpoint({"iftrain": 50, "logicif": 100})
    assert _fresh({"iftrain": 50, "logicif": 100}).restore(saved) == []


def test_doubled_rows_are_refused_naming_the_pool() -> None:
    saved = _checkpoint({"iftrain": 50, "logicif": 100})
    with pytest.raises(
        ValueError, match=r"pool 'logicif': rows 100 -> 200.*data\.rlif_sampler\.on_data_change=resplit"
    ):
        _fresh({"iftrain": 50, "logicif": 200}).restore(saved)


def test_reversed_difficulties_are_refused_even_with_equal_counts() -> None:
    saved = _checkpoint({"iftrain": 50, "logicif": 100})
    with pytest.raises(ValueError, match=r"pool 'logicif': interval 0 difficulty range \[0, 29\] -> \[1, 30\]"):
        _fresh({"iftrain": 50, "logicif": 100}, reverse=True).restore(saved)


def test_rows_moved_between_intervals_are_refused_when_counts_and_cuts_agree() -> None:
    saved = _checkpoint({"iftrain": 50, "logicif": 100})
    policy = build_policy("reward_curriculum", {"num_intervals": 4})
    sizes: Counter = Counter()
    sizes.update(("iftrain", i) for i in policy.assign_intervals("iftrain", [0.0] * 50))
    sizes.update(("logicif", i) for i in policy.assign_intervals("logicif", [float(99 - i) for i in range(100)]))
    policy.set_pools(dict(sizes))
    with pytest.raises(ValueError, match=r"pool 'logicif': same counts and cut points, but rows moved"):
        policy.restore(saved)


def test_a_removed_source_is_refused() -> None:
    saved = _checkpoint({"iftrain": 50, "logicif": 100})
    with pytest.raises(ValueError, match=r"pool 'iftrain': no longer in the training data"):
        _fresh({"logicif": 100}).restore(saved)


def test_resplit_keeps_the_newest_interval_and_restarts_the_changed_source() -> None:
    policy = _fresh({"iftrain": 50, "logicif": 100})
    for _ in range(6):  # min_updates 10 default: lower it by hand through updates with reward 1
        policy.update(step_records([("logicif", 0)] * 4, lambda s, i, k: 1.0))
    saved = policy.checkpoint()
    saved["state"]["gates"]["logicif"]["unlocked"] = 3
    changed = _fresh({"iftrain": 50, "logicif": 200})
    assert changed.restore(saved, on_data_change="resplit") == ["logicif: rows 100 -> 200"]
    metrics = changed.update([])
    assert metrics["sampler/newest_interval/logicif"] == 3.0
    assert "sampler/gate_ema/logicif" not in metrics  # the changed source's gate restarts
    assert metrics["sampler/draws/iftrain/0"] == saved["state"]["draws"][0][2]


@pytest.mark.parametrize("logicif_rows", [100, 200])
def test_a_gate_saved_under_the_keys_level_and_updates_at_level_loads(logicif_rows: int) -> None:
    """Checkpoints of running jobs name the gate's fields ``level`` and ``updates_at_level``: they resume as is."""
    policy = _fresh({"iftrain": 50, "logicif": 100})
    for _ in range(6):
        policy.update(step_records([("logicif", 0)] * 4, lambda s, i, k: 1.0))
    saved = policy.checkpoint()
    gate = saved["state"]["gates"]["logicif"]
    gate["unlocked"] = 2
    expected = dict(gate)
    gate["level"], gate["updates_at_level"] = gate.pop("unlocked"), gate.pop("updates_since_unlock")
    restored = _fresh({"iftrain": 50, "logicif": logicif_rows})
    restored.restore(saved, on_data_change="resplit")
    state = restored.state_dict()["gates"]["logicif"]
    if logicif_rows == 100:
        assert state == expected
    else:  # changed data: only the newest unlocked interval survives
        assert (state["unlocked"], state["updates_since_unlock"], state["ema"]) == (2, 0, None)
    assert restored.update([])["sampler/newest_interval/logicif"] == 2.0


def test_a_checkpoint_without_fingerprint_and_bad_settings_are_refused() -> None:
    policy = _fresh({"iftrain": 50, "logicif": 100})
    with pytest.raises(ValueError, match="no data fingerprint"):
        policy.restore(policy.state_dict())
    with pytest.raises(ValueError, match=r"on_data_change must be one of \['error', 'resplit'\]"):
        policy.restore(policy.checkpoint(), on_data_change="ignore")


@pytest.mark.parametrize(
    ("name", "params", "match"),
    [
        (
            "reward_curriculum",
            {"curriculum_sources": ["logicf"]},
            r"curriculum_sources: 'logicf' matches no data_source",
        ),
        ("reward_curriculum", {"curriculum_sources": ["graph/"]}, r"'graph/' matches no data_source"),
        ("learnability_ucb", {"difficulty_sources": ["logicif", "typo"]}, r"'typo' matches no data_source"),
        ("ema_reweight", {"groups": {"IF": ["iftrain"], "Logic": ["logic"]}}, r"groups\.Logic: \['logic'\] match no"),
        ("fixed_ratio", {"groups": {"IF": ["iftrain"]}}, r"data_source \['logicif'\] is in no group"),
        ("fixed_ratio", {"groups": {"a": ["iftrain", "logicif"], "b": ["logicif"]}}, r"each data_source belongs"),
        ("fixed_ratio", {"groups": {"IF": "iftrain"}}, r"groups\.IF must be a non-empty list"),
        ("fixed_ratio", {"groups": {"IF": ["iftrain"], "L": ["logicif"]}, "weights": {"IF": 1}}, r"missing \['L'\]"),
    ],
)
def test_config_that_would_train_silently_wrong_is_an_error(name: str, params: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        prepare(name, params)


def test_groups_weigh_families_not_data_sources() -> None:
    """1:1 IF:LogicIF over iftrain + ifeval + logicif gives LogicIF half, not a third; inside IF, by rows."""
    rows = {"iftrain": 300, "ifeval": 100, "logicif": 200}
    groups = {"IF": ["iftrain", "ifeval", "ifbench"], "LogicIF": ["logicif"]}
    policy = prepare("fixed_ratio", {"groups": groups}, rows=rows)
    assert policy.probabilities() == {("ifeval", 0): 0.125, ("iftrain", 0): 0.375, ("logicif", 0): 0.5}
    drawn = Counter(source for source, _ in (policy.draw() for _ in range(8000)))
    assert drawn["logicif"] / 8000 == pytest.approx(0.5, abs=0.02)
    assert drawn["iftrain"] / drawn["ifeval"] == pytest.approx(3.0, rel=0.12)
    plain = prepare("fixed_ratio", {}, rows=rows)
    assert plain.probabilities()[("logicif", 0)] == pytest.approx(1 / 3)


def test_ema_groups_pool_the_family_rewards() -> None:
    rows = {"iftrain": 100, "ifeval": 100, "logicif": 100}
    groups = {"IF": ["iftrain", "ifeval"], "LogicIF": ["logicif"]}
    policy = prepare("ema_reweight", {"groups": groups, "alpha": 1.0}, rows=rows)
    records = [Record("iftrain", 0, 1.0)] * 3 + [Record("ifeval", 0, 0.0)] + [Record("logicif", 0, 0.2)] * 2
    metrics = policy.update(records)
    assert metrics["sampler/ema/IF"] == 0.75 and metrics["sampler/ema/LogicIF"] == pytest.approx(0.2)
    assert metrics["sampler/weight/LogicIF"] > metrics["sampler/weight/IF"]
    assert set(k for k in metrics if k.startswith("sampler/weight/")) == {"sampler/weight/IF", "sampler/weight/LogicIF"}


def test_curriculum_logs_reward_per_interval_gate_threshold_and_step_draws() -> None:
    policy = prepare(
        "reward_curriculum",
        {"num_intervals": 4, "min_updates_per_unlock": 1, "check_every": 1, "gate_statistic": "ema"},
    )
    pools = [policy.draw() for _ in range(10)]
    metrics = policy.update(step_records(pools, lambda s, i, k: 0.75 if s == "logicif" else 0.25))
    assert metrics["sampler/interval_reward/logicif/0"] == 0.75
    assert metrics["sampler/gate_threshold/logicif"] == 0.5
    assert metrics["sampler/newest_interval/logicif"] == 1.0  # 0.75 > 0.5 on the newest (initial) interval
    assert sum(v for k, v in metrics.items() if k.startswith("sampler/step_draws/")) == 10
    assert policy.update([])["sampler/step_draws/logicif/0"] == 0.0


def test_pool_size_watch_warns_once_with_the_numbers(caplog: pytest.LogCaptureFixture) -> None:
    watch = PoolSizeWatch({("logicif", 3): 5, ("iftrain", 0): 1000}, batch_size=128)
    with caplog.at_level(logging.WARNING, logger="rlif.samplers"):
        first = watch.check({("logicif", 3): 0.5, ("iftrain", 0): 0.5})
        again = watch.check({("logicif", 3): 0.5, ("iftrain", 0): 0.5})
    assert again == [] and len(first) == 1
    assert "'logicif' interval 3 has 5 rows but is drawn 64.0 times per batch of 128" in first[0]
    assert watch.check({("iftrain", 0): 0.001}) == []


def test_reward_health_metric_every_step_warning_once(caplog: pytest.LogCaptureFixture) -> None:
    health = RewardHealth(nan_updates=3)
    step = [Record("logicif", 0, float("nan")), Record("iftrain", 0, 1.0), Record("iftrain", 0, float("inf"))]
    with caplog.at_level(logging.WARNING, logger="rlif.samplers"):
        shares = [health.observe(step) for _ in range(6)]
    assert all(s["sampler/nonfinite_reward_share/logicif"] == 1.0 for s in shares)
    assert all(s["sampler/nonfinite_reward_share/iftrain"] == 0.5 for s in shares)
    assert [r.getMessage() for r in caplog.records].count(caplog.records[0].getMessage()) == 1
    assert len(caplog.records) == 1 and "'logicif'" in caplog.records[0].getMessage()


def test_staged_curriculum_moves_one_level_per_budget_and_drops_earlier_levels() -> None:
    policy = prepare("staged_curriculum", {"curriculum_sources": ["logicif"], "steps_per_level": 3})
    levels = [policy.update([])["sampler/newest_interval/logicif"] for _ in range(14)]
    assert levels == [0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 3, 3]
    drawn = {pool for pool in (policy.draw() for _ in range(500)) if pool[0] == "logicif"}
    assert drawn == {("logicif", 3)}
    kept = prepare(
        "staged_curriculum", {"curriculum_sources": ["logicif"], "steps_per_level": 1, "keep_previous": True}
    )
    kept.update([])
    assert {p for p in (kept.draw() for _ in range(500)) if p[0] == "logicif"} == {("logicif", 0), ("logicif", 1)}


def test_staged_curriculum_reads_integer_levels_only() -> None:
    policy = build_policy("staged_curriculum", {})
    assert policy.difficulty_field == "level"
    assert policy.assign_intervals("graph/tsp", [0, 2, 1, 2]) == [0, 2, 1, 2]
    with pytest.raises(ValueError, match=r"'graph/tsp' row 1: field extra_info.level must be an integer >= 0"):
        policy.assign_intervals("graph/tsp", [0, 1.5])
