"""The IF scorer: strict/loose verdicts, fraction vs all-or-nothing reward, thinking, router wiring."""

from __future__ import annotations

import pickle

import pytest

from rewards import compute_score, reward_keys
from rewards.instruction_following import IF_FAMILY, normalize_ground_truth
from rewards.instruction_following.registry import get_instruction
from rewards.instruction_following.scoring import (
    MAX_ANSWER_CHARS,
    METRIC_KEYS,
    loose_variants,
    score_instruction_following,
    verdicts,
)
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
    fractions = {
        key: 1.0 for key in METRIC_KEYS if not key.startswith(("if_inst_followed", "if_inst_total", "if_over"))
    }
    counts = {"if_inst_followed_strict": 2.0, "if_inst_followed_loose": 2.0, "if_inst_total": 2.0}
    assert result == {"score": 1.0, "acc": 1.0, **fractions, **counts, "if_over_length_cap": 0.0}


def test_logged_means_give_the_official_instruction_level_accuracy() -> None:
    """IFEval's instruction-level accuracy is followed / total over all instructions (a micro average); verl logs
    per-source means, and mean(followed) / mean(total) is exactly that ratio."""
    rows = [
        ("<<Rivers>>\nRivers flow to the sea.", NO_COMMA_AND_TITLE),  # 2 of 2
        ("<<Rivers>>\nRivers flow, slowly.", NO_COMMA_AND_TITLE),  # 1 of 2
        ("Rivers flow.", QUOTED),  # 0 of 1
    ]
    results = [compute_score("ifeval", response, truth) for response, truth in rows]
    followed = sum(r["if_inst_followed_strict"] for r in results) / len(results)
    total = sum(r["if_inst_total"] for r in results) / len(results)
    assert followed / total == 3 / 5
    assert sum(r["if_inst_strict"] for r in results) / len(results) == 0.5  # the macro mean differs


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


def test_answers_over_the_cap_follow_nothing_unless_the_cap_is_lifted() -> None:
    long_answer = "<<Rivers>>\n" + "Rivers flow to the sea. " * (MAX_ANSWER_CHARS // 24 + 1)
    assert len(long_answer) > MAX_ANSWER_CHARS
    assert compute_score("ifeval", long_answer, NO_COMMA_AND_TITLE)["score"] == 0.0
    assert compute_score("ifeval", long_answer, NO_COMMA_AND_TITLE, if_max_answer_chars=0)["score"] == 1.0
    capped = compute_score("ifeval", long_answer, NO_COMMA_AND_TITLE, if_max_answer_chars=len(long_answer))
    assert capped["score"] == 1.0


@pytest.mark.parametrize("bad", [-1, 1.5, "12000", True, None])
def test_bad_answer_cap_is_a_configuration_error(bad: object) -> None:
    with pytest.raises(ValueError, match="if_max_answer_chars"):
        compute_score("ifeval", "x", QUOTED, if_max_answer_chars=bad)


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


# A no-think answer is scored exactly as written, as the official harness scores the raw response: these are texts
# whose verdict changes when surrounding whitespace is stripped.
RAW_TEXT_CASES = [
    (
        "ifeval",
        "length_constraints:nth_paragraph_first_word",
        {"num_paragraphs": 2, "nth_paragraph": 1, "first_word": "first"},
        "\n\nFirst paragraph here.\n\nSecond paragraph here.",
    ),
    ("ifbench", "format:no_whitespace", {}, "Rivers\n"),
    ("ifbench", "format:no_whitespace", {}, " Rivers"),
]


@pytest.mark.parametrize(("data_source", "instruction_id", "kwargs", "response"), RAW_TEXT_CASES)
def test_compute_score_gives_the_raw_text_verdict(
    data_source: str, instruction_id: str, kwargs: dict[str, object], response: str
) -> None:
    ground_truth = normalize_ground_truth({"instruction_ids": [instruction_id], "kwargs": [kwargs]}, where="t")
    raw_verdict = get_instruction(instruction_id).check(response, **kwargs)
    assert raw_verdict != get_instruction(instruction_id).check(response.strip(), **kwargs)  # whitespace matters
    result = compute_score(data_source, response, ground_truth)
    assert result["reward_error"] == 0.0
    assert result["score"] == result["if_inst_strict"] == float(raw_verdict)


def test_answer_after_thinking_is_stripped() -> None:
    """Qwen3 writes a blank line after ``</think>``; that template whitespace is not graded."""
    kwargs = {"num_paragraphs": 2, "nth_paragraph": 1, "first_word": "first"}
    ground_truth = normalize_ground_truth(
        {"instruction_ids": ["length_constraints:nth_paragraph_first_word"], "kwargs": [kwargs]}, where="t"
    )
    answer = "\n\nFirst paragraph here.\n\nSecond paragraph here.\n"
    assert compute_score("ifeval", answer, ground_truth)["score"] == 0.0
    assert compute_score("ifeval", "<think>Two paragraphs.</think>" + answer, ground_truth)["score"] == 1.0


def test_answers_over_the_cap_carry_a_per_sample_flag() -> None:
    long_answer = "<<Rivers>>\n" + "Rivers flow to the sea. " * (MAX_ANSWER_CHARS // 24 + 1)
    over = compute_score("ifeval", long_answer, NO_COMMA_AND_TITLE)
    assert over["score"] == 0.0 and over["if_over_length_cap"] == 1.0
    assert compute_score("ifeval", long_answer, NO_COMMA_AND_TITLE, if_max_answer_chars=0)["if_over_length_cap"] == 0.0
    at_cap = compute_score("ifeval", long_answer, NO_COMMA_AND_TITLE, if_max_answer_chars=len(long_answer))
    assert at_cap["if_over_length_cap"] == 0.0
    short_failure = compute_score("ifeval", "Rivers, flow.", NO_COMMA_AND_TITLE)
    assert short_failure["score"] < 1.0 and short_failure["if_over_length_cap"] == 0.0
    assert compute_score("logicif", "{}", '{"output": 1, "stats": {}}')["if_over_length_cap"] is None
