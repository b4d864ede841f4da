"""Instruction-following ground truth: every published form in, one canonical JSON string out.

IF data comes in three shapes: IFEval/IFBench rows (``instruction_id_list`` + ``kwargs``, kwargs padded with
nulls, integers sometimes stored as floats), open-instruct labels (a Python-literal or JSON list holding one
``{"instruction_id": [...], "kwargs": [...]}``, kwargs entries possibly null) and RLIF's
``{"instruction_ids": [...], "kwargs": [...]}``. Data builders call ``normalize_ground_truth`` once per row, so
the reward only ever parses one form, and every row problem (unknown id, missing or unknown kwarg, a
non-integer count, an unknown relation) fails the build with the file, row and field in the message. Nothing is
filled in: the reference checkers draw random values for missing kwargs, which would make rewards random.

Canonical form (compact JSON, keys sorted, non-ASCII kept)::

    {"instruction_ids":["punctuation:no_comma","length_constraints:number_words"],
     "kwargs":[{},{"num_words":300,"relation":"at least"}]}
"""

from __future__ import annotations

import ast
import functools
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from rewards.canonical import canonical_json
from rewards.instruction_following.registry import InstructionSpec, get_instruction
from rewards.instruction_following.text import RELATIONS

Instruction = tuple[str, dict[str, Any]]
"""One instruction of a prompt: its id and its kwargs (only the kwargs present in the ground truth)."""

_ROW_EXTRA_KEYS = frozenset({"key", "prompt"})
"""Keys of an IFEval/IFBench row besides the ground truth; accepted and ignored so a whole row can be passed."""

_STRICT_BENCHMARKS = frozenset({"ifeval", "ifevalg"})
"""Benchmarks whose kwargs ``_check_value`` knows by name (IFBench kwargs are only converted, see
``rewards.instruction_following.ifbench``)."""

_RELATION_KWARGS = frozenset({"relation", "let_relation", "capital_relation"})
_STRING_LIST_KWARGS = frozenset({"keywords", "forbidden_words"})
_WORD_OR_LIST_KWARGS = frozenset({"first_word", "last_word", "keyword"})


def normalize_ground_truth(raw: str | Mapping[str, Any] | Sequence[Any], *, where: str) -> str:
    """Return the canonical JSON ground truth for ``raw`` in any supported form.

    Args:
        raw: an IFEval/IFBench row (or its ``instruction_id_list``/``kwargs`` part), an RLIF mapping
            ``{"instruction_ids", "kwargs"}``, an open-instruct label (one-element list of
            ``{"instruction_id", "kwargs"}``), or any of these as a JSON or Python-literal string.
        where: where the value comes from, e.g. ``"if_train.parquet row 17 field reward_model.ground_truth"``;
            every error message starts with it.

    Returns:
        The canonical JSON string (see the module docstring).

    Raises:
        ValueError: the value has none of the supported forms, names an unknown instruction id, lacks a required
            kwarg, carries a kwarg the instruction does not take, or has a kwarg of the wrong type or range.
    """
    instructions = _instructions(raw, where)
    ids = [instruction_id for instruction_id, _ in instructions]
    kwargs = [arguments for _, arguments in instructions]
    return canonical_json({"instruction_ids": ids, "kwargs": kwargs})


def check_ground_truth(ground_truth: Any, extra_info: Mapping[str, Any] | None = None) -> None:
    """Build-time check that a row's ``reward_model.ground_truth`` is canonical IF ground truth.

    Args:
        ground_truth: the stored ground truth.
        extra_info: the row's ``extra_info`` (unused; part of the task-family contract).

    Raises:
        ValueError: it is not a string, cannot be normalised, or is not already in canonical form.
    """
    del extra_info
    where = "reward_model.ground_truth"
    if not isinstance(ground_truth, str):
        raise ValueError(f"{where}: expected the canonical JSON string, got {type(ground_truth).__name__}")
    canonical = normalize_ground_truth(ground_truth, where=where)
    if canonical != ground_truth:
        raise ValueError(
            f"{where}: not in canonical form; build rows with normalize_ground_truth (expected {canonical})"
        )


@functools.lru_cache(maxsize=8192)
def parse_canonical(ground_truth: str) -> tuple[Instruction, ...]:
    """Parse canonical ground truth for scoring; cached because GRPO scores each prompt many times.

    Args:
        ground_truth: a string produced by ``normalize_ground_truth``.

    Returns:
        The instructions in order. Treat the kwargs dicts as read-only: they are shared between calls.

    Raises:
        ValueError: the string is not canonical ground truth (a data bug, caught at build time normally).
    """
    instructions = _instructions(ground_truth, "reward_model.ground_truth")
    return tuple((instruction_id, arguments) for instruction_id, arguments in instructions)


# --------------------------------------------------------------------------------------------------------------
# Forms
# --------------------------------------------------------------------------------------------------------------


def _instructions(raw: Any, where: str) -> list[Instruction]:
    ids, kwargs_list = _ids_and_kwargs(raw, where)
    if not ids:
        raise ValueError(f"{where}: no instructions")
    if len(kwargs_list) != len(ids):
        raise ValueError(f"{where}: {len(ids)} instruction ids but {len(kwargs_list)} kwargs entries")
    return [
        _checked(instruction_id, kwargs, f"{where} instruction {index} ({instruction_id})")
        for index, (instruction_id, kwargs) in enumerate(zip(ids, kwargs_list, strict=True))
    ]


def _ids_and_kwargs(raw: Any, where: str) -> tuple[list[Any], list[Any]]:
    """Recognise the form of ``raw`` and return its raw id list and kwargs list."""
    if isinstance(raw, str):
        return _ids_and_kwargs(_decode(raw, where), where)
    if isinstance(raw, Mapping):
        return _from_mapping(raw, where)
    if isinstance(raw, Sequence) and not isinstance(raw, bytes | bytearray):
        if len(raw) != 1:
            raise ValueError(f"{where}: an open-instruct label is a one-element list, got {len(raw)} elements")
        element = raw[0]
        if isinstance(element, str):  # open-instruct JSON-decodes a string element
            element = _decode(element, where)
        if not isinstance(element, Mapping):
            raise ValueError(f"{where}: the list element must be a mapping, got {type(element).__name__}")
        return _from_mapping(element, where)
    raise ValueError(f"{where}: unsupported ground truth type {type(raw).__name__}")


def _decode(text: str, where: str) -> Any:
    """JSON first (null kwargs), then a Python literal (open-instruct's ``repr`` labels with ``None``)."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return ast.literal_eval(text.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        raise ValueError(f"{where}: neither JSON nor a Python literal: {text[:120]!r}") from None


def _from_mapping(raw: Mapping[str, Any], where: str) -> tuple[list[Any], list[Any]]:
    if "func_name" in raw:
        raise ValueError(f"{where}: RLVR-IFeval 'func_name' labels (open-instruct ifeval_old) are not supported")
    for ids_key, allowed in (
        ("instruction_ids", {"instruction_ids", "kwargs"}),
        ("instruction_id_list", {"instruction_id_list", "kwargs"} | _ROW_EXTRA_KEYS),
        ("instruction_id", {"instruction_id", "kwargs"}),
    ):
        if ids_key in raw:
            extra = sorted(set(raw) - allowed)
            if extra:
                raise ValueError(f"{where}: unexpected field(s) {extra} next to {ids_key!r}")
            if "kwargs" not in raw:
                raise ValueError(f"{where}: field 'kwargs' is missing")
            ids = raw[ids_key]
            ids = [ids] if isinstance(ids, str) else ids
            kwargs = raw["kwargs"]
            if not isinstance(ids, Sequence) or not isinstance(kwargs, Sequence) or isinstance(kwargs, str):
                raise ValueError(f"{where}: {ids_key!r} and 'kwargs' must be lists")
            return list(ids), list(kwargs)
    raise ValueError(
        f"{where}: expected 'instruction_ids' (RLIF), 'instruction_id_list' (IFEval/IFBench) or 'instruction_id' "
        f"(open-instruct), got fields {sorted(raw)}"
    )


# --------------------------------------------------------------------------------------------------------------
# Kwargs
# --------------------------------------------------------------------------------------------------------------


def _checked(instruction_id: Any, kwargs: Any, where: str) -> Instruction:
    if not isinstance(instruction_id, str):
        raise ValueError(f"{where}: instruction id must be a string")
    try:
        spec = get_instruction(instruction_id)
    except KeyError:
        raise ValueError(f"{where}: unknown instruction id {instruction_id!r}") from None
    if kwargs is None:
        kwargs = {}
    if not isinstance(kwargs, Mapping):
        raise ValueError(f"{where}: kwargs must be a mapping or null, got {type(kwargs).__name__}")
    present = {name: value for name, value in kwargs.items() if value is not None}
    missing = [name for name in spec.required if name not in present]
    if missing:
        raise ValueError(f"{where}: missing required kwarg(s) {missing}")
    unknown = sorted(set(present) - set(spec.required) - set(spec.optional))
    if unknown:
        raise ValueError(f"{where}: unknown kwarg(s) {unknown}; accepted: {sorted(spec.required + spec.optional)}")
    return instruction_id, {
        name: _check_value(spec, name, value, f"{where} kwarg {name}") for name, value in present.items()
    }


def _check_value(spec: InstructionSpec, name: str, value: Any, where: str) -> Any:
    """Convert integral floats of integer kwargs to int and, for IFEval/IFEvalG, check types by kwarg name."""
    if name in spec.int_kwargs:
        value = _as_int(value, where)
        if spec.benchmark in _STRICT_BENCHMARKS and value < 0:
            raise ValueError(f"{where}: must not be negative, got {value}")
        return value
    if spec.benchmark not in _STRICT_BENCHMARKS:
        return _json_value(value, where)
    if name in _RELATION_KWARGS:
        if value not in RELATIONS:
            raise ValueError(f"{where}: must be one of {list(RELATIONS)}, got {value!r}")
        return value
    if name in _STRING_LIST_KWARGS:
        if not isinstance(value, Sequence) or isinstance(value, str) or not all(isinstance(v, str) for v in value):
            raise ValueError(f"{where}: must be a list of strings")
        return list(value)
    if name in _WORD_OR_LIST_KWARGS and isinstance(value, list):
        if not value or not all(isinstance(v, str) for v in value):
            raise ValueError(f"{where}: must be a string or a non-empty list of strings")
        return value
    if not isinstance(value, str):
        raise ValueError(f"{where}: must be a string, got {type(value).__name__}")
    if name == "letter" and len(value.strip()) != 1:
        raise ValueError(f"{where}: must be a single character, got {value!r}")
    return value


def _as_int(value: Any, where: str) -> int:
    if isinstance(value, bool):
        raise ValueError(f"{where}: must be an integer, got a boolean")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    raise ValueError(f"{where}: must be an integer, got {value!r}")


def _json_value(value: Any, where: str) -> Any:
    """Accept only JSON-representable values, so the canonical string round-trips exactly."""
    if isinstance(value, str | bool | int) or (isinstance(value, float) and math.isfinite(value)):
        return value
    if isinstance(value, list | tuple):
        return [_json_value(item, where) for item in value]
    if isinstance(value, Mapping) and all(isinstance(key, str) for key in value):
        return {key: _json_value(item, where) for key, item in value.items()}
    raise ValueError(f"{where}: value {value!r} is not representable in JSON")
