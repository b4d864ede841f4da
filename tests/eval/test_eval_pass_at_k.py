"""pass@k against values computed by hand and against the exact binomial formula."""

from __future__ import annotations

import itertools
from fractions import Fraction
from math import comb

import pytest

from rlif.eval.pass_at_k import mean_pass_at_k, pass_at_k


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [
        (5, 2, 1, 0.4),  # c / n
        (5, 2, 2, 0.7),  # 1 - C(3,2)/C(5,2) = 1 - 3/10
        (5, 2, 3, 0.9),  # 1 - C(3,3)/C(5,3) = 1 - 1/10
        (5, 2, 4, 1.0),  # n - c < k: some draw must hold a correct sample
        (5, 0, 3, 0.0),
        (5, 5, 1, 1.0),
        (64, 1, 32, 0.5),  # 1 - C(63,32)/C(64,32) = 1 - 32/64
        (4, 1, 2, 0.5),  # 1 - C(3,2)/C(4,2) = 1 - 3/6
        (1, 1, 1, 1.0),
    ],
)
def test_hand_computed_values(n: int, c: int, k: int, expected: float) -> None:
    assert pass_at_k(n, c, k) == pytest.approx(expected, abs=1e-12)


def test_the_product_form_equals_the_binomial_formula() -> None:
    for n in range(1, 41):
        for c in range(n + 1):
            for k in range(1, n + 1):
                exact = 1 - Fraction(comb(n - c, k), comb(n, k))
                assert pass_at_k(n, c, k) == pytest.approx(float(exact), abs=1e-12), (n, c, k)


def test_large_n_stays_finite_and_monotone_in_k() -> None:
    values = [pass_at_k(1024, 3, k) for k in range(1, 1025)]
    assert values[0] == pytest.approx(3 / 1024)
    assert all(a <= b for a, b in itertools.pairwise(values))
    assert values[-1] == 1.0


def test_the_mean_over_problems_stops_at_the_smallest_n() -> None:
    result = mean_pass_at_k([(4, 1), (2, 2), (3, 0)])
    assert sorted(result) == [1, 2]
    assert result[1] == pytest.approx((0.25 + 1.0 + 0.0) / 3)
    assert result[2] == pytest.approx((0.5 + 1.0 + 0.0) / 3)
    assert mean_pass_at_k([]) == {}


@pytest.mark.parametrize(("n", "c", "k"), [(3, 4, 1), (3, -1, 1), (3, 1, 0), (3, 1, 4)])
def test_impossible_arguments_are_refused(n: int, c: int, k: int) -> None:
    with pytest.raises(ValueError, match="pass@k needs"):
        pass_at_k(n, c, k)
