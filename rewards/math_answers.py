"""Mathematics answers (AIME, MATH-500, GSM8K, ...) checked with math-verify: the ``math`` task family.

Used for cross-domain checks of models trained on other tasks, on evaluation files the user supplies. Data sources
``math`` and ``math/<benchmark>`` (``math/aime24``, ``math/gsm8k``) are served, so each benchmark gets its own
metrics. The ground truth is JSON: the gold answer as a string (LaTeX allowed, ``"\\\\frac{1}{2}"``) or a number,
or an object ``{"answer": ...}``. A GSM8K ``answer`` field may be given whole: the text after its last ``####`` is
the answer, and thousands separators are dropped from plain numbers.

Checking follows verl's opt-in ``reward_score/math_verify.py``: the gold answer is wrapped in ``\\boxed{}`` and
parsed as LaTeX; the prediction (the answer after the thinking section, so a guess made while thinking is never
extracted) is parsed as expression and LaTeX; ``verify(gold, prediction)``, gold first as math-verify documents
(its comparison is not symmetric). Scores: ``score`` = ``acc`` = 1 when the answer verifies, and ``math_parsed``
= 1 when any answer could be extracted.

math-verify bounds its work with ``signal.alarm``, which exists only in a process's main thread; elsewhere (a
reward thread pool) it runs without a time limit. Its timeout exception derives from ``BaseException``, so it is
caught here by name: a sympy blow-up scores 0 instead of ending the run. math-verify is an optional dependency;
without it a math row fails with one line saying how to install it.
"""

from __future__ import annotations

import functools
import math
import re
import threading
from collections.abc import Mapping
from typing import Any

from rewards.canonical import canonical_form, load_ground_truth
from rewards.registry import Evaluation, Metric, PromptMean, Records, TaskFamily, mean, register_family
from rewards.thinking import SplitResponse

MISSING_MATH_VERIFY = "the math reward needs math-verify, which is not installed: pip install math-verify==0.9.0"
TIMEOUT_SECONDS = 5
"""math-verify's own default per parse and per verify (whole seconds; signal.alarm)."""
_THOUSANDS = re.compile(r"[+-]?\d{1,3}(,\d{3})+(\.\d+)?")


def gold_answer(ground_truth: str) -> str:
    """The gold answer text of a ground-truth JSON string (see the module docstring).

    Raises:
        ValueError: not JSON, or not a non-empty string, a finite number or an object with such an ``answer``.
    """
    value = load_ground_truth(ground_truth, "math")
    if isinstance(value, Mapping):
        if "answer" not in value:
            raise ValueError(f"math ground truth object has no 'answer' (keys {sorted(value)})")
        value = value["answer"]
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ValueError(f"math answer must be a string or a number, got {type(value).__name__}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"math answer must be finite, got {value!r}")
    text = str(value).rpartition("####")[2].strip()
    if _THOUSANDS.fullmatch(text):
        text = text.replace(",", "")
    if not text:
        raise ValueError("math answer is empty")
    return text


def normalize_ground_truth(raw: Any, *, where: str) -> str:
    """The canonical string of a math ground truth given as JSON text or as the value itself (the family's
    normaliser): a gold answer string or number, or ``{"answer": ...}``.

    Raises:
        ValueError: not JSON, or no usable gold answer (see ``gold_answer``); the message starts with ``where``.
    """
    return canonical_form(raw, where=where, check=gold_answer)


def check_ground_truth(ground_truth: str, extra_info: Mapping[str, Any] | None = None) -> None:
    """Build-time check: the gold answer is there and math-verify can parse it.

    Raises:
        ValueError: unusable ground truth, or math-verify is not installed (``MISSING_MATH_VERIFY``).
    """
    del extra_info
    if not _parsed_gold(gold_answer(ground_truth)):
        raise ValueError(f"math-verify cannot parse the gold answer {gold_answer(ground_truth)!r}")


def score_math(
    response: SplitResponse, ground_truth: str, extra_info: Mapping[str, Any] | None = None
) -> dict[str, float]:
    """The math family's scorer (``rewards.registry.ScoreFn``); an unclosed thinking section scores 0."""
    del extra_info
    gold = _parsed_gold(gold_answer(ground_truth))
    if response.think_unclosed or not response.answer.strip():
        return _result(correct=False, parsed=False)
    library = _math_verify()
    timeout = _timeout()
    try:
        predicted = library.parse(
            response.answer,
            extraction_config=[library.ExprExtractionConfig(), library.LatexExtractionConfig()],
            parsing_timeout=timeout,
        )
        correct = bool(predicted) and library.verify(list(gold), predicted, timeout_seconds=timeout)
    except library.errors.TimeoutException:
        return _result(correct=False, parsed=False)
    return _result(correct=correct, parsed=bool(predicted))


def _result(*, correct: bool, parsed: bool) -> dict[str, float]:
    return {"score": float(correct), "acc": float(correct), "math_parsed": float(parsed)}


@functools.lru_cache(maxsize=4096)
def _parsed_gold(answer: str) -> tuple:
    """The parsed gold answer, once per distinct answer (each prompt is scored once per sample)."""
    library = _math_verify()
    text = answer if "\\boxed" in answer else f"\\boxed{{{answer}}}"
    timeout = _timeout()
    try:
        return tuple(library.parse(text, extraction_config=[library.LatexExtractionConfig()], parsing_timeout=timeout))
    except library.errors.TimeoutException:
        raise ValueError(f"math-verify timed out parsing the gold answer {answer!r}") from None


def _timeout() -> int | None:
    return TIMEOUT_SECONDS if threading.current_thread() is threading.main_thread() else None


@functools.cache
def _math_verify() -> Any:
    """The math-verify module (imported on first use, so other families never need it)."""
    try:
        import math_verify
        import math_verify.errors
    except ImportError:
        raise ValueError(MISSING_MATH_VERIFY) from None
    return math_verify


def math_metrics(records: Records) -> dict[str, float]:
    """math-verify accuracy and the share of answers from which an answer could be extracted."""
    return {
        "accuracy": mean(r.get("acc", 0.0) for r in records),
        "parsed_rate": mean(r.get("math_parsed", 0.0) for r in records),
    }


EVALUATION = Evaluation(
    metrics=(
        Metric(
            "accuracy", "mean over prompts of the prompt's mean acc (math-verify's verdict)", units=PromptMean("acc")
        ),
        Metric("parsed_rate", "mean over samples of math_parsed (an answer could be extracted)"),
    ),
    headline="accuracy",
    compute=math_metrics,
    title="Mathematics (math-verify)",
    table_order=40,
)


MATH_FAMILY = register_family(
    TaskFamily(
        name="math",
        prefixes=("math", "math/"),
        ability="math",
        metric_keys=("math_parsed",),
        options={},
        score=score_math,
        normalize_ground_truth=normalize_ground_truth,
        check_ground_truth=check_ground_truth,
        evaluation=EVALUATION,
    )
)
