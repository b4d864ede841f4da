"""``rewards.lookup``: a registry lookup that fails listing the names there are."""

from __future__ import annotations

import pytest

from rewards.lookup import look_up, unknown_name

TABLE = {"b": 2, "a": 1}


def test_a_known_name_gives_its_entry() -> None:
    assert look_up(TABLE, "a", "letter") == 1


@pytest.mark.parametrize("name", ["c", None, 3, ["a"]])
def test_an_unknown_name_lists_the_known_ones_in_table_order(name: object) -> None:
    with pytest.raises(ValueError) as info:
        look_up(TABLE, name, "letter")
    assert str(info.value) == f"unknown letter {name!r}; known: ['b', 'a']"


def test_where_label_order_and_joining_are_the_callers() -> None:
    with pytest.raises(ValueError, match=r"^field\.x: unknown letter 'c'; known letters: a, b$"):
        look_up(TABLE, "c", "letter", where="field.x", known=sorted(TABLE), label="known letters", joined=True)
    assert str(unknown_name("size", "huge", ("small", "large"))) == "unknown size 'huge'; known: ['small', 'large']"
