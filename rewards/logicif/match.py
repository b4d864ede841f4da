"""Compare a model's LogicIF answer values with the expected ones.

Two equalities exist, and rlif uses the stricter by default:

- ``strict`` (rlif default, because an exact trace writes each value with its type): JSON-typed comparison.
  A boolean only equals a boolean (``true`` is not ``1``), an expected integer matches only an equal integer value
  (``20`` equals ``20.0``, never ``20.0000001``), an expected float matches within ``rel 1e-9``/``abs 1e-9``,
  lists need the same length and order, objects the same key set.
- ``python``: plain Python ``==`` as in the official LogicIFEval evaluation, where ``True == 1`` and ``1 == 1.0``
  and floats must be exactly equal. Use it to report numbers comparable with published LogicIFEval results.

Why strict: a model that writes ``1`` for a flag the function returns as ``True`` did not trace the function
exactly, and rewarding it would teach type sloppiness. The cost: the LogicIFEval prompt says stats are "integer
values" while some expected stats are booleans, so in those rows only ``true``/``false`` earns the reward.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

EQUALITIES = ("strict", "python")
ABS_TOLERANCE = 1e-9
REL_TOLERANCE = 1e-9


def values_match(expected: Any, actual: Any, *, equality: str = "strict") -> bool:
    """Whether ``actual`` (decoded model JSON) equals ``expected`` (decoded ground truth).

    Args:
        expected: the expected JSON value.
        actual: the model's JSON value; any decoded JSON is accepted and never raises.
        equality: ``strict`` or ``python`` (see the module docstring).

    Returns:
        True when they match.

    Raises:
        ValueError: unknown ``equality``.
    """
    if equality == "python":
        return _python_equal(expected, actual)
    if equality != "strict":
        raise ValueError(f"equality must be one of {EQUALITIES}, got {equality!r}")
    pending = [(expected, actual)]
    while pending:
        want, got = pending.pop()
        if isinstance(want, dict):
            if not isinstance(got, dict) or want.keys() != got.keys():
                return False
            pending.extend((want[key], got[key]) for key in want)
        elif isinstance(want, list):
            if not isinstance(got, list) or len(want) != len(got):
                return False
            pending.extend(zip(want, got, strict=True))
        elif not _scalars_match(want, got):
            return False
    return True


def stats_key_fraction(expected: Mapping[str, Any], actual: Any, *, equality: str = "strict") -> float:
    """Share of stats keys the model got right, for partial credit.

    The denominator is the union of expected and reported keys, so extra or missing keys lower the fraction and
    only an exact match (same key set, all values equal) reaches 1.0.

    Args:
        expected: the expected stats object.
        actual: the model's ``stats`` value (anything; a non-object scores 0).
        equality: ``strict`` or ``python``.

    Returns:
        A fraction in [0, 1]; 1.0 when both are empty objects.
    """
    if not isinstance(actual, dict):
        return 0.0
    keys = expected.keys() | actual.keys()
    if not keys:
        return 1.0
    right = sum(1 for key in expected if key in actual and values_match(expected[key], actual[key], equality=equality))
    return right / len(keys)


def _scalars_match(want: Any, got: Any) -> bool:
    if want is None or isinstance(want, str):
        return type(got) is type(want) and got == want
    if isinstance(want, bool):
        return isinstance(got, bool) and got == want
    if isinstance(got, bool) or not isinstance(got, int | float):
        return False
    if isinstance(want, int):
        # An integer is exact: only an integer-valued number equal to it matches (20.0 for 20, not 1000000.0000003
        # for 1000000, and not 1.0000000005e30 for 10**30, which a relative tolerance would accept).
        if isinstance(got, float):
            return got.is_integer() and int(got) == want
        return want == got
    try:
        return math.isclose(want, got, rel_tol=REL_TOLERANCE, abs_tol=ABS_TOLERANCE)
    except OverflowError:  # an integer beyond float range against a float: not close to anything we expect
        return False


def _python_equal(expected: Any, actual: Any) -> bool:
    try:
        return bool(expected == actual)
    except RecursionError:
        return False
