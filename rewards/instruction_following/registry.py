"""Instruction checkers keyed by their official ids (``keywords:existence``, ``count:word_count_range``, ...).

One registry serves IFEval (25 ids), open-instruct's IFEvalG training constraints (29) and IFBench (58). Each
checker is a pure function ``check(response, **kwargs) -> bool`` whose kwargs have the official names and
meanings. Required kwargs are declared, so a row missing one fails when the data is built rather than being
filled in at random (the reference IFEvalG/IFBench checkers draw random thresholds for missing kwargs).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

CheckFn = Callable[..., bool]


@dataclass(frozen=True)
class InstructionSpec:
    """The checker of one instruction id (the registry's key, e.g. ``length_constraints:number_words``).

    Attributes:
        required: kwargs that must be present (not None) in the ground truth.
        optional: kwargs that may be present; any other kwarg is a data error.
        check: ``check(response, **kwargs) -> bool``; True when the response follows the instruction. It gets
            only the kwargs present in the ground truth and never raises on any response text.
        int_kwargs: kwargs the reference data sometimes stores as floats (``3.0``) that mean integers; they are
            converted when ground truth is normalised.
        benchmark: ``ifeval``, ``ifevalg`` or ``ifbench``: which reference the semantics follow.
    """

    required: tuple[str, ...]
    optional: tuple[str, ...]
    check: CheckFn
    int_kwargs: tuple[str, ...]
    benchmark: str


_REGISTRY: dict[str, InstructionSpec] = {}


def register_instruction(
    instruction_id: str,
    *,
    benchmark: str,
    required: tuple[str, ...] = (),
    optional: tuple[str, ...] = (),
    int_kwargs: tuple[str, ...] = (),
) -> Callable[[CheckFn], CheckFn]:
    """Decorator registering ``check`` under ``instruction_id``.

    Raises:
        ValueError: the id is already registered or ``benchmark`` is not one of the three references.
    """
    if benchmark not in {"ifeval", "ifevalg", "ifbench"}:
        raise ValueError(f"{instruction_id}: unknown benchmark {benchmark!r}")

    def add(check: CheckFn) -> CheckFn:
        if instruction_id in _REGISTRY:
            raise ValueError(f"instruction id {instruction_id!r} is already registered")
        _REGISTRY[instruction_id] = InstructionSpec(
            required=required,
            optional=optional,
            check=check,
            int_kwargs=int_kwargs,
            benchmark=benchmark,
        )
        return check

    return add


def get_instruction(instruction_id: str) -> InstructionSpec:
    """Return the spec for ``instruction_id``.

    Raises:
        KeyError: unknown id (the message names it).
    """
    try:
        return _REGISTRY[instruction_id]
    except KeyError:
        raise KeyError(f"unknown instruction id {instruction_id!r}") from None


def instruction_ids(benchmark: str | None = None) -> list[str]:
    """All registered ids, or those of one benchmark."""
    return sorted(i for i, s in _REGISTRY.items() if benchmark is None or s.benchmark == benchmark)
