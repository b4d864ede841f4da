"""Multiple-choice mathematics answers (aqua, sat_math, mmlu_stem, gaokao's choice questions): the ``math_choice``
task family.

The chosen letter is read the way the Qwen2.5-Math evaluation harness reads it (QwenLM/Qwen2.5-Math
``evaluation/parser.py`` ``choice_answer_clean`` and ``math_eval.py``, commit a45202b), so accuracies compare with
the tables made with that harness. Data sources ``math_choice/<benchmark>`` are served; the letters are A to E.

The ground truth is JSON ``{"answer": "C", "extraction": "choice"}``: ``answer`` holds the gold letters (one, or
several for a question with several right options, written in any order), ``extraction`` how the response is read:

- ``choice`` (the harness's rule for aqua, sat_math and mmlu_stem): the text after the last "answer is" or
  "choice is" (case as written), else the whole response; in it, upper-cased, the standalone letters A to E; the
  first of them after a trigger, else the last one. When a trigger occurs more than once, only the first paragraph
  (up to the first blank line) is read, the harness's guard against echoed few-shot examples.
- ``final_answer`` (its rule for the other sets, gaokao2024_mix among them): the final answer as the free-form sets
  read it (the last ``\\boxed{}``, else the text after "he answer is" or "final answer is"); when that is exactly the
  gold's kind of answer (one letter for a one-letter gold, only letters for a several-letter gold) it is the choice,
  otherwise the ``choice`` rule reads the whole response, as ``math_eval.py`` falls back.

Against a several-letter gold, only the letters A to E of what was read count, and their order does not (the
harness compares ``"CA"`` and ``"AC"`` as equal through sympy, a product of symbols). Both rules keep the harness's
quirks: the upper-casing makes a standalone English "a" the letter A ("the answer is a bit unclear" chooses A), and
with no trigger the last standalone letter of the whole response wins. Option text is never matched (the harness
does not); a response that names only the option's text chooses nothing.

Scores: ``score`` = ``acc`` = 1 for the gold letters; ``math_choice_found`` = 1 when a letter was read at all, so
``found_rate`` tells answers the rule cannot read from wrong choices. The thinking section is dropped first (the
harness's models do not think), and an unfinished one chooses nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from rewards.canonical import canonical_form, load_ground_truth
from rewards.registry import Evaluation, Metric, PromptMean, Records, TaskFamily, mean, register_family
from rewards.thinking import SplitResponse

LETTERS = "ABCDE"
EXTRACTIONS = ("choice", "final_answer")
"""How a response is read (the module docstring describes each)."""
TRIGGERS = ("choice is", "answer is")
"""The phrases after which the harness reads the chosen letter."""
_STANDALONE_LETTER = re.compile(r"\b([A-E])\b")
_TRIGGER_SPLIT = re.compile("|".join(TRIGGERS))
_FINAL_PHRASES = ("he answer is", "final answer is")
_TEXT_TAIL = re.compile(r"\\text\{.*?\}$")
_TEXT_WRAP = re.compile(r"\\text\{(.*?)\}")


@lru_cache(maxsize=1024)
def gold_choice(ground_truth: str) -> tuple[str, str]:
    """The gold letters (upper case, as given) and the extraction rule of a ground-truth JSON string, once per
    distinct string (verl scores several responses per prompt).

    Raises:
        ValueError: not JSON, not an object, letters missing or outside A to E, or an unknown extraction.
    """
    value = load_ground_truth(ground_truth, "math_choice")
    if not isinstance(value, Mapping):
        raise ValueError(f"math_choice ground truth must be an object, got {type(value).__name__}")
    unknown = sorted(set(value) - {"answer", "extraction"})
    if unknown:
        raise ValueError(f"math_choice ground truth has unknown keys {unknown}")
    answer = value.get("answer")
    if not isinstance(answer, str) or not answer or any(c not in LETTERS for c in answer):
        raise ValueError(f"math_choice answer must be letters from {LETTERS}, got {answer!r}")
    extraction = value.get("extraction", "choice")
    if extraction not in EXTRACTIONS:
        raise ValueError(f"math_choice extraction must be one of {list(EXTRACTIONS)}, got {extraction!r}")
    return answer, extraction


def gold_letters(raw: object) -> str:
    """The gold letters of a benchmark field: an option index (mmlu_stem's 0-3) or letters, with spaces, commas
    and parentheses dropped (``"(A), C"`` gives ``"AC"``).

    Raises:
        ValueError: a negative or too large index, or text that is not option letters.
    """
    if isinstance(raw, int) and not isinstance(raw, bool):
        if not 0 <= raw < len(LETTERS):
            raise ValueError(f"option index must be 0 to {len(LETTERS) - 1}, got {raw}")
        return LETTERS[raw]
    if not isinstance(raw, str):
        raise ValueError(f"the answer must be option letters or an option index, got {type(raw).__name__}")
    letters = re.sub(r"[\s,()]", "", raw).upper()
    if not letters or any(c not in LETTERS for c in letters):
        raise ValueError(f"the answer must be option letters from {LETTERS}, got {raw!r}")
    return letters


def normalize_ground_truth(raw: Any, *, where: str) -> str:
    """The canonical string of a multiple-choice ground truth, given as JSON text or as the object itself.

    Raises:
        ValueError: see ``gold_choice``; the message starts with ``where``.
    """
    return canonical_form(raw, where=where, check=gold_choice)


def check_ground_truth(ground_truth: str, extra_info: Mapping[str, Any] | None = None) -> None:
    """Build-time check of a row's ground truth.

    Raises:
        ValueError: see ``gold_choice``.
    """
    del extra_info
    gold_choice(ground_truth)


def chosen_letters(text: str, *, gold: str, extraction: str) -> str:
    """The letters a response chooses under the harness's rules (the module docstring), or "" when none.

    Args:
        text: the graded answer.
        gold: the gold letters (only their number matters: one letter or several).
        extraction: ``choice`` or ``final_answer``.

    Returns:
        One letter, or for a several-letter gold the letters read (possibly several, possibly none).
    """
    text = text.replace("\u043a\u0438", "")
    if extraction == "final_answer":
        final = _final_answer(text)
        if len(gold) == 1 and len(final) == 1 and final in LETTERS:
            return final
        if len(gold) > 1:
            return "".join(c for c in final if c in LETTERS)
    choice = _choice_letter(text)
    if len(gold) > 1:
        return "".join(c for c in choice if c in LETTERS)
    return choice


def _choice_letter(text: str) -> str:
    """The harness's ``choice_answer_clean``: one letter, or "" when the read part holds no standalone letter."""
    text = text.strip("\n")
    if any(text.count(trigger) > 1 for trigger in TRIGGERS):
        text = text.split("\n\n")[0]
    parts = _TRIGGER_SPLIT.split(text)
    after_trigger = len(parts) > 1
    tail = parts[-1].strip("\n").rstrip(".").rstrip("/").strip(" ").lstrip(":")
    letters = _STANDALONE_LETTER.findall(tail.upper())
    if not letters:
        return ""
    return letters[0] if after_trigger else letters[-1]


def _final_answer(text: str) -> str:
    """The free-form final answer, cleaned only as far as deciding whether it is option letters needs."""
    if "boxed" in text:
        answer = _boxed_tail(text.rsplit("boxed", maxsplit=1)[-1])
    else:
        for phrase in _FINAL_PHRASES:
            if phrase in text:
                answer = text.rsplit(phrase, maxsplit=1)[-1].strip()
                break
        else:
            return ""
    answer = re.sub(r"\n\s*", "", answer).lstrip(":").rstrip(".").rstrip("/").strip().rstrip(".")
    without_tail = _TEXT_TAIL.sub("", answer).strip()
    if without_tail and without_tail != answer:
        answer = without_tail
    for wrapper in ("\\!", "\\left", "\\right", "\\$", "$", "\\(", "\\)"):
        answer = answer.replace(wrapper, "")
    answer = _TEXT_WRAP.sub(r"\1", answer).replace("and", "").replace("\\mathbf", "")
    return answer.replace(" ", "")


def _boxed_tail(tail: str) -> str:
    """What follows the last ``boxed``: its brace-matched argument, or the text up to the next ``$``."""
    if not tail.startswith("{"):
        return tail.split("$", maxsplit=1)[0].strip()
    depth = 0
    for i, char in enumerate(tail):
        depth += char == "{"
        depth -= char == "}"
        if depth == 0:
            return tail[1:i]
    return tail[1:]


def score_choice(
    response: SplitResponse, ground_truth: str, extra_info: Mapping[str, Any] | None = None
) -> dict[str, float]:
    """The math_choice family's scorer (``rewards.registry.ScoreFn``); an unclosed thinking section chooses nothing."""
    del extra_info
    gold, extraction = gold_choice(ground_truth)
    if response.think_unclosed:
        return _result(correct=False, found=False)
    chosen = chosen_letters(response.answer, gold=gold, extraction=extraction)
    correct = sorted(chosen) == sorted(gold) if len(gold) > 1 else chosen == gold
    return _result(correct=correct, found=bool(chosen))


def _result(*, correct: bool, found: bool) -> dict[str, float]:
    return {"score": float(correct), "acc": float(correct), "math_choice_found": float(found)}


def choice_metrics(records: Records) -> dict[str, float]:
    """Accuracy and the share of answers from which a letter could be read."""
    return {
        "accuracy": mean(r.get("acc", 0.0) for r in records),
        "found_rate": mean(r.get("math_choice_found", 0.0) for r in records),
    }


EVALUATION = Evaluation(
    metrics=(
        Metric(
            "accuracy",
            "mean over prompts of the prompt's mean acc (the letters read equal the gold letters)",
            units=PromptMean("acc"),
        ),
        Metric("found_rate", "mean over samples of math_choice_found (a letter could be read at all)"),
    ),
    headline="accuracy",
    compute=choice_metrics,
    title="Mathematics, multiple choice (Qwen2.5-Math letter rules)",
    table_order=41,
)


MATH_CHOICE_FAMILY = register_family(
    TaskFamily(
        name="math_choice",
        prefixes=("math_choice/",),
        ability="math",
        metric_keys=("math_choice_found",),
        options={},
        score=score_choice,
        normalize_ground_truth=normalize_ground_truth,
        check_ground_truth=check_ground_truth,
        evaluation=EVALUATION,
    )
)
