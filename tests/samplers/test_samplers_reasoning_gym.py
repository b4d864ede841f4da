"""rlif's samplers over reasoning-gym levels on CPU: real rows from ``python -m rlif.data reasoning-gym``, scored by
the real ``reasoning_gym`` family, a fake learner that masters one level of a task after practising it."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from random import Random

import pytest

from rewards import compute_score
from samplers import Record, build_policy

pytest.importorskip("reasoning_gym")

TASKS = ("maze", "string_insertion")
LEVELS = (0, 1, 2, 3)
SIZE = 6
GATE = {
    "curriculum_sources": ["reasoning_gym/"],
    "initial_fraction": 0.25,
    "num_intervals": 3,
    "threshold": 0.5,
    "min_updates_per_unlock": 2,
    "check_every": 1,
    "gate_alpha": 1.0,
    "gate_on": "newest",
    "gate_statistic": "ema",
}
"""One interval per level (equal rows per level), a point gate on the newest interval's success EMA."""


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    from rlif.data.reasoning_gym_build import build_rows

    return build_rows(TASKS, SIZE, LEVELS, seed=11)


def _pools(policy, rows: list[dict]) -> dict[tuple[str, int], list[dict]]:
    by_source = defaultdict(list)
    for row in rows:
        by_source[row["data_source"]].append(row)
    pools: dict[tuple[str, int], list[dict]] = defaultdict(list)
    for source, members in by_source.items():
        values = [m["extra_info"][policy.difficulty_field] for m in members]
        for row, interval in zip(members, policy.assign_intervals(source, values), strict=True):
            pools[(source, interval)].append(row)
    policy.set_pools({key: len(members) for key, members in pools.items()})
    return pools


class FakeLearner:
    """Answers a task's level right once it has practised that level ``practice`` times (levels below the newest
    it practised are mastered with it); otherwise it writes a wrong answer in the tags."""

    def __init__(self, practice: int = 3) -> None:
        self.practice = practice
        self.seen: Counter[tuple[str, int]] = Counter()

    def mastered(self, source: str) -> int:
        return max((lvl for (s, lvl), n in self.seen.items() if s == source and n >= self.practice), default=-1)

    def respond(self, row: dict) -> str:
        source, level = row["data_source"], row["extra_info"]["level"]
        answer = json.loads(row["reward_model"]["ground_truth"])["entry"]["answer"]
        return f"<answer>{answer}</answer>" if level <= self.mastered(source) else "<answer>no idea</answer>"


def _train(policy, rows: list[dict], steps: int, seed: int = 0) -> list[dict[str, float]]:
    pools = _pools(policy, rows)
    learner, rng, logs = FakeLearner(), Random(seed), []
    for _ in range(steps):
        records = []
        for index in range(8):
            source, interval = policy.draw()
            row = rng.choice(pools[(source, interval)])
            learner.seen[(source, row["extra_info"]["level"])] += 1
            for k in range(4):
                result = compute_score(source, learner.respond(row), row["reward_model"]["ground_truth"])
                records.append(Record(source, interval, result["score"], group=f"p{index}-{k}", success=result["acc"]))
        logs.append(policy.update(records))
    return logs


def test_each_level_is_one_interval(rows: list[dict]) -> None:
    policy = build_policy("reward_curriculum", GATE)
    pools = _pools(policy, rows)
    for (_source, interval), members in pools.items():
        assert {m["extra_info"]["level"] for m in members} == {interval}
    assert len(pools) == len(TASKS) * len(LEVELS)


def test_reward_gate_unlocks_each_tasks_levels_in_order_as_the_learner_masters_them(rows: list[dict]) -> None:
    policy = build_policy("reward_curriculum", GATE, seed=3)
    logs = _train(policy, rows, steps=80)
    for task in TASKS:
        newest = [log[f"sampler/newest_interval/reasoning_gym/{task}"] for log in logs]
        assert newest[0] == 0
        assert newest == sorted(newest), task
        assert newest[-1] == LEVELS[-1], task
        assert sorted(set(newest)) == list(LEVELS), task
    unlocks = policy.unlock_steps()
    assert set(unlocks) == {f"reasoning_gym/{t}" for t in TASKS}
    assert all(len(steps) == len(LEVELS) - 1 for steps in unlocks.values())


def test_a_learner_that_never_masters_a_level_stays_on_level_0(rows: list[dict]) -> None:
    policy = build_policy("reward_curriculum", GATE, seed=3)
    pools = _pools(policy, rows)
    for _ in range(20):
        records = []
        for index in range(8):
            source, interval = policy.draw()
            row = pools[(source, interval)][0]
            result = compute_score(source, "<answer>no idea</answer>", row["reward_model"]["ground_truth"])
            records.append(Record(source, interval, result["score"], group=f"p{index}", success=result["acc"]))
        log = policy.update(records)
    assert all(log[f"sampler/newest_interval/reasoning_gym/{t}"] == 0 for t in TASKS)


def test_staged_curriculum_steps_through_the_levels(rows: list[dict]) -> None:
    policy = build_policy("staged_curriculum", {"curriculum_sources": ["reasoning_gym/"], "steps_per_level": 5})
    pools = _pools(policy, rows)
    assert {interval for _source, interval in pools} == set(LEVELS)
    drawn_levels = []
    for _ in range(20):
        drawn = [policy.draw() for _ in range(8)]
        drawn_levels.append({interval for _source, interval in drawn})
        policy.update([Record(s, i, 0.0, group=f"p{k}", success=0.0) for k, (s, i) in enumerate(drawn)])
    assert [sorted(levels) for levels in drawn_levels[::5]] == [[0], [1], [2], [3]]


def test_learnability_ucb_runs_over_the_levels(rows: list[dict]) -> None:
    policy = build_policy(
        "learnability_ucb", {"difficulty_sources": ["reasoning_gym/"], "initial_fraction": 0.25, "num_intervals": 3}
    )
    logs = _train(policy, rows, steps=10)
    assert len(logs) == 10
    assert {key for key in policy.probabilities()} == {(f"reasoning_gym/{t}", lvl) for t in TASKS for lvl in LEVELS}
