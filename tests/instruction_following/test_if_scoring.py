"""The IF scorer: strict/loose verdicts, fraction vs all-or-nothing reward, thinking, router wiring."""

from __future__ import annotations

import pickle

import pytest

from rewards import compute_score, reward_keys
from rewards.instruction_following import IF_FAMILY, normalize_ground_truth
from rewards.instruction_following.scoring import METRIC_KEYS, loose_variants, score_instruction_following, verdicts
from rewards.registry import family_for
from rewards.thinking import split_thinking

NO_COMMA_AND_TITLE = normalize_ground_truth(
    {"instruction_ids": ["punctuation:no_comma", "detectable_format:title"], "kwargs": [{}, {}]}, where="t"
)
QUOTED = normalize_ground_truth({"instruction_ids": ["startend:quotation"], "kwargs": [{}]}, where="t")


def _score(response: str, ground_truth: str, **params: str) -> dict[str, float]:
    return score_instruction_following(split_thinking(response), ground_truth, None, **params)


def test_all_followed_scores_one_everywhere() -> None:
    result = _score("<<Rivers>>\nRivers flow to the sea.", NO_COMMA_AND_TITLE)
    assert result == {"score": 1.0, "acc": 1.0, **dict.fromkeys(METRIC_KEYS, 1.0)}


def test_fraction_and_all_rewards() -> None:
    response = "<<Rivers>>\nRivers flow, slowly."
    assert _score(response, NO_COMMA_AND_TITLE)["score"] == 0.5
    result = _score(response, NO_COMMA_AND_TITLE, if_reward="all")
    assert result["score"] == 0.0
    assert result["if_inst_strict"] == 0.5
    assert result["if_inst_strict"] == 0.5
    assert result["acc"] == result["if_prompt_strict"] == 0.0


def test_loose_accepts_what_only_passes_after_dropping_a_line() -> None:
    result = _score('Sure, here it is:\n"Rivers flow."', QUOTED)
    assert (result["if_inst_strict"], result["if_inst_loose"]) == (0.0, 1.0)
    assert (result["if_prompt_strict"], result["if_prompt_loose"]) == (0.0, 1.0)
    assert result["score"] == 0.0


def test_loose_variants_follow_the_reference_order() -> None:
    assert list(loose_variants("a*\nb\nc*")) == ["a\nb\nc", "b\nc*", "a*\nb", "b", "b\nc", "a\nb", "b"]


def test_blank_answer_follows_nothing() -> None:
    assert verdicts("   ", NO_COMMA_AND_TITLE) == ([False, False], [False, False])


def test_only_the_answer_after_thinking_is_scored() -> None:
    thinking = "<think>I could write, with commas, <<a title>>.</think>"
    assert _score(thinking + "\nRivers, flow.", NO_COMMA_AND_TITLE)["if_inst_strict"] == 0.0
    assert _score(thinking + "<<T>>\nRivers flow.", NO_COMMA_AND_TITLE)["score"] == 1.0


def test_unclosed_thinking_scores_zero() -> None:
    result = _score("<think><<Title>> no commas here", NO_COMMA_AND_TITLE)
    assert result["score"] == 0.0
    assert result["if_prompt_loose"] == 0.0


def test_unknown_if_reward_is_a_configuration_error() -> None:
    with pytest.raises(ValueError, match="if_reward"):
        _score("x", QUOTED, if_reward="mean")


def test_router_serves_if_sources_with_the_declared_keys() -> None:
    for source in ("ifeval", "ifbench", "iftrain"):
        assert family_for(source) is IF_FAMILY
    assert set(METRIC_KEYS) <= set(reward_keys())
    result = compute_score("iftrain", "<<T>>\nNo commas", NO_COMMA_AND_TITLE, if_reward="all")
    assert result["score"] == 1.0
    assert result["reward_error"] == 0.0
    assert result["think_unclosed"] == 0.0
    assert set(result) == set(reward_keys())


def test_scorer_is_picklable_for_reward_workers() -> None:
    assert pickle.loads(pickle.dumps(score_instruction_following)) is score_instruction_following


def test_same_response_same_verdict_across_calls() -> None:
    ground_truth = normalize_ground_truth(
        {
            "instruction_ids": ["change_case:english_capital", "language:response_language"],
            "kwargs": [{}, {"language": "en"}],
        },
        where="t",
    )
    response = "THIS IS AN ENGLISH SENTENCE. EVERY LETTER IS CAPITALIZED!!! AMAZING."
    assert {tuple(map(tuple, verdicts(response, ground_truth))) for _ in range(20)} == {((True, True), (True, True))}
