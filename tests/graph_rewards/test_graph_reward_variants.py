"""The five reward variants through the router entry: formulas, NPG-Muse's measured numbers, metrics, thinking rules."""

from __future__ import annotations

import pytest
from graph_reward_instances import social_truth, tsp_truth

from rewards import compute_score, reward_keys
from rewards.graph.variants import VARIANTS

VARIANT_NAMES = ["binary", "binary_format", "binary_format_repeat", "ratio_quality_format_repeat", "complicated"]
NAMES = ["Ana Li", "Bo Chen", "Cy Diaz", "Dee Ek", "Eli Fox"]
K4_PLUS_ONE = [(a, b) for a in range(4) for b in range(a + 1, 4)] + [(3, 4)]  # max clique 4
MCP = social_truth("mcp", NAMES, K4_PLUS_ONE)
CLIQUE4 = "[Ana Li, Bo Chen, Cy Diaz, Dee Ek]"
CLIQUE3 = "[Ana Li, Bo Chen, Cy Diaz]"
LOOP = "Let me recount the clique members again. " * 6


def score(text: str, variant: str, truth: str = MCP, source: str = "graph/mcp") -> dict:
    return compute_score(source, text, truth, None, graph_reward=variant)


def think(body: str, answer: str) -> str:
    return f"<think>\n{body}\n</think>\n\n{answer}"


# Rows: NPG-Muse's measured rewards (docs/np-graph-rewards.md, section 5), per variant in VARIANT_NAMES order.
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (think("fine", CLIQUE4), [1, 1.5, 1.5, 1.5, 3.0]),  # optimal
        (think("fine", CLIQUE3), [0, 0.5, 0.5, 0.875, 1.375]),  # MCP 3 of 4
        (think("fine", "[Ana Li, Eli Fox]"), [0, 0.5, 0.5, 0.5, 0.0]),  # infeasible but formatted
        ("<think>fine</think>" + CLIQUE4, [1, 1, 1, 1, 2]),  # optimal without the "<think>\n" prefix
        (think(LOOP, CLIQUE4), [1, 1.5, 1.0, 1.0, 2.0]),  # optimal with a loop in the thinking
        (think("fine", "no answer"), [0, 0.5, 0.5, 0.5, 0.0]),  # missing
        (think("fine", "[]"), [0, 0.5, 0.5, 0.5, 0.0]),  # empty clique: feasible, v = 0, treated like res <= 0
        ("<think>\nI think " + CLIQUE4 + " and then I ran out of tokens", [0, 0.5, 0.5, 0.5, 0.0]),  # unclosed
        ("<think>\nI think " + CLIQUE4 + "</think>\n", [0, 0.5, 0.5, 0.5, 0.0]),  # answer only inside <think>
        (CLIQUE4, [1, 1, 1, 1, 2]),  # no thinking at all (no-think mode): all answer, no format bonus
    ],
)
def test_npg_muse_numbers(text, expected):
    for variant, want in zip(VARIANT_NAMES, expected, strict=True):
        assert score(text, variant)["score"] == pytest.approx(want), variant


def test_tsp_squares_quality_only_under_complicated():
    codes = ["AAA", "BBB", "CCC", "DDD"]
    w = [[0, 1, 5, 1], [1, 0, 1, 5], [5, 1, 0, 1], [1, 5, 1, 0]]  # square: perimeter 4, diagonals 5
    truth = tsp_truth(codes, w)
    text = think("x", "[AAA, CCC, BBB, DDD, AAA]")  # 5 + 1 + 5 + 1 = 12
    q = 4 / 12
    assert score(text, "ratio_quality_format_repeat", truth, "graph/tsp")["score"] == pytest.approx(0.5 + 0.5 * q)
    assert score(text, "complicated", truth, "graph/tsp")["score"] == pytest.approx(1 + 0.5 * q * q)
    assert score(text, "complicated", truth, "graph/tsp")["graph_quality"] == pytest.approx(q)


def test_metrics_and_keys():
    out = score(think("x", CLIQUE3), "ratio_quality_format_repeat")
    assert set(out) == set(reward_keys())
    assert out["acc"] == 0 and out["graph_optimal"] == 0 and out["graph_feasible"] == 1 and out["graph_missing"] == 0
    assert out["graph_quality"] == pytest.approx(0.75) and out["graph_format"] == 1 and out["graph_repeat"] == 0
    assert out["think_unclosed"] == 0 and out["reward_error"] == 0
    binary = score(think(LOOP, CLIQUE4), "binary")
    assert binary["acc"] == 1 and binary["graph_repeat"] is None  # binary never runs the loop detector
    missing = score("<think>\nstill thinking", "binary")
    assert missing["graph_missing"] == 1 and missing["think_unclosed"] == 1 and missing["graph_quality"] == 0


def test_default_variant_is_binary():
    out = compute_score("graph/mcp", think("x", CLIQUE4), MCP, None)
    assert out["score"] == 1 and out["graph_repeat"] is None


def test_unknown_variant_is_a_config_error_not_a_silent_zero():
    with pytest.raises(ValueError, match="unknown variant 'binary_fmt'"):
        score(think("x", CLIQUE4), "binary_fmt")  # the router checks option values before scoring


@pytest.mark.parametrize("variant", VARIANT_NAMES)
def test_bounds_match_the_documented_ranges(variant):
    documented = {
        "binary": (0, 1),
        "binary_format": (0, 1.5),
        "binary_format_repeat": (-0.5, 1.5),
        "ratio_quality_format_repeat": (-0.5, 1.5),
        "complicated": (-2, 3),
    }
    assert VARIANTS[variant].bounds() == documented[variant]


def test_lowest_complicated_reward_is_reached():
    assert score(LOOP + "[Ghost]", "complicated")["score"] == -2


LOWEST = {
    "binary": 0.0,
    "binary_format": 0.0,
    "binary_format_repeat": -0.5,
    "ratio_quality_format_repeat": -0.5,
    "complicated": -2.0,
}
"""Each variant's documented lowest reward: what a crashed sample must score, so a crash never beats an answer."""


@pytest.mark.parametrize("variant", VARIANT_NAMES)
def test_a_scorer_crash_scores_the_variant_lowest_reward(variant, monkeypatch):
    def broken(*args, **kwargs):
        raise ZeroDivisionError("checker bug")

    monkeypatch.setattr("rewards.graph.scorer.judge", broken)
    out = score(think("x", "[Ghost]"), variant)
    assert out["score"] == LOWEST[variant] == VARIANTS[variant].bounds()[0]
    assert out["reward_error"] == 1 and out["acc"] == 0 and set(out) == set(reward_keys())
    monkeypatch.undo()
    infeasible = score(think("x", "[Ghost]"), variant)
    assert infeasible["reward_error"] == 0 and out["score"] <= infeasible["score"]


@pytest.mark.parametrize("variant", VARIANT_NAMES)
def test_bad_ground_truth_scores_the_variant_lowest_reward(variant):
    out = score(think("x", CLIQUE4), variant, truth='{"task": "mcp"}')  # parse_ground_truth raises ValueError
    assert out["score"] == LOWEST[variant] and out["reward_error"] == 1


def test_crash_score_follows_the_default_variant(monkeypatch):
    monkeypatch.setattr("rewards.graph.scorer.judge", lambda *a, **k: 1 / 0)
    out = compute_score("graph/mcp", think("x", CLIQUE4), MCP, None)
    assert out["score"] == 0.0 and out["reward_error"] == 1
