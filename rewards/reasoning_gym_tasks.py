"""Procedurally generated reasoning tasks of reasoning-gym (0.1.25), scored by its own scorers: the
``reasoning_gym`` task family.

Data sources ``reasoning_gym/<task>`` are served (``python -m rlif.data reasoning-gym`` builds the rows). The ground
truth is JSON ``{"task": <task name>, "entry": <reasoning-gym's item>}``: the item as the task's dataset produced it
(``question``, ``answer``, ``metadata``), which is everything its scorer reads.

The answer is read as reasoning-gym's training reads it (``reasoning_gym.utils.extract_answer``): the content of the
last ``<answer>…</answer>`` (one optional whitespace character dropped inside each tag, then stripped), found in
the text after the thinking section. A response without such a span, or whose thinking never closed, has no answer
and scores 0, as reasoning-gym scores ``None``.

The score is the task's own ``score_answer(answer, entry)``, so partial credit is kept where the task gives it (the
default scorer of number_filtering, maze and base_conversion pays ``len(oracle) / len(answer)`` when the oracle is a
substring of a longer answer; string_insertion pays 0.1 for the right string written as a list of characters).
``acc``, the success indicator the curriculum gates read, is 1 only for a full score of 1.0.

One deviation, for safety: string_insertion's scorer calls ``eval()`` on the model's answer to read it as a list of
characters. rlif reads it with ``ast.literal_eval`` instead, which accepts the same literal lists, tuples and
strings, so its scores agree on every literal (the agreement set holds such answers). An answer that is a Python
expression rather than a literal (``list("ABC")``, ``["A"] * 3``) gets reasoning-gym's 0.1 there and 0 here; the
agreement set lists these as the documented deviation cases. docs/reasoning-gym.md describes the family.

reasoning-gym is imported on the first scored answer, not with ``rewards`` (its import takes seconds), and each
task's scorer is bound once per process to a one-item dataset of the task (``score_answer`` is an instance method;
the scorers of the supported tasks read only ``entry``).
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Callable, Mapping
from typing import Any

from rewards.canonical import canonical_form, load_ground_truth
from rewards.registry import (
    Evaluation,
    Grouping,
    Metric,
    PromptMean,
    Records,
    SourceMean,
    TaskFamily,
    mean,
    register_family,
)
from rewards.thinking import SplitResponse

PREFIX = "reasoning_gym/"
"""Every source of the family is ``reasoning_gym/<task>``."""

TASKS = ("base_conversion", "family_relationships", "maze", "number_filtering", "string_insertion")
"""The reasoning-gym tasks whose scorers were read and are supported. A task is added here once its
``score_answer`` is known to read only ``entry`` and to run no model-written code (or, like string_insertion, has a
port in ``_PORTED_SCORERS``)."""

_ANSWER_SPAN = re.compile(r"<answer>\s?(.*?)\s?</answer>", flags=re.DOTALL)
"""reasoning-gym's ``extract_answer`` pattern (``reasoning_gym/utils.py``), its last match taken."""

STRING_INSERTION_LIST_CREDIT = 0.1
"""string_insertion's score for the right string written as a sequence of characters (its ``score_answer``)."""


def extract_answer(text: str) -> str | None:
    """The stripped content of the last ``<answer>…</answer>`` span of ``text``, or None when there is none."""
    spans = _ANSWER_SPAN.findall(text)
    return spans[-1].strip() if spans else None


def parse_ground_truth(ground_truth: str) -> tuple[str, dict[str, Any]]:
    """The task name and the item of a ground-truth JSON string.

    Raises:
        ValueError: not JSON, not an object, unknown keys, an unsupported task, or an item without a string answer.
    """
    value = load_ground_truth(ground_truth, "reasoning_gym")
    if not isinstance(value, Mapping):
        raise ValueError(f"reasoning_gym ground truth must be an object, got {type(value).__name__}")
    if set(value) != {"task", "entry"}:
        raise ValueError(f"reasoning_gym ground truth needs exactly the keys ['entry', 'task'], got {sorted(value)}")
    task, entry = value["task"], value["entry"]
    if task not in TASKS:
        raise ValueError(f"reasoning_gym task must be one of {list(TASKS)}, got {task!r}")
    if not isinstance(entry, Mapping) or not isinstance(entry.get("answer"), str):
        raise ValueError("reasoning_gym entry must be an object with a string 'answer'")
    return task, dict(entry)


def normalize_ground_truth(raw: Any, *, where: str) -> str:
    """The canonical string of a reasoning-gym ground truth, given as JSON text or as the object itself.

    Raises:
        ValueError: see ``parse_ground_truth``; the message starts with ``where``.
    """
    return canonical_form(raw, where=where, check=parse_ground_truth)


def check_ground_truth(ground_truth: str, extra_info: Mapping[str, Any] | None = None) -> None:
    """Build-time check of a row's ground truth.

    Raises:
        ValueError: see ``parse_ground_truth``.
    """
    del extra_info
    parse_ground_truth(ground_truth)


@functools.lru_cache(maxsize=256)
def _cached_ground_truth(ground_truth: str) -> tuple[str, dict[str, Any]]:
    """Parsed ground truth, cached on the exact string (a group's responses share one)."""
    return parse_ground_truth(ground_truth)


def score_string_insertion(answer: str, entry: Mapping[str, Any]) -> float:
    """string_insertion's ``score_answer`` with ``ast.literal_eval`` in place of ``eval`` (the module docstring).

    Returns:
        1.0 for the oracle string, 0.1 for a literal sequence of strings that joins to it, else 0.0.
    """
    oracle = entry["answer"]
    if answer == oracle:
        return 1.0
    try:
        joined = "".join(ast.literal_eval(answer))
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return 0.0
    return STRING_INSERTION_LIST_CREDIT if joined == oracle else 0.0


_PORTED_SCORERS: dict[str, Callable[[str, Mapping[str, Any]], float]] = {
    "string_insertion": score_string_insertion,
}
"""Tasks whose reasoning-gym scorer runs model-written code, with rlif's safe port of it."""


@functools.cache
def task_scorer(task: str) -> Callable[[str, Mapping[str, Any]], float]:
    """The scorer of ``task``: rlif's port where ``_PORTED_SCORERS`` has one, else reasoning-gym's own
    ``score_answer`` bound to a one-item dataset of the task (built once per process).

    Raises:
        ValueError: ``task`` is not one of ``TASKS``.
    """
    if task not in TASKS:
        raise ValueError(f"reasoning_gym task must be one of {list(TASKS)}, got {task!r}")
    if task in _PORTED_SCORERS:
        return _PORTED_SCORERS[task]
    import reasoning_gym

    return reasoning_gym.create_dataset(task, seed=0, size=1).score_answer


def score_reasoning_gym(
    response: SplitResponse, ground_truth: str, extra_info: Mapping[str, Any] | None = None
) -> dict[str, float]:
    """The reasoning_gym family's scorer (``rewards.registry.ScoreFn``): the task's score in [0, 1] of the last
    answer span, 0 without one; ``acc`` is 1 for a full score only."""
    del extra_info
    task, entry = _cached_ground_truth(ground_truth)
    answer = None if response.think_unclosed else extract_answer(response.answer)
    if answer is None:
        return _result(0.0, answered=False)
    return _result(float(task_scorer(task)(answer, entry)), answered=True)


def _result(score: float, *, answered: bool) -> dict[str, float]:
    return {
        "score": score,
        "acc": float(score == 1.0),
        "reasoning_gym_answered": float(answered),
        "reasoning_gym_partial": float(0.0 < score < 1.0),
    }


def reasoning_gym_metrics(records: Records) -> dict[str, float]:
    """Accuracy (full score), mean score (partial credit included), and the answered and partial-credit rates."""
    return {
        "accuracy": mean(r.get("acc", 0.0) for r in records),
        "mean_score": mean(r.get("score", 0.0) for r in records),
        "answered_rate": mean(r.get("reasoning_gym_answered", 0.0) for r in records),
        "partial_rate": mean(r.get("reasoning_gym_partial", 0.0) for r in records),
    }


EVALUATION = Evaluation(
    metrics=(
        Metric(
            "accuracy",
            "mean over prompts of the prompt's mean acc (reasoning-gym's score is 1.0)",
            units=PromptMean("acc"),
        ),
        Metric("mean_score", "mean over samples of reasoning-gym's score (partial credit included)"),
        Metric("answered_rate", "share of samples with an <answer> span after the thinking"),
        Metric("partial_rate", "share of samples with partial credit only (0 < score < 1)"),
    ),
    headline="accuracy",
    compute=reasoning_gym_metrics,
    record_fields=("level",),
    groupings=(Grouping(field="level", key="by_level", label="level"),),
    source_mean=SourceMean(
        key="reasoning_gym_mean_over_tasks", prefix="reasoning_gym", label="mean over tasks", count="tasks"
    ),
    title="reasoning-gym tasks (their own scorers; accuracy is a full score)",
    source_label="task",
    table_order=45,
)


REASONING_GYM_FAMILY = register_family(
    TaskFamily(
        name="reasoning_gym",
        prefixes=(PREFIX,),
        ability="reasoning",
        metric_keys=("reasoning_gym_answered", "reasoning_gym_partial"),
        options={},
        score=score_reasoning_gym,
        normalize_ground_truth=normalize_ground_truth,
        check_ground_truth=check_ground_truth,
        evaluation=EVALUATION,
        training_flags=("reasoning_gym_answered",),
    )
)
