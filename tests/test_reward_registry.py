"""What the reward families declare (ability, ground-truth normaliser, options) and what is derived from it."""

from __future__ import annotations

import json
import math

import pytest

import rewards
from rewards import registry
from rewards.canonical import canonical_form, canonical_json
from rewards.router import check_reward_kwargs, compute_score
from rlif.demo_assets import demo_rows
from rlif.verl_glue.overrides import REWARD_KWARGS

ROWS = demo_rows("train") + demo_rows("val")

ABILITIES = {
    "if": "instruction_following",
    "logicif": "logic_instruction_following",
    "graph": "graph_reasoning",
    "grapharena": "graph_reasoning",
    "graphwiz": "graph_reasoning",
    "math": "math",
    "math_choice": "math",
    "reasoning_gym": "reasoning",
    "judge": "instruction_following",
}


def test_each_family_declares_its_ability() -> None:
    assert {f.name: f.ability for f in registry.families()} == ABILITIES


def test_reward_options_are_the_families_options_with_their_defaults() -> None:
    assert rewards.reward_options() == {
        "graph_reward": "binary",
        "if_reward": "fraction",
        "if_max_answer_chars": 12000,
        "logicif_partial_credit": False,
        **rewards.family_named("judge").options,
    }
    assert set(rewards.reward_options()) == REWARD_KWARGS
    check_reward_kwargs(rewards.reward_options())


def test_declared_options_are_read_only() -> None:
    family = rewards.family_named("logicif")
    with pytest.raises(TypeError):
        family.options["logicif_partial_credit"] = True  # type: ignore[index]


@pytest.mark.parametrize("row", ROWS, ids=lambda r: f"{r['data_source']}-{r['extra_info']['index']}")
def test_a_declared_default_scores_as_leaving_the_option_out(row: dict) -> None:
    family = rewards.family_for(row["data_source"])
    truth = row["reward_model"]["ground_truth"]
    response = "<think>x</think>" + ('{"output": 2, "stats": {"checks": 4}}' if family.name == "logicif" else "a b c")
    assert compute_score(row["data_source"], response, truth, **family.options) == compute_score(
        row["data_source"], response, truth
    )


def test_a_non_default_option_reaches_the_scorer() -> None:
    row = next(r for r in ROWS if r["data_source"] == "logicif")
    truth = json.loads(row["reward_model"]["ground_truth"])["code_output"]
    half_right = json.dumps({"output": truth["output"], "stats": {k: -1 for k in truth["stats"]}})
    gt = row["reward_model"]["ground_truth"]
    assert compute_score("logicif", half_right, gt)["score"] == 0.0
    assert compute_score("logicif", half_right, gt, logicif_partial_credit=True)["score"] == 0.5


@pytest.mark.parametrize("row", ROWS, ids=lambda r: f"{r['data_source']}-{r['extra_info']['index']}")
def test_normalising_stored_ground_truth_changes_nothing(row: dict) -> None:
    truth = row["reward_model"]["ground_truth"]
    assert rewards.normalize_ground_truth(row["data_source"], truth, where="w") == truth
    assert rewards.normalize_ground_truth(row["data_source"], json.loads(truth), where="w") == truth


@pytest.mark.parametrize(
    ("source", "raw", "fragment"),
    [
        ("graph/tsp", "{not json", "not valid JSON"),
        ("graph/tsp", {"task": "tsp", "graph": {}, "optimum": 3}, "graph"),
        ("graph/xyz", {"task": "xyz", "graph": {}, "optimum": 3}, "xyz"),
        ("math/gsm8k", {"solution": "42"}, "no 'answer'"),
        ("math", float("nan"), "not representable as JSON"),
        ("logicif", {"code_output": {"output": 1}}, "stats"),
        ("iftrain", {"instruction_id_list": ["no:such_id"], "kwargs": [{}]}, "no:such_id"),
    ],
)
def test_bad_ground_truth_is_refused_naming_where_it_came_from(source: str, raw: object, fragment: str) -> None:
    with pytest.raises(ValueError, match=r"^data\.jsonl: row 3") as caught:
        rewards.normalize_ground_truth(source, raw, where="data.jsonl: row 3")
    assert fragment in str(caught.value)


def test_math_ground_truth_normalises_to_json() -> None:
    assert rewards.normalize_ground_truth("math/aime24", {"answer": "\\frac{1}{2}"}, where="w") == (
        '{"answer":"\\\\frac{1}{2}"}'
    )
    assert rewards.normalize_ground_truth("math", 42, where="w") == "42"


def test_unknown_source_or_family_lists_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"unknown data_source 'ifevl'; known sources: .*ifeval"):
        rewards.normalize_ground_truth("ifevl", "{}", where="w")
    known = "graph, grapharena, graphwiz, if, judge, logicif, math, math_choice, reasoning_gym"
    with pytest.raises(ValueError, match=f"unknown task family 'graphs'; known families: {known}"):
        rewards.family_named("graphs")


def test_an_option_two_families_declare_is_refused() -> None:
    clash = registry.TaskFamily(
        name="clash",
        prefixes=("clash",),
        ability="test",
        metric_keys=(),
        options={"graph_reward": "binary"},
        score=lambda *args, **kwargs: {"score": 0.0, "acc": 0.0},
        normalize_ground_truth=lambda raw, *, where: raw,
        check_ground_truth=lambda gt, extra: None,
    )
    with pytest.raises(ValueError, match="reward option 'graph_reward' of 'clash' is already declared by 'graph'"):
        registry.register_family(clash)
    assert registry.find_family("clash") is None


def test_canonical_json_is_one_spelling_and_refuses_nan() -> None:
    assert canonical_json({"b": [1, "é"], "a": None}) == '{"a":null,"b":[1,"é"]}'
    with pytest.raises(ValueError):
        canonical_json({"x": math.inf})
    assert canonical_form('{ "b" : 1, "a" : 2 }', where="w", check=json.loads) == '{"a":2,"b":1}'
    with pytest.raises(ValueError, match=r"^w: not valid JSON"):
        canonical_form("{", where="w", check=json.loads)
