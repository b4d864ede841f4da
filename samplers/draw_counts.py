"""Cumulative draws per pool: the ``sampler/draws/<source>/<interval>`` metrics and their part of a policy's state.

Saving the counts with the policy keeps the metric curves continuous across a resume, and comparing the saved
pools with the current ones catches a resume onto different data (which would otherwise continue silently with
mismatched weights).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from samplers.base import Pool


class DrawCounts:
    """How often each pool has been drawn since training started.

    Args:
        pools: every pool the policy may draw.
    """

    def __init__(self, pools: Iterable[Pool]) -> None:
        self.counts: dict[Pool, int] = dict.fromkeys(sorted(pools), 0)

    def add(self, pool: Pool) -> None:
        """Count one draw of ``pool``."""
        self.counts[pool] += 1

    def metrics(self) -> dict[str, float]:
        """``sampler/draws/<source>/<interval>`` for every pool."""
        return {f"sampler/draws/{source}/{interval}": float(n) for (source, interval), n in self.counts.items()}

    def state(self) -> list[list[Any]]:
        """The counts as ``[[source, interval, count], ...]`` in pool order."""
        return [[source, interval, n] for (source, interval), n in self.counts.items()]

    def load(self, state: Sequence[Sequence[Any]]) -> None:
        """Restore counts saved by ``state``.

        Raises:
            ValueError: the saved pools differ from the current ones (resuming onto different data).
        """
        saved = {(str(source), int(interval)): int(n) for source, interval, n in state}
        if set(saved) != set(self.counts):
            raise ValueError(
                f"saved sampler state is for pools {sorted(saved)}, but the data now has pools {sorted(self.counts)}"
            )
        self.counts = {pool: saved[pool] for pool in self.counts}
