"""The curriculum's unlock test: a lower confidence bound on the newest interval's success rate, over a window.

A gate that compares a point estimate (an EMA of training reward) with a threshold is a coin when the true rate is
near the threshold: a few lucky updates open the interval. The test here opens an interval only when the evidence
says the rate is above the threshold: over the last ``window`` updates, with at least ``min_responses`` responses,
the one-sided lower bound of the success rate must exceed it.

The bound is Wilson's score bound at an effective sample size ``n / deff``. Responses are not independent: the
responses to one prompt share its difficulty, so a batch of 64 prompts x 8 responses holds far less evidence than
512 independent coin flips when some prompts are always solved and others never. The design effect ``deff`` is
estimated from the prompt groups as the ratio of the cluster-robust variance of the pooled rate (between-group
spread of ``successes - p * responses``) to the binomial variance, floored at 1 so the bound never claims more
than independent responses would give. Wilson (not the normal interval) because it stays inside [0, 1] and keeps
its coverage near 0 and 1, where a curriculum's harder intervals start.

First exposure: a row drawn for the 11th time tells less about the interval than a row seen for the first time
(the model has trained on it ten times, and may have memorised it). The window therefore keeps first-exposure groups
apart, and when there are at least ``min_responses`` of them their own bound must clear the threshold too.

Each window entry is one update's prompt groups of the gated records, ``[successes, responses, first]`` per group,
all plain values, so the window is part of the saved state. Every update in the window weighs by its responses
(no EMA, hence no first-step weight and no bias correction needed).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

from samplers.base import Record

GroupTally = list[Any]
"""``[successes, responses, first_exposure]`` of one prompt group within one update."""


def wilson_lower(successes: float, n: float, confidence: float) -> float:
    """One-sided Wilson score lower bound of a binomial rate.

    Args:
        successes: successes (may be fractional for an effective sample).
        n: trials (> 0; may be fractional).
        confidence: one-sided level in (0.5, 1).

    Returns:
        The lower bound in [0, 1]; 0 when ``n`` is 0.
    """
    if n <= 0:
        return 0.0
    z = NormalDist().inv_cdf(confidence)
    p = min(max(successes / n, 0.0), 1.0)
    denominator = 1 + z * z / n
    centre = p + z * z / (2 * n)
    spread = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, (centre - spread) / denominator)


def design_effect(groups: Sequence[Sequence[float]]) -> float:
    """Variance inflation of the pooled success rate from responses clustered in prompt groups (>= 1).

    Args:
        groups: ``(successes, responses)`` per prompt group.

    Returns:
        Cluster-robust variance / binomial variance, at least 1; 1 with fewer than two groups or a rate of 0 or 1.
    """
    count = len(groups)
    total = sum(float(g[1]) for g in groups)
    if count < 2 or total <= 0:
        return 1.0
    p = sum(float(g[0]) for g in groups) / total
    binomial = p * (1 - p) / total
    if binomial <= 0:
        return 1.0
    robust = count / (count - 1) * sum((float(g[0]) - p * float(g[1])) ** 2 for g in groups) / (total * total)
    return max(1.0, robust / binomial)


@dataclass(frozen=True)
class GateEvidence:
    """What a gate test saw: the window's responses, their mean success, the bound (the smaller of the all-responses
    and first-exposure bounds), the design effect of all responses, and whether the first-exposure bound was used."""

    responses: int
    mean: float
    bound: float
    design_effect: float
    first_only: bool

    def metrics(self, source: str) -> dict[str, float]:
        """``sampler/gate_{responses,mean,bound,design_effect,first_only}/<source>``."""
        return {
            f"sampler/gate_responses/{source}": float(self.responses),
            f"sampler/gate_mean/{source}": self.mean,
            f"sampler/gate_bound/{source}": self.bound,
            f"sampler/gate_design_effect/{source}": self.design_effect,
            f"sampler/gate_first_only/{source}": float(self.first_only),
        }


def evidence(window: Iterable[Sequence[GroupTally]], min_responses: int, confidence: float) -> GateEvidence | None:
    """The gate's evidence over a window of updates; None when there are no responses at all.

    The bound is the smaller of the bound on all responses and, when first-exposure responses number at least
    ``min_responses``, the bound on those alone: both must clear the threshold. Testing on whichever set looks
    better would be a second look at the same data, and a first-exposure subset of a few hundred responses tested
    every few updates opens a gate on noise within a few hundred updates.
    """
    groups = [group for update in window for group in update]
    n = sum(group[1] for group in groups)
    if n <= 0:
        return None
    successes = sum(group[0] for group in groups)
    deff = design_effect(groups)
    bound = wilson_lower(successes / deff, n / deff, confidence)
    first = [group for group in groups if group[2]]
    first_used = sum(group[1] for group in first) >= min_responses
    if first_used:
        first_n = sum(group[1] for group in first)
        first_deff = design_effect(first)
        first_bound = wilson_lower(sum(group[0] for group in first) / first_deff, first_n / first_deff, confidence)
        bound = min(bound, first_bound)
    return GateEvidence(int(n), successes / n, bound, deff, first_used)


def tally_groups(records: Iterable[Record]) -> list[GroupTally]:
    """One update's records with a success indicator, summed per prompt group (``Record.group``; records without
    a group each form their own). A group is first-exposure when its records say the row had not been drawn
    before (``Record.exposure == 0``)."""
    tallies: dict[str, GroupTally] = {}
    for index, record in enumerate(records):
        if record.success is None or not math.isfinite(record.success):
            continue
        key = record.group or f"#{index}"
        tally = tallies.get(key)
        if tally is None:
            tally = tallies[key] = [0.0, 0, record.exposure == 0]
        tally[0] += min(max(float(record.success), 0.0), 1.0)
        tally[1] += 1
    return list(tallies.values())


def load_window(saved: Iterable[Iterable[Sequence[Any]]]) -> list[list[GroupTally]]:
    """A saved window as plain lists (``[[successes, responses, first], ...]`` per update)."""
    return [[[float(g[0]), int(g[1]), bool(g[2])] for g in update] for update in saved]


def window_state(window: Iterable[Sequence[GroupTally]]) -> list[list[GroupTally]]:
    """The window as plain values for ``state_dict``."""
    return [[[float(g[0]), int(g[1]), bool(g[2])] for g in update] for update in window]


def check_gate_params(params: Mapping[str, Any]) -> None:
    """Validate ``gate_window``, ``gate_min_responses`` and ``gate_confidence``.

    Raises:
        ValueError: naming the parameter.
    """
    window, minimum, confidence = params["gate_window"], params["gate_min_responses"], params["gate_confidence"]
    if isinstance(window, bool) or not isinstance(window, int) or window < 1:
        raise ValueError(f"gate_window must be an int >= 1, got {window!r}")
    if isinstance(minimum, bool) or not isinstance(minimum, int) or minimum < 1:
        raise ValueError(f"gate_min_responses must be an int >= 1, got {minimum!r}")
    if not 0.5 < float(confidence) < 1.0:
        raise ValueError(f"gate_confidence must be in (0.5, 1), got {confidence!r}")
