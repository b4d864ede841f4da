"""A fingerprint of each source's rows and split, saved with the sampler state, so a resume onto other data stops.

A policy's learned state (unlocked curriculum intervals, gate EMAs, draw counts) means something only for the rows it
was learned on: "LogicIF interval 6 unlocked" after the LogicIF rows doubled, or after their difficulties were
reversed, is a different set of prompts. The pool names alone cannot tell (recomputed intervals keep their
numbers), so each source's fingerprint holds its row count, each interval's rows and difficulty range (the cut
points), and a digest of which row went to which interval (catching reordered or re-scored rows with the same
counts). A mismatch is an error naming the source and what changed; ``on_data_change="resplit"`` (the data
setting ``data.rlif_sampler.on_data_change``) instead keeps the new split and restarts the changed sources' per-pool
state.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

ON_DATA_CHANGE = ("error", "resplit")
"""What a resume does when the data differs from the save: stop with an error (default), or re-split and go on."""

SETTING = "data.rlif_sampler.on_data_change"
"""The setting a user changes to accept changed data (named in the error)."""


def source_fingerprint(difficulties: Sequence[Any], intervals: Sequence[int], cut: str = "row") -> dict[str, Any]:
    """Rows, per-interval rows and difficulty range, a digest of the row-to-interval assignment, and the cut.

    Args:
        difficulties: each row's difficulty (numbers; the split's input).
        intervals: each row's interval (the split's output).
        cut: ``row`` (rows cut one by one) or ``function`` (a function's rows kept in one interval).

    Returns:
        Plain values: ``{"rows": n, "intervals": [[interval, rows, lowest, highest], ...], "digest": hex,
        "cut": cut}``.
    """
    ranges: dict[int, list[float]] = {}
    for value, interval in zip(difficulties, intervals, strict=True):
        number = float(value)
        found = ranges.get(interval)
        if found is None:
            ranges[interval] = [1, number, number]
        else:
            found[0] += 1
            found[1] = min(found[1], number)
            found[2] = max(found[2], number)
    digest = hashlib.sha256(",".join(map(str, intervals)).encode()).hexdigest()[:16]
    return {
        "rows": len(intervals),
        "intervals": [[interval, int(n), low, high] for interval, (n, low, high) in sorted(ranges.items())],
        "digest": digest,
        "cut": cut,
    }


def describe_change(saved: Mapping[str, Any], current: Mapping[str, Any]) -> str | None:
    """What differs between two fingerprints of one source, in words; None when they are equal.

    A fingerprint saved before intervals could be cut on whole functions has no ``cut`` and was cut on rows.
    """
    old_cut, new_cut = saved.get("cut", "row"), current.get("cut", "row")
    if old_cut != new_cut:
        return (
            f"intervals were cut on {old_cut}s when saved and are cut on {new_cut}s now (a function's test cases "
            "stay in one interval), so the saved unlocks name other rows"
        )
    if int(saved["rows"]) != int(current["rows"]):
        return f"rows {saved['rows']} -> {current['rows']}"
    old = {int(i): (int(n), float(lo), float(hi)) for i, n, lo, hi in saved["intervals"]}
    new = {int(i): (int(n), float(lo), float(hi)) for i, n, lo, hi in current["intervals"]}
    if set(old) != set(new):
        return f"intervals {sorted(old)} -> {sorted(new)}"
    for interval in sorted(old):
        (n0, lo0, hi0), (n1, lo1, hi1) = old[interval], new[interval]
        if n0 != n1:
            return f"interval {interval} rows {n0} -> {n1}"
        if (lo0, hi0) != (lo1, hi1):
            return f"interval {interval} difficulty range [{lo0:g}, {hi0:g}] -> [{lo1:g}, {hi1:g}] (cut points moved)"
    if saved["digest"] != current["digest"]:
        return "same counts and cut points, but rows moved between intervals (reordered or re-scored rows)"
    return None


def data_changes(saved: Mapping[str, Any], current: Mapping[str, Any]) -> dict[str, str]:
    """Per source whose data differs: what changed (added and removed sources included)."""
    changes: dict[str, str] = {}
    for source in sorted(set(saved) | set(current)):
        if source not in current:
            changes[source] = "no longer in the training data"
        elif source not in saved:
            changes[source] = "new in the training data"
        else:
            what = describe_change(saved[source], current[source])
            if what is not None:
                changes[source] = what
    return changes


def check_data_unchanged(
    checkpoint: Mapping[str, Any], current: Mapping[str, Any], on_data_change: str = "error"
) -> dict[str, str]:
    """Compare a saved checkpoint's fingerprint with the current data's.

    Args:
        checkpoint: what ``SamplingPolicy.checkpoint`` returned at save time.
        current: the current ``SamplingPolicy.fingerprint()``.
        on_data_change: ``error`` or ``resplit``.

    Returns:
        The changed sources and what changed (empty when the data is the same, or ``resplit`` accepted it).

    Raises:
        ValueError: an unknown ``on_data_change``, a checkpoint without a fingerprint, or changed data under
            ``error``.
    """
    if on_data_change not in ON_DATA_CHANGE:
        raise ValueError(f"{SETTING} must be one of {list(ON_DATA_CHANGE)}, got {on_data_change!r}")
    if not isinstance(checkpoint, Mapping) or "fingerprint" not in checkpoint or "state" not in checkpoint:
        raise ValueError(
            "saved sampler state has no data fingerprint (saved by an older rlif), so a resume cannot tell whether "
            f"the data changed; set {SETTING}=resplit to re-split the data and continue"
        )
    changes = data_changes(checkpoint["fingerprint"], current)
    if changes and on_data_change == "error":
        listed = "; ".join(f"pool {source!r}: {what}" for source, what in changes.items())
        raise ValueError(
            f"the training data changed since the sampler state was saved ({listed}); the saved curriculum unlocks "
            f"and weights describe other rows. Restore the data, or set {SETTING}=resplit to re-split it and continue"
        )
    return changes
