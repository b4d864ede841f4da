"""Every policy: state_dict is plain Python, and a restored policy continues with identical draws and metrics."""

from __future__ import annotations

import io
import json
import pickle
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from samplers_testkit import prepare

import samplers
from samplers import Record, SamplingPolicy, build_policy, policy_names
from samplers.registry import POLICIES, POLICY_CLASSES

CONFIGS: list[tuple[str, dict[str, Any]]] = [
    ("uniform", {}),
    ("fixed_ratio", {"weights": {"iftrain": 2.0, "logicif": 1.0}}),
    ("ema_reweight", {"alpha": 0.3}),
    ("reward_curriculum", {"min_updates_per_unlock": 1, "check_every": 1, "threshold": 0.3}),
    (
        "reward_curriculum",
        {"source_weighting": "ema", "interval_decay": 0.5, "min_updates_per_unlock": 2, "threshold": 0.3},
    ),
    ("learnability_ucb", {"window": 20}),
    ("staged_curriculum", {"curriculum_sources": ["logicif"], "steps_per_level": 3}),
    (
        "fixed_ratio",
        {"weights": {"IF": 1.0, "rest": 3.0}, "groups": {"IF": ["iftrain", "ifeval"], "rest": ["logicif", "graph/"]}},
    ),
]


def test_every_registered_policy_is_covered() -> None:
    assert {name for name, _ in CONFIGS} == set(policy_names())


def test_registry_names_are_unique_and_match_each_class() -> None:
    assert len(POLICIES) == len(POLICY_CLASSES)
    assert all(name and POLICIES[name].name == name for name in POLICIES)


def test_policy_modules_do_not_import_the_registry() -> None:
    """The registry imports the policies, never the reverse, so importing any policy module first works."""
    for path in Path(samplers.__file__).parent.glob("*.py"):
        if path.name not in ("registry.py", "__init__.py"):
            assert "samplers.registry" not in path.read_text(encoding="utf-8"), path.name


def _run_step(policy: SamplingPolicy, rng: random.Random, prompts: int = 12) -> tuple[list, dict[str, float]]:
    """Draw ``prompts`` pools, score 4 responses each with a reward that falls with the interval, update."""
    pools = [policy.draw() for _ in range(prompts)]
    records = [
        Record(source, interval, float(rng.random() < 0.9 - 0.15 * interval), group=f"g{i}")
        for i, (source, interval) in enumerate(pools)
        for _ in range(4)
    ]
    return pools, policy.update(records)


def _assert_plain(value: Any, where: str = "state") -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            assert isinstance(key, str), f"{where}: key {key!r} is not a str"
            _assert_plain(item, f"{where}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _assert_plain(item, f"{where}[{index}]")
    else:
        assert value is None or type(value) in (str, int, float, bool), f"{where}: {type(value).__name__}"


@settings(max_examples=12, deadline=None)
@given(config=st.sampled_from(CONFIGS), seed=st.integers(0, 2**16), steps=st.integers(0, 12))
def test_resume_continues_identically(config: tuple[str, dict[str, Any]], seed: int, steps: int) -> None:
    name, params = config
    original = prepare(name, params, seed=seed)
    rewards = random.Random(seed + 1)
    for _ in range(steps):
        _run_step(original, rewards)
    state = original.state_dict()
    _assert_plain(state)
    restored = prepare(name, params, seed=seed + 99)  # a different seed: everything must come from the state
    restored.load_state_dict(json.loads(json.dumps(state)))
    twin_rewards = random.Random(seed + 2)
    rewards = random.Random(seed + 2)
    for _ in range(4):
        assert _run_step(restored, twin_rewards) == _run_step(original, rewards)


@pytest.mark.parametrize(("name", "params"), CONFIGS)
def test_state_survives_pickle_and_torch_weights_only(name: str, params: dict[str, Any]) -> None:
    policy = prepare(name, params)
    for _ in range(5):
        _run_step(policy, random.Random(3))
    state = policy.state_dict()
    assert pickle.loads(pickle.dumps(state)) == state
    torch = pytest.importorskip("torch")
    buffer = io.BytesIO()
    torch.save(state, buffer)
    buffer.seek(0)
    assert torch.load(buffer, weights_only=True) == state


@pytest.mark.parametrize(("name", "params"), CONFIGS)
def test_resume_onto_different_pools_is_refused(name: str, params: dict[str, Any]) -> None:
    params = {key: value for key, value in params.items() if key != "weights"}  # weights name the sources
    state = prepare(name, params).state_dict()
    other = prepare(name, params, rows={"iftrain": 100, "logicif": 100, "graph/tsp": 10})
    with pytest.raises(ValueError):
        other.load_state_dict(state)


@pytest.mark.parametrize(("name", "params"), CONFIGS)
def test_empty_pools_fail_clearly(name: str, params: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="at least one non-empty pool"):
        build_policy(name, params).set_pools({})


def test_unknown_policy_and_parameters_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown sampling policy"):
        build_policy("curriculum")
    with pytest.raises(ValueError, match="bad parameters"):
        build_policy("fixed_ratio", {"weight": {"a": 1}})
