"""The one JSON spelling of ground truth: every family stores its ``reward_model.ground_truth`` in it.

Sorted keys and no spaces make equal ground truths equal strings, so a build-time check can compare a stored string
with its normalised form, and scorers can cache parsed ground truth on the exact string. UTF-8 is kept because
graph node names and IF keywords are matched exactly. NaN and Infinity are refused: they are not JSON, and a
ground truth holding one could not be read back by a strict parser.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any


def canonical_json(value: Any) -> str:
    """Serialise ``value`` the way rlif stores ground truth.

    Raises:
        ValueError: ``value`` holds NaN or Infinity.
        TypeError: ``value`` holds something JSON cannot represent.
    """
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def load_ground_truth(ground_truth: str, family: str) -> Any:
    """The JSON value of a row's ground-truth string.

    Raises:
        ValueError: not a string of JSON; the message names ``family``.
    """
    try:
        return json.loads(ground_truth)
    except (TypeError, json.JSONDecodeError) as err:
        raise ValueError(f"{family} ground truth is not JSON ({err})") from None


def canonical_form(raw: Any, *, where: str, check: Callable[[str], object]) -> str:
    """The canonical string of a ground truth given as JSON text or as the value itself, once ``check`` accepts it.

    Families whose ground truth has one accepted shape (graph, math) normalise with this; families with several
    published shapes (IF, LogicIF) map each shape to theirs first.

    Args:
        raw: JSON text, or a JSON-representable value.
        where: where the value comes from; every error message starts with it.
        check: the family's parser or validator of the canonical string; raises ``ValueError`` when the ground
            truth cannot be scored.

    Raises:
        ValueError: text that is not JSON, a value JSON cannot represent (NaN, Infinity, other types), or a ground
            truth ``check`` rejects.
    """
    value = raw
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as err:
            raise ValueError(f"{where}: not valid JSON ({err.msg} at column {err.colno})") from None
    try:
        text = canonical_json(value)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{where}: not representable as JSON ({err})") from None
    try:
        check(text)
    except ValueError as err:
        raise ValueError(f"{where}: {err}") from None
    return text
