"""Weighted single draws from a seeded ``random.Random``, and that RNG's state as plain Python values.

Every policy draws one pool per prompt, hundreds of times per step, so a draw must cost well under a microsecond:
plain ``random.Random`` plus a bisect over precomputed cumulative weights beats numpy, whose per-call overhead
dominates for single draws. The RNG state is stored as nested lists so that a policy's ``state_dict`` survives
``torch.save``/``torch.load(weights_only=True)`` (which accepts lists, not tuples) and JSON.
"""

from __future__ import annotations

import math
import random
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from itertools import accumulate
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class WeightedChoice(Generic[T]):
    """A fixed categorical distribution over ``items``, drawn by bisecting cumulative weights.

    Args:
        items: the outcomes, in a fixed order (the order makes draws reproducible).
        weights: one non-negative finite weight per item; they need not sum to one.

    Raises:
        ValueError: lengths differ, no items, a negative or non-finite weight, or all weights zero.
    """

    def __init__(self, items: Sequence[T], weights: Sequence[float]) -> None:
        if len(items) != len(weights):
            raise ValueError(f"{len(items)} items but {len(weights)} weights")
        if not items:
            raise ValueError("a weighted choice needs at least one item")
        for item, weight in zip(items, weights, strict=True):
            if not math.isfinite(weight) or weight < 0:
                raise ValueError(f"weight of {item!r} must be finite and >= 0, got {weight}")
        self.items: list[T] = list(items)
        self._cumulative = list(accumulate(float(w) for w in weights))
        self.total = self._cumulative[-1]
        if self.total <= 0:
            raise ValueError(f"all weights are zero for {self.items!r}")

    def draw(self, rng: random.Random) -> T:
        """Return one item with probability proportional to its weight, advancing ``rng`` by one ``random()``."""
        index = bisect_right(self._cumulative, rng.random() * self.total)
        # random() < 1 keeps the index in range except for float rounding at the very top.
        return self.items[min(index, len(self.items) - 1)]

    def probabilities(self) -> dict[T, float]:
        """Each item's probability (weight over total)."""
        previous = 0.0
        result: dict[T, float] = {}
        for item, cumulative in zip(self.items, self._cumulative, strict=True):
            result[item] = (cumulative - previous) / self.total
            previous = cumulative
        return result


def normalized(weights: Mapping[T, float]) -> dict[T, float]:
    """Scale non-negative weights to sum to one.

    Raises:
        ValueError: a negative or non-finite weight, or a zero total.
    """
    for key, weight in weights.items():
        if not math.isfinite(weight) or weight < 0:
            raise ValueError(f"weight of {key!r} must be finite and >= 0, got {weight}")
    total = sum(weights.values())
    if total <= 0:
        raise ValueError(f"weights sum to zero: {dict(weights)}")
    return {key: weight / total for key, weight in weights.items()}


def rng_state(rng: random.Random) -> list[Any]:
    """``rng.getstate()`` as nested lists of ints (plus the cached Gaussian, a float or None)."""
    version, internal, gauss = rng.getstate()
    return [version, list(internal), gauss]


def restore_rng(rng: random.Random, state: Sequence[Any]) -> None:
    """Put ``rng`` back into the state ``rng_state`` returned.

    Raises:
        ValueError: ``state`` is not a three-part RNG state.
    """
    if len(state) != 3:
        raise ValueError(f"an RNG state has 3 parts (version, internal, gauss), got {len(state)}")
    version, internal, gauss = state
    rng.setstate((int(version), tuple(int(x) for x in internal), gauss))
