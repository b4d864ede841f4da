"""Draws per pool: the ``sampler/draws/...`` metrics and their part of a policy's state.

Saving the counts with the policy keeps the metric curves continuous across a resume, and comparing the saved
pools with the current ones catches a resume onto different data (which would otherwise continue silently with
mismatched weights).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import Any

from samplers.base import Pool


class DrawCounts:
    """How often each pool has been drawn since training started, and since the last update.

    Args:
        pools: every pool the policy may draw.
    """

    def __init__(self, pools: Iterable[Pool]) -> None:
        self.counts: dict[Pool, int] = dict.fromkeys(sorted(pools), 0)
        self.recent: dict[Pool, int] = dict.fromkeys(self.counts, 0)

    def add(self, pool: Pool) -> None:
        """Count one draw of ``pool``."""
        self.counts[pool] += 1
        self.recent[pool] += 1

    def metrics(self) -> dict[str, float]:
        """``sampler/draws/<source>/<interval>`` (cumulative) and ``sampler/step_draws/<source>/<interval>``
        (since the previous call) for every pool; the step counts restart."""
        metrics = {f"sampler/draws/{source}/{interval}": float(n) for (source, interval), n in self.counts.items()}
        for (source, interval), n in self.recent.items():
            metrics[f"sampler/step_draws/{source}/{interval}"] = float(n)
        self.recent = dict.fromkeys(self.counts, 0)
        return metrics

    def state(self) -> list[list[Any]]:
        """The counts as ``[[source, interval, count, since the last update], ...]`` in pool order."""
        return [[source, interval, n, self.recent[(source, interval)]] for (source, interval), n in self.counts.items()]

    def load(self, state: Sequence[Sequence[Any]], changed: Collection[str] = ()) -> None:
        """Restore counts saved by ``state``; pools of ``changed`` sources start from zero.

        Raises:
            ValueError: the saved pools of an unchanged source differ from the current ones (resuming onto
                different data).
        """
        saved = {(str(row[0]), int(row[1])): (int(row[2]), int(row[3]) if len(row) > 3 else 0) for row in state}
        kept = {pool for pool in self.counts if pool[0] not in changed}
        saved_kept = {pool for pool in saved if pool[0] not in changed}
        if kept != saved_kept:
            raise ValueError(
                f"saved sampler state is for pools {sorted(saved)}, but the data now has pools {sorted(self.counts)}"
            )
        self.counts = {pool: saved[pool][0] if pool in kept else 0 for pool in self.counts}
        self.recent = {pool: saved[pool][1] if pool in kept else 0 for pool in self.counts}
