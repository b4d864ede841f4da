"""Shared builders for the sampler tests (a unique module name, since test dirs are not packages)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from samplers import Record, SamplingPolicy, build_policy


def prepare(
    name: str, params: Mapping[str, Any] | None = None, seed: int = 0, rows: Mapping[str, int] | None = None
) -> SamplingPolicy:
    """Build ``name`` and give it pools from ``rows`` per source (difficulty = row number; a policy that reads
    ``extra_info.level`` gets four equal levels)."""
    policy = build_policy(name, params, seed=seed)
    sizes: dict[tuple[str, int], int] = {}
    for source, count in (rows or {"iftrain": 100, "logicif": 100}).items():
        if policy.difficulty_field == "level":
            values = [i * 4 // count for i in range(count)]
        else:
            values = [float(i) for i in range(count)]
        for interval in policy.assign_intervals(source, values):
            sizes[(source, interval)] = sizes.get((source, interval), 0) + 1
    policy.set_pools(sizes)
    return policy


def step_records(pools: list[tuple[str, int]], reward: Callable[[str, int, int], float], n: int = 4) -> list[Record]:
    """``n`` responses per drawn pool; ``reward(source, interval, k)`` scores response k and is also its success
    indicator (what curriculum gates read)."""
    return [
        Record(source, interval, reward(source, interval, k), group=f"p{index}", success=reward(source, interval, k))
        for index, (source, interval) in enumerate(pools)
        for k in range(n)
    ]
