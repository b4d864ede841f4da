"""Uncertainty of evaluation metrics: a bootstrap over prompts, and the paired difference of two evaluations.

An evaluation's prompts are the sampling unit: a benchmark is a sample of prompts, and several responses to one
prompt are not independent evidence. So every interval here resamples whole units (prompts, or the function a
LogicIF case belongs to) with replacement and keeps each unit's samples together (a cluster bootstrap: samples
nested in prompts); resampling the samples themselves would shrink the interval by the within-prompt correlation.

Every metric is written as a ratio of sums over units, ``sum(numerator) / sum(denominator)``:

- a prompt-level rate (IFEval prompt-level strict, a mean per prompt over its samples): numerator the prompt's
  mean, denominator 1, so prompts weigh equally whatever their sample count;
- a micro average (IFEval instruction-level: followed over all instructions): numerator the instructions followed,
  denominator the instructions checked;
- pass@k: numerator the prompt's unbiased pass@k estimate, denominator 1.

The interval is the percentile bootstrap's (``resamples`` draws, default 2,000, fixed seed so a file is
reproducible). Its coverage is checked by simulation in ``tests/eval/test_eval_intervals.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

import numpy as np

LEVEL = 0.95
"""Confidence level of every interval rlif reports."""

RESAMPLES = 2000
"""Bootstrap resamples per interval: the percentile's Monte Carlo error is well under the interval's width."""


@dataclass(frozen=True)
class Interval:
    """A metric's value over the units it was measured on, and its bootstrap interval.

    Attributes:
        value: the metric on all units.
        low: lower end of the ``level`` interval.
        high: upper end.
        units: the number of units (prompts) the value rests on.
        level: the confidence level.
    """

    value: float
    low: float
    high: float
    units: int
    level: float = LEVEL

    def as_dict(self) -> dict[str, float | int]:
        """The JSON form written into ``metrics.json``."""
        return {"value": self.value, "low": self.low, "high": self.high, "n": self.units, "level": self.level}


@dataclass(frozen=True)
class Difference:
    """The paired difference ``A - B`` of one metric over the units both evaluations scored.

    Attributes:
        interval: the difference and its interval.
        verdict: ``"A better"``, ``"B better"`` or ``"no detectable difference at this size"``.
    """

    interval: Interval
    verdict: str


def _ratio_arrays(numerators: Sequence[float], denominators: Sequence[float] | None) -> tuple[np.ndarray, np.ndarray]:
    num = np.asarray(numerators, dtype=float)
    den = np.ones_like(num) if denominators is None else np.asarray(denominators, dtype=float)
    if num.ndim != 1 or num.shape != den.shape:
        raise ValueError(
            f"numerators and denominators must be two sequences of one length, got {num.shape} and {den.shape}"
        )
    if num.size == 0:
        raise ValueError("an interval needs at least one unit")
    if not np.all(np.isfinite(num)) or not np.all(np.isfinite(den)) or np.any(den < 0) or den.sum() <= 0:
        raise ValueError("numerators and denominators must be finite, denominators non-negative with a positive sum")
    return num, den


def _ratio(num: np.ndarray, den: np.ndarray, picks: np.ndarray) -> np.ndarray:
    """The ratio of sums of each resample (rows of ``picks``); a resample whose denominators sum to 0 gives 0."""
    sums = den[picks].sum(axis=1)
    return np.divide(num[picks].sum(axis=1), sums, out=np.zeros(len(picks)), where=sums > 0)


def _resampled(units: int, resamples: int, seed: int, statistic: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """``statistic`` of ``resamples`` draws of ``units`` unit indices with replacement, in chunks of bounded memory."""
    rng = np.random.default_rng(seed)
    draws = np.empty(resamples)
    for start in range(0, resamples, 250):
        picks = rng.integers(0, units, size=(min(250, resamples - start), units))
        draws[start : start + len(picks)] = statistic(picks)
    return draws


def _percentiles(draws: np.ndarray, level: float) -> tuple[float, float]:
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(draws, [tail, 1.0 - tail])
    return float(low), float(high)


def bootstrap(
    numerators: Sequence[float],
    denominators: Sequence[float] | None = None,
    *,
    resamples: int = RESAMPLES,
    seed: int = 0,
    level: float = LEVEL,
) -> Interval:
    """The ratio-of-sums metric over units and its percentile-bootstrap interval, units resampled with replacement.

    Args:
        numerators: one value per unit (a prompt's mean, its pass@k, its count of followed instructions).
        denominators: one weight per unit (its count of checked instructions); None: every unit weighs 1.
        resamples: bootstrap draws.
        seed: seed of the resampling.
        level: confidence level.

    Raises:
        ValueError: no units, unequal lengths, non-finite values, or denominators that sum to 0.
    """
    num, den = _ratio_arrays(numerators, denominators)
    value = float(num.sum() / den.sum())
    if num.size == 1:
        return Interval(value, value, value, 1, level)
    draws = _resampled(num.size, resamples, seed, lambda picks: _ratio(num, den, picks))
    low, high = _percentiles(draws, level)
    return Interval(value, low, high, int(num.size), level)


def paired_difference(
    a: tuple[Sequence[float], Sequence[float] | None],
    b: tuple[Sequence[float], Sequence[float] | None],
    *,
    resamples: int = RESAMPLES,
    seed: int = 0,
    level: float = LEVEL,
    higher_is_better: bool = True,
) -> Difference:
    """``metric(A) - metric(B)`` over the same units, resampled together, with a plain verdict.

    Resampling a unit once for both evaluations keeps what the two share (the unit's difficulty) out of the
    interval, which is what makes a paired comparison sharper than two separate intervals.

    Args:
        a: ``(numerators, denominators)`` of evaluation A, one per shared unit, in the same unit order as ``b``.
        b: the same for evaluation B.
        higher_is_better: the metric's direction (the family declares it); the verdict names the better one.

    Raises:
        ValueError: the two do not have the same number of units, or either is not a valid ratio (see
            ``bootstrap``).
    """
    num_a, den_a = _ratio_arrays(*a)
    num_b, den_b = _ratio_arrays(*b)
    if num_a.size != num_b.size:
        raise ValueError(f"a paired difference needs the same units in both: {num_a.size} vs {num_b.size}")
    value = float(num_a.sum() / den_a.sum() - num_b.sum() / den_b.sum())
    if num_a.size == 1:
        interval = Interval(value, value, value, 1, level)
    else:
        draws = _resampled(
            num_a.size, resamples, seed, lambda picks: _ratio(num_a, den_a, picks) - _ratio(num_b, den_b, picks)
        )
        low, high = _percentiles(draws, level)
        interval = Interval(value, low, high, int(num_a.size), level)
    if interval.low > 0:
        verdict = "A better" if higher_is_better else "B better"
    elif interval.high < 0:
        verdict = "B better" if higher_is_better else "A better"
    else:
        verdict = "no detectable difference at this size"
    return Difference(interval, verdict)


def composite_difference(
    components: Sequence[
        tuple[float, tuple[Sequence[float], Sequence[float] | None], tuple[Sequence[float], Sequence[float] | None]]
    ],
    *,
    strata: Sequence[Hashable] | None = None,
    resamples: int = RESAMPLES,
    seed: int = 0,
    level: float = LEVEL,
) -> Difference:
    """``sum(weight * (metric_i(A) - metric_i(B)))`` with its interval: a declared composite criterion.

    Components measured on the same units (two metrics of one source) are resampled with the same draws, so their
    covariance stays in the interval; resampling them apart would narrow it. Components of different evaluation
    files rest on different prompts and are resampled independently. Higher is better; a component where lower
    wins carries a negative weight.

    Args:
        components: ``(weight, a, b)`` per metric, ``a`` and ``b`` as in ``paired_difference``.
        strata: one label per component naming its units (e.g. the tuple of unit names): components with equal
            labels list the same units in the same order and share their draws. None: every component its own.

    Raises:
        ValueError: no components, a component that ``paired_difference`` refuses, ``strata`` of another length,
            or components of one stratum with different numbers of units.
    """
    if not components:
        raise ValueError("a composite needs at least one metric")
    labels = list(range(len(components))) if strata is None else list(strata)
    if len(labels) != len(components):
        raise ValueError(f"strata: {len(labels)} labels for {len(components)} components")
    offsets = {label: index for index, label in reversed(list(enumerate(labels)))}
    sizes: dict[Hashable, int] = {}
    value = 0.0
    draws = np.zeros(resamples)
    for index, (weight, a, b) in enumerate(components):
        num_a, den_a = _ratio_arrays(*a)
        num_b, den_b = _ratio_arrays(*b)
        if num_a.size != num_b.size:
            raise ValueError(f"a paired difference needs the same units in both: {num_a.size} vs {num_b.size}")
        label = labels[index]
        if sizes.setdefault(label, int(num_a.size)) != num_a.size:
            raise ValueError(f"components of one stratum need the same units: {sizes[label]} vs {num_a.size}")
        value += weight * float(num_a.sum() / den_a.sum() - num_b.sum() / den_b.sum())
        draws += weight * _resampled(
            num_a.size,
            resamples,
            seed + offsets[label],
            lambda picks, na=num_a, da=den_a, nb=num_b, db=den_b: _ratio(na, da, picks) - _ratio(nb, db, picks),
        )
    units = sum(sizes.values())
    low, high = _percentiles(draws, level)
    interval = Interval(value, low, high, units, level)
    verdict = "A better" if low > 0 else "B better" if high < 0 else "no detectable difference at this size"
    return Difference(interval, verdict)
