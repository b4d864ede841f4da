"""Configuration checks that turn silent failures into errors, warnings and metrics.

Each guards a way a sampling run can look healthy while measuring something else:

- ``check_patterns_match``: a curriculum source that matches no ``data_source`` (a typo, or data without LogicIF)
  would train as a plain source mix without a word; it is an error at load time.
- ``PoolSizeWatch``: a pool drawn more often per batch than it has rows repeats prompts within the batch (a 5-row
  pool at a quarter of a 128-prompt batch gives each prompt about six copies); warned once per pool, with the
  numbers.
- ``RewardHealth``: a source whose rewards are all non-finite (a broken scorer) gives the policy nothing, so an EMA
  rule freezes at its prior; a metric shows the non-finite share every step, and a warning is logged once when a
  source has had only non-finite rewards for ``nan_updates`` updates in a row.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence

from samplers.base import Pool, Record
from samplers.intervals import matches_sources

LOG = logging.getLogger("rlif.samplers")

NAN_UPDATES = 5
"""Consecutive updates with only non-finite rewards from a source before the one warning."""


def check_patterns_match(setting: str, patterns: Sequence[str], sources: Sequence[str]) -> None:
    """Raise unless every entry of ``patterns`` (exact names or ``prefix/``) names a source of the data.

    Raises:
        ValueError: naming the setting, the entry and the sources the data has.
    """
    for pattern in patterns:
        if not any(matches_sources(source, [pattern]) for source in sources):
            raise ValueError(
                f"{setting}: {pattern!r} matches no data_source in the training data (sources: {sorted(sources)}); "
                "the run would train without it silently"
            )


def oversubscribed_pools(
    probabilities: Mapping[Pool, float], rows: Mapping[Pool, int], batch_size: int
) -> list[tuple[Pool, float, int]]:
    """Pools expected to be drawn more times per batch than they have rows.

    Returns:
        ``(pool, expected draws per batch, rows)`` for each such pool, in pool order.
    """
    found = []
    for pool, probability in sorted(probabilities.items()):
        expected = probability * batch_size
        if expected > rows.get(pool, 0) and probability > 0:
            found.append((pool, expected, rows.get(pool, 0)))
    return found


class PoolSizeWatch:
    """Warns once per pool whose expected draws per batch exceed its rows.

    Args:
        rows: rows per pool.
        batch_size: prompts per training batch (``data.train_batch_size``).
    """

    def __init__(self, rows: Mapping[Pool, int], batch_size: int) -> None:
        self.rows = dict(rows)
        self.batch_size = int(batch_size)
        self.warned: set[Pool] = set()

    def check(self, probabilities: Mapping[Pool, float]) -> list[str]:
        """Warn about newly oversubscribed pools; returns the messages logged this call."""
        messages = []
        for pool, expected, rows in oversubscribed_pools(probabilities, self.rows, self.batch_size):
            if pool in self.warned:
                continue
            self.warned.add(pool)
            message = (
                f"sampler pool {pool[0]!r} interval {pool[1]} has {rows} rows but is drawn {expected:.1f} times per "
                f"batch of {self.batch_size} (probability {expected / self.batch_size:.3f}): its prompts repeat "
                "within a batch; add rows, lower its weight, or use fewer intervals"
            )
            LOG.warning(message)
            messages.append(message)
        return messages


class RewardHealth:
    """Per source, the share of non-finite rewards each step, and one warning for a source that only has them.

    Args:
        nan_updates: consecutive updates with only non-finite rewards before the warning.
    """

    def __init__(self, nan_updates: int = NAN_UPDATES) -> None:
        if nan_updates < 1:
            raise ValueError(f"nan_updates must be >= 1, got {nan_updates}")
        self.nan_updates = nan_updates
        self.streak: dict[str, int] = {}
        self.warned: set[str] = set()

    def observe(self, records: Sequence[Record]) -> dict[str, float]:
        """Count one step's records; return ``sampler/nonfinite_reward_share/<source>`` per source seen."""
        totals: dict[str, list[int]] = {}
        for record in records:
            entry = totals.setdefault(record.source, [0, 0])
            entry[0] += 1
            entry[1] += not math.isfinite(record.reward)
        metrics = {}
        for source, (count, bad) in sorted(totals.items()):
            metrics[f"sampler/nonfinite_reward_share/{source}"] = bad / count
            self.streak[source] = self.streak.get(source, 0) + 1 if bad == count else 0
            if self.streak[source] >= self.nan_updates and source not in self.warned:
                self.warned.add(source)
                LOG.warning(
                    "data_source %r has had only non-finite (NaN/inf) rewards for %d updates: the sampler ignores "
                    "them, so its weights and gates for this source are frozen; check the reward function",
                    source,
                    self.streak[source],
                )
        return metrics
