"""The one verl row builder: every builder's rows get the serving family's ``ability``."""

from __future__ import annotations

import pytest
from data_fixtures import if_train_fixture_row, logicif_fixture_row

from rlif.data.graph_rows import data_source, item_row
from rlif.data.rows import verl_row
from rlif.data.sources import IF_SOURCES, LOGICIF_SOURCE, convert_row
from rlif.demo_assets import demo_rows
from rlif.graphs.items import make_item


@pytest.mark.parametrize(
    ("source", "ability"),
    [
        ("ifeval", "instruction_following"),
        ("ifbench", "instruction_following"),
        ("iftrain", "instruction_following"),
        ("logicif", "logic_instruction_following"),
        ("graph/tsp", "graph_reasoning"),
        ("math/gsm8k", "math"),
    ],
)
def test_ability_is_the_serving_family_s(source: str, ability: str) -> None:
    row = verl_row(source, "Q?", "{}", {"split": "val", "index": 2})
    assert row == {
        "data_source": source,
        "prompt": [{"role": "user", "content": "Q?"}],
        "ability": ability,
        "reward_model": {"style": "rule", "ground_truth": "{}"},
        "extra_info": {"split": "val", "index": 2},
    }


def test_chat_prompts_are_kept_and_copied() -> None:
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Q?"}]
    row = verl_row("iftrain", messages, "{}", {})
    assert row["prompt"] == messages and row["prompt"][0] is not messages[0]


def test_a_source_no_family_serves_fails_at_build_time() -> None:
    with pytest.raises(ValueError, match="unknown data_source 'logic_if'; known sources: "):
        verl_row("logic_if", "Q?", "{}", {})


def test_source_lists_are_the_families() -> None:
    assert {"ifeval", "ifbench", "iftrain"} == IF_SOURCES and LOGICIF_SOURCE == "logicif"
    assert data_source("tsp") == "graph/tsp"


def test_every_builder_writes_the_same_ability_per_family() -> None:
    rows = [convert_row(if_train_fixture_row(1), where="x"), convert_row(logicif_fixture_row(1, 0), where="y")]
    rows += [item_row(make_item("mis", "small", 0, 0), "train"), *demo_rows("train"), *demo_rows("val")]
    by_family: dict[str, set[str]] = {}
    for row in rows:
        family = "graph" if row["data_source"].startswith("graph/") else row["data_source"]
        family = "if" if family in IF_SOURCES else family
        by_family.setdefault(family, set()).add(row["ability"])
    assert by_family == {
        "if": {"instruction_following"},
        "logicif": {"logic_instruction_following"},
        "graph": {"graph_reasoning"},
    }
