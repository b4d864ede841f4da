"""Difficulty intervals: an easiest initial share of a source, then N equal-count intervals of rising difficulty.

This is how the reward-gated curriculum (and the learnability bandit) see one source's rows: interval 0 holds the
easiest ``initial_fraction`` of rows, and the rest are cut into ``num_intervals`` intervals of (nearly) equal row
count, interval 1 the easiest of them. The cut points follow the reference RL repo's ``RewardCurriculumSampler``
(``int(n * fraction)`` for the initial cut, ``int(k * m / N)`` inside the rest), so the same data gives the same
buckets. Rows with equal difficulty keep their row order (a stable sort), so ties may straddle a cut, as in the
reference.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def split_by_difficulty(
    source: str, difficulties: Sequence[float], initial_fraction: float, num_intervals: int
) -> list[int]:
    """Assign each row an interval: 0 for the easiest ``initial_fraction``, then 1..``num_intervals`` by difficulty.

    Args:
        source: the rows' ``data_source``, named in error messages.
        difficulties: ``extra_info.difficulty`` of each row, in row order (higher is harder).
        initial_fraction: share of rows, in [0, 1), that forms interval 0; 0 leaves interval 0 empty.
        num_intervals: number of equal-count intervals after the initial one (>= 1).

    Returns:
        The interval of each row, in row order. Intervals may be empty when there are fewer rows than intervals.

    Raises:
        ValueError: a difficulty that is missing, not a number, or not finite (naming source, row and field), or
            a bad ``initial_fraction``/``num_intervals``.
    """
    check_interval_shape(initial_fraction, num_intervals)
    for row, value in enumerate(difficulties):
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise ValueError(
                f"source {source!r} row {row}: field extra_info.difficulty must be a finite number, got {value!r}"
            )
    total = len(difficulties)
    order = sorted(range(total), key=lambda row: difficulties[row])
    initial_count = int(total * initial_fraction)
    rest = total - initial_count
    intervals = [0] * total
    # Rank r of the rest falls in interval k when int((k-1)*rest/N) <= r < int(k*rest/N).
    ends = [int(k * rest / num_intervals) for k in range(1, num_intervals + 1)]
    interval = 1
    for rank, row in enumerate(order[initial_count:]):
        while rank >= ends[interval - 1]:
            interval += 1
        intervals[row] = interval
    return intervals


def split_functions_by_difficulty(
    source: str,
    difficulties: Sequence[float],
    functions: Sequence[object],
    initial_fraction: float,
    num_intervals: int,
) -> list[int]:
    """Like ``split_by_difficulty``, but every row of one function lands in the same interval.

    LogicIF's difficulty is a property of the function (its complexity score), and each function has several test
    cases (rows). Cutting rows lets one function's cases straddle two intervals, so "interval k is learned" would be
    partly measured on a function the model also sees in interval k-1. Here functions are ordered by their mean
    difficulty (ties by first row), and a function takes the interval that the middle of its rows would get in the
    row cut; interval sizes stay near-equal in rows, within one function's size.

    Args:
        source: the rows' ``data_source``, named in error messages.
        difficulties: each row's difficulty (higher is harder).
        functions: each row's function id (``extra_info.task_id``); a row with None is a function of its own.
        initial_fraction: share of rows, in [0, 1), that forms interval 0.
        num_intervals: number of intervals after the initial one (>= 1).

    Returns:
        The interval of each row, in row order.

    Raises:
        ValueError: as ``split_by_difficulty``, or ``functions`` of another length.
    """
    split_by_difficulty(source, difficulties, initial_fraction, num_intervals)  # validates the values
    if len(functions) != len(difficulties):
        raise ValueError(f"source {source!r}: {len(functions)} function ids for {len(difficulties)} rows")
    members: dict[object, list[int]] = {}
    for row, function in enumerate(functions):
        members.setdefault(("row", row) if function is None else ("function", str(function)), []).append(row)
    order = sorted(members.values(), key=lambda rows: (sum(float(difficulties[r]) for r in rows) / len(rows), rows[0]))
    total = len(difficulties)
    initial_count = int(total * initial_fraction)
    rest = total - initial_count
    ends = [int(k * rest / num_intervals) for k in range(1, num_intervals + 1)]
    intervals = [0] * total
    before = 0
    for rows in order:
        middle = before + (len(rows) - 1) / 2
        before += len(rows)
        if middle < initial_count:
            interval = 0
        else:
            rank = middle - initial_count
            interval = next((k + 1 for k, end in enumerate(ends) if rank < end), num_intervals)
        for row in rows:
            intervals[row] = interval
    return intervals


def check_interval_shape(initial_fraction: float, num_intervals: int) -> None:
    """Validate the two interval parameters.

    Raises:
        ValueError: ``initial_fraction`` outside [0, 1) or ``num_intervals`` < 1.
    """
    if not 0.0 <= initial_fraction < 1.0:
        raise ValueError(f"initial_fraction must be in [0, 1), got {initial_fraction}")
    if isinstance(num_intervals, bool) or not isinstance(num_intervals, int) or num_intervals < 1:
        raise ValueError(f"num_intervals must be an int >= 1, got {num_intervals!r}")


def matches_sources(source: str, patterns: Sequence[str]) -> bool:
    """Whether ``source`` is named by ``patterns``: an exact name, or a prefix ending in ``/`` (``graph/``)."""
    return any(source == pattern or (pattern.endswith("/") and source.startswith(pattern)) for pattern in patterns)
