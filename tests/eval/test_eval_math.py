"""The ``math`` reward family (math-verify) through the reward entry and through score-only evaluation."""

from __future__ import annotations

import builtins
import importlib.util
import json
from pathlib import Path

import pytest
from eval_testkit import verl_file, verl_row, write_jsonl

from rewards import check_row, compute_score, math_answers
from rlif.eval.cli import main

needs_math_verify = pytest.mark.skipif(
    importlib.util.find_spec("math_verify") is None,
    reason="math-verify is not installed (pip install math-verify==0.9.0)",
)


@needs_math_verify
@pytest.mark.parametrize(
    ("response", "gold", "correct"),
    [
        ("The answer is \\boxed{033}.", "33", True),  # AIME-style leading zero
        ("<think>maybe 33</think>The answer is \\boxed{12}.", "33", False),  # a guess while thinking is not read
        ("<think>the answer is 33", "33", False),  # unclosed thinking: no answer
        ("So the answer is $\\frac{1}{2}$.", {"answer": "0.5"}, True),
        ("She pays 1234 dollars in total.", "Natalia sold 48/2 = 24 clips... #### 1,234", True),  # a GSM8K answer
        ("\\boxed{x^2 + 2x + 1}", "(x+1)^2", True),
        ("I do not know.", 7, False),
    ],
)
def test_answers_are_verified_against_the_gold(response: str, gold: object, correct: bool) -> None:
    result = compute_score("math/test", response, json.dumps(gold))
    assert result["reward_error"] == 0.0
    assert result["acc"] == result["score"] == float(correct)


@needs_math_verify
def test_parsed_flag_and_bad_ground_truth() -> None:
    assert compute_score("math", "I do not know.", json.dumps("7"))["math_parsed"] == 0.0
    assert compute_score("math", "It is 8.", json.dumps("7"))["math_parsed"] == 1.0
    for bad, message in [([1], "must be a string or a number"), ({"a": 1}, "has no 'answer'"), ("", "is empty")]:
        with pytest.raises(ValueError, match=message):
            check_row("math/aime24", json.dumps(bad))
    with pytest.raises(ValueError, match="not JSON"):
        check_row("math", "\\frac{1}{2}")


def test_missing_math_verify_is_one_clear_line(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def no_math_verify(name: str, *args: object, **kwargs: object) -> object:
        if name.startswith("math_verify"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_math_verify)
    math_answers._math_verify.cache_clear()
    math_answers._parsed_gold.cache_clear()
    try:
        with pytest.raises(
            ValueError, match=r"^the math reward needs math-verify, which is not installed: pip install"
        ):
            check_row("math", json.dumps("41"))
    finally:
        math_answers._math_verify.cache_clear()


@needs_math_verify
def test_math_accuracy_and_pass_at_k_in_score_only_mode(tmp_path: Path) -> None:
    rows = [
        verl_row("math/aime24", "aime-1", "Find x.", json.dumps("33")),
        verl_row("math/aime24", "aime-2", "Find y.", "5"),
    ]
    responses = [
        {"id": "aime-1", "response": "\\boxed{33}"},
        {"id": "aime-1", "response": "\\boxed{34}"},
        {"id": "aime-2", "response": "no idea"},
        {"id": "aime-2", "response": "\\boxed{4}"},
    ]
    args = ["--responses", str(write_jsonl(tmp_path / "r.jsonl", responses))]
    args += ["--eval-file", str(verl_file(tmp_path / "e.parquet", rows)), "--out", str(tmp_path / "o")]
    assert main(["score", *args]) == 0
    aime = json.loads((tmp_path / "o" / "metrics.json").read_text())["sources"]["math/aime24"]
    assert aime["accuracy"] == 0.25 and aime["parsed_rate"] == 0.75
    assert aime["pass@k"] == {"1": 0.25, "2": 0.5}
    assert "## Mathematics (math-verify)" in (tmp_path / "o" / "metrics.md").read_text()
