"""Value comparison: strict JSON typing with numeric tolerance, and the official Python equality."""

from __future__ import annotations

import pytest

from rewards.logicif.match import stats_key_fraction, values_match


@pytest.mark.parametrize(
    ("expected", "actual", "strict", "python"),
    [
        (20, 20, True, True),
        (20, 20.0, True, True),
        (0.1 + 0.2, 0.3, True, False),  # tolerance vs exact ==
        (1e12, 1e12 + 1e-3, True, False),  # relative tolerance
        (1.0, 1.001, False, False),
        (True, True, True, True),
        (True, 1, False, True),  # bool is not int (rlif) vs True == 1 (official)
        (1, True, False, True),
        (0, False, False, True),
        (None, None, True, True),
        (None, 0, False, False),
        ("a", "a", True, True),
        ("1", 1, False, False),
        ([1, [2, 3]], [1, [2, 3]], True, True),
        ([1, 2], [2, 1], False, False),
        ([1, 2], [1, 2, 3], False, False),
        ([1], (1,), False, False),  # decoded JSON never holds tuples; a tuple is not a list
        ({"a": 1, "b": [True]}, {"b": [True], "a": 1.0}, True, True),
        ({"a": 1}, {"a": 1, "b": 2}, False, False),
        ({"a": 1}, [["a", 1]], False, False),
        (10**30, float(10**30), False, False),  # float(10**30) is 10**30 + 19884624838656, not an equal integer
        (1000000, 1000000.0000003, False, False),  # an integer takes no relative tolerance
        (10**30, 1.0000000005e30, False, False),
        (10**30, 10**30 + 1, False, False),
        (2**53, float(2**53), True, True),  # a float holding exactly the integer's value matches
        (-7, -7.0, True, True),
        (7, float("nan"), False, False),
        (7, float("inf"), False, False),
        (1.5, 1.5 + 1e-12, True, False),  # floats keep their tolerance
        (5, 10**400, False, False),
        (5.0, 10**400, False, False),  # an int beyond float range against a float never raises
    ],
)
def test_values_match(expected: object, actual: object, strict: bool, python: bool) -> None:
    assert values_match(expected, actual) is strict
    assert values_match(expected, actual, equality="python") is python


def test_deeply_nested_actual_never_recurses() -> None:
    deep: object = 1
    for _ in range(100_000):
        deep = [deep]
    assert values_match([1], deep) is False
    assert values_match(deep, deep) is True


def test_unknown_equality_is_rejected() -> None:
    with pytest.raises(ValueError, match="equality"):
        values_match(1, 1, equality="loose")


@pytest.mark.parametrize(
    ("actual", "fraction"),
    [
        ({"a": 1, "b": True, "c": 3}, 1.0),
        ({"a": 1, "b": True, "c": 4}, 2 / 3),
        ({"a": 1, "b": 1, "c": 3}, 2 / 3),  # bool is not int here either
        ({"a": 1, "b": True}, 2 / 3),  # a missing key
        ({"a": 1, "b": True, "c": 3, "d": 0}, 3 / 4),  # an extra key lowers the fraction
        ({}, 0.0),
        ([1, True, 3], 0.0),
        (None, 0.0),
    ],
)
def test_stats_key_fraction(actual: object, fraction: float) -> None:
    assert stats_key_fraction({"a": 1, "b": True, "c": 3}, actual) == pytest.approx(fraction)


def test_empty_stats_match_only_empty_stats() -> None:
    assert stats_key_fraction({}, {}) == 1.0
    assert stats_key_fraction({}, {"x": 1}) == 0.0
