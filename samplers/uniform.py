"""Uniform policy: every non-empty pool is equally likely. The baseline, and the simplest policy to test hooks with."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from samplers.base import Pool, Record, SamplingPolicy
from samplers.draw_counts import DrawCounts
from samplers.drawing import restore_rng, rng_state


class UniformPolicy(SamplingPolicy):
    """Draws each (source, interval) pool with equal probability.

    Args:
        seed: seed of the policy's RNG.
    """

    name = "uniform"

    def __init__(self, seed: int = 0) -> None:
        super().__init__()
        self._rng = random.Random(seed)
        self._pools: list[Pool] = []
        self._draws = DrawCounts([])

    def set_pools(self, pool_sizes: Mapping[Pool, int]) -> None:
        if not pool_sizes:
            raise ValueError("uniform policy needs at least one non-empty pool")
        self._pools = sorted(pool_sizes)
        self._draws = DrawCounts(self._pools)

    def draw(self) -> Pool:
        pool = self._pools[self._rng.randrange(len(self._pools))]
        self._draws.add(pool)
        return pool

    def probabilities(self) -> dict[Pool, float]:
        return dict.fromkeys(self._pools, 1.0 / len(self._pools))

    def update(self, records: Sequence[Record]) -> dict[str, float]:
        return self._draws.metrics()

    def state_dict(self) -> dict[str, Any]:
        return {"rng": rng_state(self._rng), "draws": self._draws.state()}

    def load_state_dict(self, state: Mapping[str, Any], changed: frozenset[str] = frozenset()) -> None:
        restore_rng(self._rng, state["rng"])
        self._draws.load(state["draws"], changed)
