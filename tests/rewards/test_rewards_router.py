"""The contract of the one reward entry verl calls (``rewards.compute_score``), across every task family."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

import networkx as nx
import pytest

import rewards
from rewards import registry
from rewards.router import COMMON_KEYS, compute_score, reward_keys
from rlif.demo_assets import demo_rows

ROWS = demo_rows("train") + demo_rows("val")


def test_every_family_is_registered() -> None:
    assert {f.name for f in registry.families()} == {
        "if",
        "logicif",
        "graph",
        "grapharena",
        "graphwiz",
        "math",
        "math_choice",
        "reasoning_gym",
        "judge",
    }
    for source in ("ifeval", "ifbench", "iftrain", "logicif", "graph/tsp", "graph/ged"):
        assert registry.find_family(source) is not None, source


@pytest.mark.parametrize("response", ["", "plain text, with Commas.", "<think>never closed", '{"output": 1}', "[A, B]"])
def test_every_sample_returns_the_same_keys(response: str) -> None:
    keys = set(reward_keys())
    for row in [*ROWS, {"data_source": "no_such_source", "reward_model": {"ground_truth": "{}"}, "extra_info": {}}]:
        result = compute_score(
            row["data_source"], response, row["reward_model"]["ground_truth"], row["extra_info"], **{}
        )
        assert set(result) == keys, row["data_source"]
        assert isinstance(result["score"], float)
        assert 0.0 <= result["acc"] <= 1.0


def test_common_keys_come_first_and_families_do_not_collide() -> None:
    keys = reward_keys()
    assert keys[: len(COMMON_KEYS)] == COMMON_KEYS
    assert len(keys) == len(set(keys))


def test_correct_answers_score_one_per_family() -> None:
    logicif = next(r for r in ROWS if r["data_source"] == "logicif")
    expected = json.loads(logicif["reward_model"]["ground_truth"])["code_output"]
    answer = f"Tracing it through.\n{json.dumps(expected)}"
    result = compute_score("logicif", answer, logicif["reward_model"]["ground_truth"], logicif["extra_info"])
    assert result["score"] == 1.0 and result["logicif_both"] == 1.0

    advice = next(r for r in ROWS if r["extra_info"]["item_id"] == "demo-if-4")  # >= 8 words, no commas
    good = "Sleep well and ask questions in every single class"
    result = compute_score("iftrain", good, advice["reward_model"]["ground_truth"], advice["extra_info"])
    assert result["score"] == 1.0 and result["if_prompt_strict"] == 1.0
    half = "Sleep well, ask questions, take notes, and rest often"
    result = compute_score("iftrain", half, advice["reward_model"]["ground_truth"], advice["extra_info"])
    assert result["score"] == 0.5 and result["if_prompt_strict"] == 0.0
    bad = "Sleep, well."
    result = compute_score("iftrain", bad, advice["reward_model"]["ground_truth"], advice["extra_info"])
    assert result["score"] == 0.0

    mcp = next(r for r in ROWS if r["data_source"] == "graph/mcp")
    truth = json.loads(mcp["reward_model"]["ground_truth"])
    graph = nx.Graph([(link["source"], link["target"]) for link in truth["graph"]["links"]])
    names = {node["id"]: node["name"] for node in truth["graph"]["nodes"]}
    clique = max(nx.find_cliques(graph), key=len)
    answer = "[" + ", ".join(names[i] for i in clique) + "]"
    result = compute_score("graph/mcp", answer, mcp["reward_model"]["ground_truth"], mcp["extra_info"])
    assert len(clique) == truth["optimum"] and result["score"] == 1.0 and result["graph_optimal"] == 1.0


def test_thinking_is_stripped_and_an_unclosed_think_scores_zero() -> None:
    truth = next(r for r in ROWS if r["extra_info"]["item_id"] == "demo-if-4")["reward_model"]["ground_truth"]
    answer = "Sleep well and ask questions in every single class"
    closed = compute_score("iftrain", f"<think>Plan, then answer, briefly.</think>{answer}", truth)
    assert closed["score"] == 1.0 and closed["think_unclosed"] == 0.0
    unclosed = compute_score("iftrain", f"<think>{answer}", truth)
    assert unclosed["score"] == 0.0 and unclosed["think_unclosed"] == 1.0


def test_unknown_source_scores_zero_and_is_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR, logger="rewards.router"):
        first = compute_score("mystery_source", "text", "{}")
        compute_score("mystery_source", "text", "{}")
    assert first["score"] == 0.0 and first["unknown_source"] == 1.0
    assert sum("mystery_source" in rec.message for rec in caplog.records) == 1


def test_unknown_source_is_a_build_time_error() -> None:
    with pytest.raises(ValueError, match="unknown data_source 'mystery'"):
        rewards.check_row("mystery", "{}")


def test_unknown_reward_option_is_a_configuration_error() -> None:
    with pytest.raises(ValueError, match="unknown reward option"):
        compute_score("iftrain", "x", ROWS[0]["reward_model"]["ground_truth"], if_rewards="all")


@pytest.mark.parametrize("option", [{"graph_reward": "binery"}, {"logicif_partial_credit": "yes"}])
def test_bad_reward_option_value_fails_on_the_first_sample(option: dict[str, str]) -> None:
    with pytest.raises(ValueError):
        compute_score("logicif", "x", ROWS[0]["reward_model"]["ground_truth"], **option)


def test_verl_injected_arguments_are_accepted() -> None:
    result = compute_score(
        "iftrain", "x", ROWS[0]["reward_model"]["ground_truth"], reward_router_address=None, reward_model_tokenizer=None
    )
    assert set(result) == set(reward_keys())


def _broken_family(score: Callable[..., dict[str, float]], **fields: Any) -> registry.TaskFamily:
    return registry.TaskFamily(
        name="broken",
        prefixes=("broken/",),
        ability="test",
        metric_keys=(),
        options={},
        score=score,
        normalize_ground_truth=lambda raw, *, where: raw,
        check_ground_truth=lambda gt, extra: None,
        **fields,
    )


def test_a_scorer_bug_is_counted_not_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object, **kwargs: object) -> dict[str, float]:
        raise ZeroDivisionError("bug")

    family = _broken_family(broken)
    monkeypatch.setitem(registry._FAMILIES, "broken/", family)
    result = compute_score("broken/x", "text", "{}")
    assert result["score"] == 0.0 and result["reward_error"] == 1.0


def test_reward_entry_is_what_the_verl_glue_exports() -> None:
    pytest.importorskip("verl")
    from rlif.verl_glue import hooks

    assert hooks.compute_score is compute_score


def test_a_scorer_bug_scores_the_family_failure_score(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object, **kwargs: object) -> dict[str, float]:
        raise ZeroDivisionError("bug")

    family = _broken_family(broken, failure_score=lambda params: -3.0)
    monkeypatch.setitem(registry._FAMILIES, "broken/", family)
    result = compute_score("broken/x", "text", "{}")
    assert result["score"] == -3.0 and result["reward_error"] == 1.0


@pytest.mark.parametrize("source", ["ifeval", "iftrain", "logicif"])
def test_if_and_logicif_crashes_score_zero(source: str) -> None:
    """IF and LogicIF never score below 0, so their crash score (the registry default) stays 0."""
    family = registry.find_family(source)
    assert family is not None and family.failure_score({}) == 0.0
    result = compute_score(source, "text", '{"not": "a valid ground truth"}')
    assert result["score"] == 0.0 and result["reward_error"] == 1.0


@pytest.mark.parametrize("variant", ["binary", "binary_format", "binary_format_repeat", "complicated"])
def test_graph_crash_scores_the_variant_lower_bound(variant: str) -> None:
    from rewards.graph.variants import VARIANTS

    result = compute_score("graph/mcp", "[A]", '{"task": "mcp"}', graph_reward=variant)
    assert result["reward_error"] == 1.0 and result["score"] == VARIANTS[variant].bounds()[0]


def test_unknown_source_still_scores_zero() -> None:
    """An unknown source has no family and so no range; it stays the documented 0 (and is a build-time error)."""
    result = compute_score("graph", "text", "{}", graph_reward="complicated")
    assert result["score"] == 0.0 and result["unknown_source"] == 1.0
