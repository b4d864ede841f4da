"""Find a LogicIF answer: the last valid JSON object in a response that carries ``output`` and ``stats``.

The LogicIFEval prompt asks the model to finish with ``{"output": ..., "stats": {...}}``. Responses are free
text (step-by-step traces, code, Python dict reprs) with that JSON somewhere near the end, so the search runs
backwards from the end over ``{`` positions and asks Python's C JSON decoder whether a value starts there.

"Last" means the object that *ends* last. An object nested in a larger keyed object ends before it, so the
outer one wins, while an unrelated object after the answer (``{"note": 1}``) is skipped rather than failing the
response. The reference extractor (``jsonparse.extract_valid_json``) instead takes the last top-level JSON value
whatever its keys and fails when it is not the answer; rlif's reading is deliberately more lenient about
trailing JSON and about an answer wrapped in another object (documented in docs/logicif.md).

Model output never raises and never takes long, whatever it is (1 MB of ``{``, 100k-deep nesting, 10^5-digit
numbers): each decode attempt sees at most a window of ``max_object_chars`` characters, the number of attempts
and the characters they decode are capped per response, and a response that exhausts the budget simply has no
answer (it scores 0). ``NaN``/``Infinity`` and integers longer than 4,300 digits are not valid here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

ANSWER_KEYS = ("output", "stats")
SHORT_WINDOW_CHARS = 4096
"""First decode window; answers longer than this are found on a second, full-window try."""
TOKEN_CUT_MARGIN = 64
MAX_INT_DIGITS = 4300
"""Longest integer literal accepted; Python's own default limit, fixed here so that a process-wide
``sys.set_int_max_str_digits`` change cannot make parsing quadratic."""


@dataclass(frozen=True)
class ScanBudget:
    """Limits that bound the time spent looking for the answer in one response.

    Attributes:
        max_attempts: decode attempts (one per ``{`` tried, from the end).
        max_decoded_chars: characters the decode attempts may consume in total.
        max_object_chars: the longest JSON object that can be found; also the window each attempt decodes.
    """

    max_attempts: int = 1000
    max_decoded_chars: int = 200_000
    max_object_chars: int = 65_536

    def __post_init__(self) -> None:
        for name in ("max_attempts", "max_decoded_chars", "max_object_chars"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"ScanBudget.{name} must be a positive integer, got {value!r}")


DEFAULT_BUDGET = ScanBudget()


@dataclass(frozen=True)
class FoundAnswer:
    """The answer object found in a response.

    Attributes:
        output: the value of ``output``.
        stats: the value of ``stats`` (not necessarily a dict: the model may have written anything).
        start: index of the object's ``{`` in the searched text.
        end: index just past the object's ``}``.
    """

    output: Any
    stats: Any
    start: int
    end: int


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _bounded_int(digits: str) -> int:
    if len(digits) > MAX_INT_DIGITS:
        raise ValueError("integer literal too long")
    return int(digits)


_DECODER = json.JSONDecoder(parse_constant=_reject_constant, parse_int=_bounded_int)


def decode_strict_json(text: str) -> Any:
    """Decode a whole JSON document with the same strictness as the answer search.

    Raises:
        ValueError: ``text`` is not one strict JSON value (NaN/Infinity, over-long integers and trailing data
            are refused).
    """
    try:
        value, end = _DECODER.raw_decode(text, _skip_whitespace(text, 0))
    except RecursionError:
        raise ValueError("JSON nests too deeply") from None
    if _skip_whitespace(text, end) != len(text):
        raise ValueError(f"extra data after the JSON value at character {end}")
    return value


def _skip_whitespace(text: str, index: int) -> int:
    while index < len(text) and text[index] in " \t\n\r":
        index += 1
    return index


def find_answer(text: str, budget: ScanBudget = DEFAULT_BUDGET) -> FoundAnswer | None:
    """Return the JSON object ending last in ``text`` that has both ``output`` and ``stats`` keys.

    Args:
        text: the graded part of a response (thinking already removed).
        budget: search limits; the default handles megabyte responses in a few milliseconds.

    Returns:
        The answer, or None when no such object is found within the budget. Never raises on any string.
    """
    if not isinstance(text, str):
        return None
    best: FoundAnswer | None = None
    attempts = 0
    decoded = 0
    position = len(text)
    while attempts < budget.max_attempts and decoded < budget.max_decoded_chars:
        position = text.rfind("{", 0, position)
        if position < 0:
            break
        # Once an answer is known, only an object enclosing it can still end later, and such an object would
        # have to fit in the window too.
        if best is not None and best.end - position > budget.max_object_chars:
            break
        attempts += 1
        value, consumed = _decode_at(text, position, budget.max_object_chars)
        decoded += consumed
        if value is None:
            continue
        end = position + consumed
        if all(key in value for key in ANSWER_KEYS) and (best is None or end > best.end):
            best = FoundAnswer(output=value["output"], stats=value["stats"], start=position, end=end)
            if not _may_be_enclosed(text, position):
                break
    return best


def _may_be_enclosed(text: str, start: int) -> bool:
    """Whether a larger JSON value could contain the object starting at ``start``.

    Inside JSON an object is a member value or an array element, so the last non-blank character before it is
    ``:``, ``[`` or ``,``. Anything else (a code fence, prose) proves that nothing encloses it, so the search
    can stop instead of trying every earlier ``{`` of the response.
    """
    index = start - 1
    while index >= 0 and text[index] in " \t\n\r":
        index -= 1
    return index >= 0 and text[index] in ":[,"


def _decode_at(text: str, position: int, max_chars: int) -> tuple[dict[str, Any] | None, int]:
    """Decode the JSON object starting at ``text[position]``, reading at most ``max_chars`` characters.

    The decoder runs on a copied window, never on ``text`` itself, because a decode error computes its line
    number by counting newlines from the start of the string it was given. Most ``{`` in prose fail within a few
    characters, so a short window is tried first and the full one only when the short one was cut too early.

    Returns:
        ``(object, characters consumed)``, or ``(None, characters examined)`` when no object starts there.
    """
    limit = min(max_chars, len(text) - position)
    size = min(SHORT_WINDOW_CHARS, limit)
    while True:
        window = text[position : position + size]
        try:
            value, end = _DECODER.raw_decode(window)
        except json.JSONDecodeError as error:
            if size < limit and _cut_by_window(error, size):
                size = limit
                continue
            return None, max(error.pos, 1)
        except (ValueError, RecursionError, MemoryError):
            # NaN/Infinity, an over-long integer, or nesting past the interpreter's limit: not an answer.
            return None, size
        return (value if isinstance(value, dict) else None), end


def _cut_by_window(error: json.JSONDecodeError, size: int) -> bool:
    """Whether decoding failed because the window ended, not because the text is not JSON.

    A token cut by the window end fails within a few characters of it (a number, ``true``, a ``\\uXXXX``
    escape), except a string, which is reported where it started.
    """
    return error.pos >= size - TOKEN_CUT_MARGIN or error.msg.startswith("Unterminated string")
