"""The bootstrap over prompts covers the true value as often as it claims, and the paired difference decides."""

from __future__ import annotations

import numpy as np
import pytest

from rlif.eval.intervals import bootstrap, paired_difference


def test_the_95_interval_covers_the_true_rate_in_93_to_97_percent_of_trials() -> None:
    """500 prompts, success rate 0.4, 8 samples per prompt, 1,000 trials with fixed seeds."""
    rng = np.random.default_rng(20261128)
    covered = 0
    trials = 1000
    for trial in range(trials):
        samples = rng.random((500, 8)) < 0.4
        interval = bootstrap(samples.mean(axis=1), resamples=1000, seed=trial)
        covered += interval.low <= 0.4 <= interval.high
    assert 0.93 * trials <= covered <= 0.97 * trials


def test_prompts_weigh_equally_whatever_their_sample_count() -> None:
    prompt_means = [1.0, 0.0]  # one prompt with 9 correct samples, one with 1 wrong sample
    assert bootstrap(prompt_means).value == 0.5


def test_a_micro_average_is_a_ratio_of_sums() -> None:
    interval = bootstrap([3, 1], [4, 4])
    assert interval.value == 0.5 and interval.units == 2 and interval.low <= 0.5 <= interval.high


def test_one_unit_gives_a_point() -> None:
    interval = bootstrap([0.25])
    assert (interval.value, interval.low, interval.high, interval.units) == (0.25, 0.25, 0.25, 1)


@pytest.mark.parametrize(
    ("numerators", "denominators", "message"),
    [([], None, "at least one unit"), ([1.0, 2.0], [1.0], "one length"), ([float("nan")], None, "finite")],
)
def test_bad_input_is_refused(numerators: list[float], denominators: list[float] | None, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        bootstrap(numerators, denominators)


def test_identical_evaluations_show_no_difference() -> None:
    rng = np.random.default_rng(1)
    values = (rng.random((300, 4)) < 0.5).mean(axis=1)
    difference = paired_difference((values, None), (values, None))
    assert difference.interval.value == 0.0
    assert difference.verdict == "no detectable difference at this size"


def test_evaluations_of_one_model_differ_by_nothing_detectable() -> None:
    rng = np.random.default_rng(2)
    p = rng.random(400)
    a = (rng.random((400, 8)) < p[:, None]).mean(axis=1)
    b = (rng.random((400, 8)) < p[:, None]).mean(axis=1)
    assert paired_difference((a, None), (b, None)).verdict == "no detectable difference at this size"


def test_a_large_gap_is_called_for_the_better_one() -> None:
    rng = np.random.default_rng(3)
    p = rng.random(400) * 0.6
    a = (rng.random((400, 8)) < p[:, None] + 0.3).mean(axis=1)
    b = (rng.random((400, 8)) < p[:, None]).mean(axis=1)
    assert paired_difference((a, None), (b, None)).verdict == "A better"
    assert paired_difference((b, None), (a, None)).verdict == "B better"
    assert paired_difference((a, None), (b, None), higher_is_better=False).verdict == "B better"


def test_pairing_is_sharper_than_two_separate_intervals() -> None:
    """The shared per-prompt difficulty cancels in the paired interval."""
    rng = np.random.default_rng(4)
    p = rng.random(300)
    a = (rng.random((300, 8)) < np.clip(p + 0.03, 0, 1)[:, None]).mean(axis=1)
    b = (rng.random((300, 8)) < p[:, None]).mean(axis=1)
    paired = paired_difference((a, None), (b, None)).interval
    separate = bootstrap(a, seed=1), bootstrap(b, seed=2)
    assert paired.high - paired.low < (separate[0].high - separate[0].low) + (separate[1].high - separate[1].low)


def test_different_unit_counts_are_refused() -> None:
    with pytest.raises(ValueError, match="same units"):
        paired_difference(([1.0, 0.0], None), ([1.0], None))
