"""Finding a name in a registry, or failing with a message that lists the names there are.

A name that reaches a registry comes from a config, a data row or a command line, so a typo must fail at once and
show what would have been accepted. Every registry (task families, graph tasks, reward variants, sampling policies,
instance sizes) answers through ``look_up`` so the failure reads the same everywhere. It lives in ``rewards``, the
bottom of the code base, because ``samplers`` and ``rlif`` may import ``rewards`` but not the other way round.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TypeVar

Value = TypeVar("Value")


def unknown_name(
    what: str, name: object, known: Iterable[str], *, where: str = "", label: str = "known", joined: bool = False
) -> ValueError:
    """The error for a name that is not in a registry, for a caller that searches its registry its own way.

    Args:
        what: what the name names (``"task"``, ``"sampling policy"``).
        name: the name that was asked for.
        known: the names there are, in the order to list them.
        where: the field or setting the name came from, put in front of the message when given.
        label: the word that introduces the list (``"known"``, ``"known sources"``).
        joined: list the names comma-separated rather than as a Python list.

    Returns:
        ``ValueError("<where>: unknown <what> <name!r>; <label>: <names>")``.
    """
    names = list(known)
    listing = ", ".join(names) if joined else repr(names)
    prefix = f"{where}: " if where else ""
    return ValueError(f"{prefix}unknown {what} {name!r}; {label}: {listing}")


def look_up(
    table: Mapping[str, Value],
    name: object,
    what: str,
    *,
    where: str = "",
    known: Iterable[str] | None = None,
    label: str = "known",
    joined: bool = False,
) -> Value:
    """The entry of ``table`` called ``name``.

    Args:
        table: the registry.
        name: the name to find; anything but a string is unknown.
        what: what the name names, for the message.
        where: the field or setting the name came from, for the message.
        known: the names to list when ``name`` is unknown (default: ``table``'s keys in its order).
        label: the word that introduces the list.
        joined: list the names comma-separated rather than as a Python list.

    Raises:
        ValueError: ``name`` is not in ``table``; the message is ``unknown_name``'s.
    """
    if isinstance(name, str) and name in table:
        return table[name]
    raise unknown_name(what, name, table if known is None else known, where=where, label=label, joined=joined)
