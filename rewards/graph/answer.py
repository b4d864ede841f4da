"""Pull the model's final answer list out of the graded text.

GraphArena asks for the answer "within brackets []" and for no brackets elsewhere. We read only the answer section
(text after the last ``</think>``, see ``rewards/thinking.py``) and take the *last* bracketed list whose content fits
the task's grammar:

* names (MCP/MIS/MVC): any bracket content, split on commas. Names are free text, so every bracket fits and the
  last one wins: a trailing ``[see above]`` is the answer (and an unknown name, hence infeasible).
* airport codes (TSP): three letters per item, in any case, comma separated. ``[Done]`` or ``[total 51467 km]``
  do not fit and are skipped, so an earlier tour still counts.
* integers (GED, MCS): non-negative integers separated by commas and/or spaces (``[1 0 2]`` is accepted, as in
  GraphArena). MCS uses the last two integer lists.

Parsing is pure string work: it never raises, and numbers too long to be an index are kept as ``-1`` (out of range)
instead of calling ``int`` on thousands of digits.
"""

from __future__ import annotations

import re

_BRACKETED = re.compile(r"\[([^\[\]]*)\]")
"""A bracket pair with no bracket inside; it may span lines."""

_CODE_LIST = re.compile(r"\s*[A-Za-z]{3}(?:\s*,\s*[A-Za-z]{3})*\s*")
_INT_LIST = re.compile(r"\s*(?:\d+(?:\s*,\s*\d+|\s+\d+)*\s*)?")
_DIGITS = re.compile(r"\d+")
_QUOTES = "\"'`"
_MAX_INDEX_DIGITS = 6
"""Longer numbers cannot be atom indices; they are read as -1 so the range check rejects them."""


def last_name_list(text: str) -> list[str] | None:
    """The items of the last bracketed list, stripped of spaces and of one pair of matching quotes.

    Args:
        text: the answer section.

    Returns:
        The items (``[]`` for an empty ``[]``), or None when the text has no bracket pair.
    """
    content = None
    for match in _BRACKETED.finditer(text):
        content = match.group(1)
    if content is None:
        return None
    if not content.strip():
        return []
    return [_unquote(item.strip()) for item in content.split(",")]


def last_code_list(text: str) -> list[str] | None:
    """The upper-cased items of the last bracketed list of three-letter codes, or None when there is none."""
    for content in reversed(_BRACKETED.findall(text)):
        if _CODE_LIST.fullmatch(content):
            return [item.strip().upper() for item in content.split(",")]
    return None


def last_int_lists(text: str, count: int) -> list[list[int]] | None:
    """The last ``count`` bracketed integer lists, in text order, or None when there are fewer.

    Args:
        text: the answer section.
        count: how many lists the task's answer has (1 for GED, 2 for MCS).

    Returns:
        The lists; an over-long number is read as -1.
    """
    found: list[list[int]] = []
    for content in reversed(_BRACKETED.findall(text)):
        if _INT_LIST.fullmatch(content):
            found.append([int(d) if len(d) <= _MAX_INDEX_DIGITS else -1 for d in _DIGITS.findall(content)])
            if len(found) == count:
                return found[::-1]
    return None


def _unquote(item: str) -> str:
    if len(item) >= 2 and item[0] == item[-1] and item[0] in _QUOTES:
        return item[1:-1].strip()
    return item
