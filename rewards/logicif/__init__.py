"""LogicIF reward: did the model trace the function exactly, both its result and its statistics counters?

A LogicIF task (LogicIFGen/LogicIFEval, arXiv 2508.09125) gives the model a natural-language description of a
Python function plus an input and asks it to execute the description by hand, ending with
``{"output": <result>, "stats": {"<counter>": <value>, ...}}``. The reward is binary by default, as in the RLIF
reference reward and the LogicIFEval headline metric: 1.0 only when ``output`` and ``stats`` both match.

- The answer is the last JSON object carrying ``output`` and ``stats`` in the text after the thinking section
  (``rewards.logicif.answer``); an unclosed ``<think>`` scores 0.
- Values are compared type-strictly by default, so a boolean is not an integer (``rewards.logicif.match``); the
  official Python ``==`` is available through ``score_answer(..., equality="python")`` for comparable
  evaluation numbers.
- ``logicif_partial_credit=True`` gives 0.5 for the output plus 0.5 times the fraction of stats keys right
  (union of expected and reported keys), which is 1.0 exactly when the binary reward is.

Metrics: ``logicif_output``, ``logicif_stats``, ``logicif_both`` (= ``acc``) and ``logicif_parsed`` (an answer
object was found at all). Ground truth is the canonical JSON string made by ``normalize_ground_truth``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rewards.canonical import canonical_json
from rewards.logicif.answer import decode_strict_json, find_answer
from rewards.logicif.evaluation import EVALUATION
from rewards.logicif.match import EQUALITIES, stats_key_fraction, values_match
from rewards.registry import TaskFamily, register_family
from rewards.thinking import SplitResponse

METRIC_KEYS = ("logicif_output", "logicif_stats", "logicif_both", "logicif_parsed")
PARTIAL_CREDIT_PARAM = "logicif_partial_credit"
MAX_EXPECTED_DEPTH = 64
"""Deepest nesting accepted in ground truth; real outputs are at most lists of lists."""


@dataclass(frozen=True)
class Expected:
    """A row's decoded ground truth.

    Attributes:
        output: the expected ``output`` value (JSON: tuples are lists).
        stats: the expected statistics counters.
        task_id: the LogicIF function id (test cases of one function share it), or None when absent.
        test_case_id: the test case number within the function, or None when absent.
    """

    output: Any
    stats: dict[str, Any]
    task_id: str | None
    test_case_id: int | None


def normalize_ground_truth(raw: str | Mapping[str, Any], *, where: str) -> str:
    """Turn a LogicIF ground truth in any accepted form into rlif's canonical JSON string.

    Accepted forms, as a JSON string or a mapping: the RLIF form ``{"task_id", "code_output": {"output",
    "stats"}}`` and a LogicIFEval row (``task_id``, ``test_case_id``, ``code_output``, plus fields such as
    ``input`` and ``function`` that are ignored here). ``code_output`` may itself be a JSON string. Tuples become
    lists, as they do in the model's JSON answer.

    Args:
        raw: the ground truth or the whole row.
        where: location for error messages, e.g. ``"logicif_mini.jsonl row 12 field code_output"``.

    Returns:
        ``{"code_output": {"output": ..., "stats": {...}}, "task_id": ..., "test_case_id": ...}`` as compact JSON
        with sorted keys (ids only when present).

    Raises:
        ValueError: the ground truth cannot be scored (not JSON, no ``code_output``, missing ``output`` or
            ``stats``, stats not an object, NaN/Infinity, non-JSON values, bad ids); the message starts with
            ``where``.
    """
    expected = _parse_ground_truth(raw, where)
    canonical: dict[str, Any] = {"code_output": {"output": expected.output, "stats": expected.stats}}
    if expected.task_id is not None:
        canonical["task_id"] = expected.task_id
    if expected.test_case_id is not None:
        canonical["test_case_id"] = expected.test_case_id
    return canonical_json(canonical)


def check_ground_truth(ground_truth: str, extra_info: Mapping[str, Any] | None = None) -> None:
    """Build-time check that a row's ground truth (and curriculum fields, when present) can be used.

    Raises:
        ValueError: unusable ground truth, or an ``extra_info`` ``complexity_score``/``difficulty`` that is not a
            finite number.
    """
    _parse_ground_truth(ground_truth, "logicif ground_truth")
    for field in ("complexity_score", "difficulty"):
        if extra_info is not None and field in extra_info:
            value = extra_info[field]
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                raise ValueError(f"logicif extra_info field {field}: must be a finite number, got {value!r}")


def score_answer(
    answer: str, ground_truth: str, *, partial_credit: bool = False, equality: str = "strict"
) -> dict[str, float]:
    """Score the graded text of one response against a canonical ground truth.

    Args:
        answer: the response text after the thinking section.
        ground_truth: canonical JSON from ``normalize_ground_truth``.
        partial_credit: 0.5 * output + 0.5 * stats key fraction instead of all-or-nothing.
        equality: ``strict`` (bool is not int, numeric tolerance) or ``python`` (official LogicIFEval ``==``).

    Returns:
        ``score`` and ``acc`` in [0, 1] plus the four ``logicif_*`` metrics (each 0.0 or 1.0).

    Raises:
        ValueError: bad ground truth or options (never for any ``answer``).
    """
    _check_partial_credit(partial_credit)
    if equality not in EQUALITIES:
        raise ValueError(f"equality must be one of {EQUALITIES}, got {equality!r}")
    expected = _expected(ground_truth)
    found = find_answer(answer)
    if found is None:
        return _result(score=0.0, output=False, stats=False, parsed=False)
    output_ok = values_match(expected.output, found.output, equality=equality)
    stats_ok = values_match(expected.stats, found.stats, equality=equality)
    if partial_credit:
        reward = 0.5 * output_ok + 0.5 * stats_key_fraction(expected.stats, found.stats, equality=equality)
    else:
        reward = float(output_ok and stats_ok)
    return _result(score=reward, output=output_ok, stats=stats_ok, parsed=True)


def score(
    response: SplitResponse,
    ground_truth: str,
    extra_info: Mapping[str, Any] | None = None,
    **params: Any,
) -> dict[str, float]:
    """The LogicIF family scorer the reward router calls (see ``rewards.registry.ScoreFn``).

    Args:
        response: the response split into thinking and answer.
        ground_truth: canonical JSON from ``normalize_ground_truth``.
        extra_info: the row's extra info (unused by the reward).
        **params: ``logicif_partial_credit`` (bool, default False).

    Returns:
        ``score``, ``acc`` and the ``logicif_*`` metrics. A response whose thinking never closed scores 0.

    Raises:
        ValueError: bad ground truth or a non-boolean ``logicif_partial_credit``.
    """
    partial_credit = params.get(PARTIAL_CREDIT_PARAM, False)
    if response.think_unclosed:
        _check_partial_credit(partial_credit)
        _expected(ground_truth)
        return _result(score=0.0, output=False, stats=False, parsed=False)
    return score_answer(response.answer, ground_truth, partial_credit=partial_credit)


def _check_partial_credit(value: Any) -> None:
    if not isinstance(value, bool):
        raise ValueError(f"{PARTIAL_CREDIT_PARAM} must be true or false, got {value!r}")


def _expected(ground_truth: Any) -> Expected:
    if not isinstance(ground_truth, str):
        raise ValueError(f"logicif ground_truth must be a canonical JSON string, got {type(ground_truth).__name__}")
    return _cached_ground_truth(ground_truth)


def _result(*, score: float, output: bool, stats: bool, parsed: bool) -> dict[str, float]:
    both = output and stats
    return {
        "score": score,
        "acc": float(both),
        "logicif_output": float(output),
        "logicif_stats": float(stats),
        "logicif_both": float(both),
        "logicif_parsed": float(parsed),
    }


@functools.lru_cache(maxsize=4096)
def _cached_ground_truth(ground_truth: str) -> Expected:
    """Decode a canonical ground truth once per distinct string (each prompt is scored once per rollout)."""
    return _parse_ground_truth(ground_truth, "logicif ground_truth")


def _parse_ground_truth(raw: Any, where: str) -> Expected:
    row = _as_object(raw, where, "ground truth")
    if "code_output" not in row:
        raise ValueError(f"{where}: no code_output field")
    code_output = _as_object(row["code_output"], where, "code_output")
    for key in ("output", "stats"):
        if key not in code_output:
            raise ValueError(f"{where}: code_output has no {key!r}")
    output = _to_json_value(code_output["output"], f"{where}: code_output.output", depth=0)
    stats = _to_json_value(code_output["stats"], f"{where}: code_output.stats", depth=0)
    if not isinstance(stats, dict):
        raise ValueError(f"{where}: code_output.stats must be an object, got {type(stats).__name__}")
    task_id = row.get("task_id")
    if task_id is not None and (not isinstance(task_id, str) or not task_id):
        raise ValueError(f"{where}: task_id must be a non-empty string, got {task_id!r}")
    test_case_id = _plain_int(row.get("test_case_id"))
    if row.get("test_case_id") is not None and (test_case_id is None or test_case_id < 0):
        raise ValueError(f"{where}: test_case_id must be a non-negative integer, got {row['test_case_id']!r}")
    return Expected(output=output, stats=stats, task_id=task_id, test_case_id=test_case_id)


def _as_object(raw: Any, where: str, what: str) -> Mapping[str, Any]:
    if isinstance(raw, str):
        try:
            raw = decode_strict_json(raw)
        except ValueError as error:
            raise ValueError(f"{where}: {what} is not valid JSON: {error}") from None
    if not isinstance(raw, Mapping):
        raise ValueError(f"{where}: {what} must be a JSON object, got {type(raw).__name__}")
    return raw


def _plain_int(value: Any) -> int | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        item = value.item()  # a numpy integer from a parquet/pandas row
        return item if isinstance(item, int) and not isinstance(item, bool) else None
    return None


def _to_json_value(value: Any, where: str, depth: int) -> Any:
    """Copy ``value`` as plain JSON (tuples and numpy values become lists and scalars), refusing what JSON lacks.

    Raises:
        ValueError: NaN/Infinity, non-string object keys, nesting deeper than ``MAX_EXPECTED_DEPTH`` or a type
            JSON cannot hold.
    """
    if depth > MAX_EXPECTED_DEPTH:
        raise ValueError(f"{where} nests deeper than {MAX_EXPECTED_DEPTH} levels")
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{where} holds a non-finite number {value!r}")
        return value
    if isinstance(value, Mapping):
        copied = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise ValueError(f"{where} has a non-string key {key!r}")
            copied[key] = _to_json_value(item, f"{where}.{key}", depth + 1)
        return copied
    if isinstance(value, list | tuple):
        return [_to_json_value(item, f"{where}[{index}]", depth + 1) for index, item in enumerate(value)]
    if hasattr(value, "tolist") and not isinstance(value, str | bytes):
        # numpy scalars and arrays, as pandas hands back parquet columns
        return _to_json_value(value.tolist(), where, depth)
    raise ValueError(f"{where} holds a {type(value).__name__}, which JSON cannot represent")


register_family(
    TaskFamily(
        name="logicif",
        prefixes=("logicif",),
        ability="logic_instruction_following",
        metric_keys=METRIC_KEYS,
        options={PARTIAL_CREDIT_PARAM: False},
        score=score,
        normalize_ground_truth=normalize_ground_truth,
        check_ground_truth=check_ground_truth,
        check_params=lambda params: _check_partial_credit(params[PARTIAL_CREDIT_PARAM]),
        evaluation=EVALUATION,
    )
)
