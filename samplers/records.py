"""One pass over a step's records: rewards grouped by pool, with unusable records counted rather than raised.

Records come from the training loop after scoring. A record whose pool the policy does not know (a source that
was not in the training data) or whose reward is not finite cannot teach a policy anything; raising would stop a
multi-day run over a logging detail, so such records are dropped and counted in ``sampler/ignored_records``.
"""

from __future__ import annotations

import math
from collections.abc import Container, Mapping, Sequence

from samplers.base import Pool, Record


def rewards_by_pool(records: Sequence[Record], pools: Container[Pool]) -> tuple[dict[Pool, list[float]], int]:
    """Group the rewards of ``records`` by (source, interval), keeping only known pools and finite rewards.

    Args:
        records: one step's scored responses.
        pools: the pools the policy knows.

    Returns:
        Rewards per pool (only pools with at least one record), and how many records were dropped.
    """
    grouped: dict[Pool, list[float]] = {}
    ignored = 0
    for record in records:
        pool = (record.source, record.interval)
        rewards = grouped.get(pool)
        if rewards is None:
            if pool not in pools:
                ignored += 1
                continue
            rewards = grouped[pool] = []
        rewards.append(record.reward)
    for pool, rewards in list(grouped.items()):
        # One sum per pool instead of a finiteness test per record keeps the common case fast.
        if not math.isfinite(sum(rewards)):
            kept = [reward for reward in rewards if math.isfinite(reward)]
            ignored += len(rewards) - len(kept)
            if kept:
                grouped[pool] = kept
            else:
                del grouped[pool]
    return grouped, ignored


def sums_by_source(grouped: Mapping[Pool, Sequence[float]]) -> dict[str, tuple[float, int]]:
    """Sum and count of rewards per source over all its pools."""
    sums: dict[str, tuple[float, int]] = {}
    for (source, _interval), rewards in grouped.items():
        total, count = sums.get(source, (0.0, 0))
        sums[source] = (total + sum(rewards), count + len(rewards))
    return sums
