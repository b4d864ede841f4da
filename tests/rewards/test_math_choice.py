"""The ``math_choice`` family: the harness's letter rules, ground-truth checks and metrics."""

from __future__ import annotations

import json

import pytest

from rewards import check_row, compute_score, math_choice


def _gold(answer: str, extraction: str = "choice") -> str:
    return json.dumps({"answer": answer, "extraction": extraction})


@pytest.mark.parametrize(
    ("response", "gold", "extraction", "correct", "found"),
    [
        ("So the answer is (C).", "C", "choice", True, True),
        ("the answer is (c)", "C", "choice", True, True),  # read upper-cased
        ("My choice is B", "B", "choice", True, True),
        ("Option B fails, so I pick D.", "D", "choice", True, True),  # no trigger: the last letter
        ("I pick D. Option B fails.", "D", "choice", False, True),
        ("The answer is D.\n\nWait, maybe the answer is B.", "D", "choice", True, True),  # two triggers: 1st paragraph
        ("The answer is a bit subtle, but option C holds.", "A", "choice", True, True),  # the word "a" is read as A
        ("The value is forty-two.", "A", "choice", False, False),  # option text is not matched
        ("", "A", "choice", False, False),
        ("<think>the answer is B</think>The answer is A.", "A", "choice", True, True),
        ("<think>the answer is A", "A", "choice", False, False),  # unfinished thinking: nothing read
        ("So the option is $\\boxed{\\text{B}}$, the answer is C.", "B", "final_answer", True, True),  # box first
        ("$\\boxed{(B)}$ it is.", "B", "final_answer", True, True),  # not a bare letter: letter rule fallback
        ("Both hold: $\\boxed{C, A}$", "AC", "final_answer", True, True),  # several letters, any order
        ("Both hold: $\\boxed{A}$", "AC", "final_answer", False, True),
        ("Both hold: $\\boxed{ac}$", "AC", "final_answer", False, False),  # lower case letters are not read
    ],
)
def test_letters_are_read_as_the_harness_reads_them(
    response: str, gold: str, extraction: str, correct: bool, found: bool
) -> None:
    result = compute_score("math_choice/test", response, _gold(gold, extraction))
    assert result["reward_error"] == 0.0
    assert result["acc"] == result["score"] == float(correct)
    assert result["math_choice_found"] == float(found)


@pytest.mark.parametrize(
    ("truth", "message"),
    [
        ('"C"', "must be an object"),
        ('{"answer": "F"}', "letters from ABCDE"),
        ('{"answer": ""}', "letters from ABCDE"),
        ('{"answer": "A", "extraction": "text"}', "extraction must be one of"),
        ('{"answer": "A", "options": []}', "unknown keys"),
        ("not json", "not JSON"),
    ],
)
def test_bad_ground_truth_fails_at_build_time(truth: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        check_row("math_choice/aqua", truth)


@pytest.mark.parametrize(("raw", "letters"), [(2, "C"), ("b", "B"), ("(A), C", "AC"), ("AD", "AD")])
def test_gold_fields_become_letters(raw: object, letters: str) -> None:
    assert math_choice.gold_letters(raw) == letters


@pytest.mark.parametrize("raw", [5, -1, "F", "", True, 1.0])
def test_bad_gold_fields_are_refused(raw: object) -> None:
    with pytest.raises(ValueError):
        math_choice.gold_letters(raw)


def test_metrics_are_accuracy_and_found_rate() -> None:
    records = [{"acc": 1.0, "math_choice_found": 1.0}, {"acc": 0.0, "math_choice_found": 0.0}]
    assert math_choice.choice_metrics(records) == {"accuracy": 0.5, "found_rate": 0.5}
    assert math_choice.EVALUATION.headline == "accuracy"
