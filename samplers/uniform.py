"""Uniform policy: every non-empty pool is equally likely. The baseline and the spine's test policy."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from samplers.base import Pool, Record, SamplingPolicy
from samplers.registry import register_policy


@register_policy("uniform")
class UniformPolicy(SamplingPolicy):
    """Draws each (source, interval) pool with equal probability.

    Args:
        seed: seed of the policy's RNG.
    """

    def __init__(self, seed: int = 0) -> None:
        self._rng = random.Random(seed)
        self._pools: list[Pool] = []
        self._draws: dict[Pool, int] = {}

    def set_pools(self, pool_sizes: Mapping[Pool, int]) -> None:
        if not pool_sizes:
            raise ValueError("uniform policy needs at least one non-empty pool")
        self._pools = sorted(pool_sizes)
        self._draws = dict.fromkeys(self._pools, 0)

    def draw(self) -> Pool:
        pool = self._pools[self._rng.randrange(len(self._pools))]
        self._draws[pool] += 1
        return pool

    def update(self, records: Sequence[Record]) -> dict[str, float]:
        metrics: dict[str, float] = {}
        for (source, interval), count in self._draws.items():
            metrics[f"sampler/draws/{source}/{interval}"] = float(count)
        return metrics

    def state_dict(self) -> dict[str, Any]:
        return {"rng": _rng_state(self._rng), "draws": [[s, i, n] for (s, i), n in self._draws.items()]}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self._rng.setstate(_rng_from_state(state["rng"]))
        self._draws = {(s, int(i)): int(n) for s, i, n in state["draws"]}


def _rng_state(rng: random.Random) -> list[Any]:
    """``random.Random.getstate()`` as nested lists (torch.load(weights_only=True) accepts lists, not tuples)."""
    version, internal, gauss = rng.getstate()
    return [version, list(internal), gauss]


def _rng_from_state(state: Sequence[Any]) -> tuple[Any, ...]:
    version, internal, gauss = state
    return (version, tuple(internal), gauss)
