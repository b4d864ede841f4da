"""Registry of task families, keyed by ``data_source`` prefix.

A task family (IF, LogicIF, graph) is one scorer plus one ground-truth checker. Families register themselves at
import time; the router looks them up by the row's ``data_source``. Duplicate prefixes are refused, and an
unknown source raises with the list of known prefixes, so a typo in a data builder fails at build time.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

ScoreFn = Callable[..., Mapping[str, float | None]]
"""``score(response: SplitResponse, ground_truth: str, extra_info: Mapping | None, **params) -> {key: value}``.

It must return ``score`` (the reward) and ``acc`` (the family's headline accuracy in [0, 1]) and may otherwise
only use the family's declared ``metric_keys``. ``params`` are the family's declared ``params`` that the run set.
It never raises on model output: a malformed answer scores, it does not crash."""

CheckFn = Callable[[str, Mapping[str, Any] | None], None]
"""``check(ground_truth, extra_info)`` raises ``ValueError`` when a row's ground truth cannot be scored."""

ParamsCheckFn = Callable[[Mapping[str, Any]], None]
"""``check_params(params)`` raises ``ValueError`` for a bad value of one of the family's reward options."""

FailureScoreFn = Callable[[Mapping[str, Any]], float]
"""``failure_score(params) -> float``: the score of a sample whose scorer raised, given the run's (already checked)
options of this family. It must be the lowest score the family can give under those options, so that a crash never
pays more than the worst real answer (under a variant whose range goes below 0, a crash scored 0 would beat an
infeasible answer and teach the policy to trigger scorer bugs)."""


def accept_any_params(params: Mapping[str, Any]) -> None:
    """Default ``check_params`` for families whose options need no value check."""


def zero_failure_score(params: Mapping[str, Any]) -> float:
    """Default ``failure_score`` for families whose scores never go below 0 (IF, LogicIF): a crash scores 0."""
    return 0.0


@dataclass(frozen=True)
class TaskFamily:
    """One family of tasks sharing a scorer.

    Attributes:
        name: short family name used in metric names (``if``, ``logicif``, ``graph``).
        prefixes: ``data_source`` values this family serves. A prefix ending in ``/`` matches every source that
            starts with it (``graph/`` serves ``graph/tsp``); any other prefix must match exactly.
        metric_keys: the extra keys the scorer returns besides ``score`` and ``acc``; prefix them with the
            family name (``if_prompt_strict``) so keys of different families never collide.
        params: reward options this family accepts from ``reward.custom_reward_function.reward_kwargs``
            (prefixed with the family name too, e.g. ``graph_reward``).
        score: the scorer (see ``ScoreFn``).
        check_ground_truth: the build-time checker (see ``CheckFn``).
        check_params: validates the values of the options a run sets (see ``ParamsCheckFn``), so a typo such as
            ``graph_reward=binery`` fails on the first sample instead of zeroing every reward.
        failure_score: the score the router gives a sample whose scorer raised (see ``FailureScoreFn``); the
            default, 0, suits families whose scores are never negative.
    """

    name: str
    prefixes: tuple[str, ...]
    metric_keys: tuple[str, ...]
    params: tuple[str, ...]
    score: ScoreFn
    check_ground_truth: CheckFn
    check_params: ParamsCheckFn = accept_any_params
    failure_score: FailureScoreFn = zero_failure_score


_FAMILIES: dict[str, TaskFamily] = {}
_METRIC_KEYS: list[str] = []
"""Union of every registered family's metric keys, in registration order (kept here so scoring never rebuilds it)."""


def register_family(family: TaskFamily) -> TaskFamily:
    """Add ``family`` to the registry.

    Raises:
        ValueError: a prefix or family name is already registered.
    """
    if family.name in {f.name for f in _FAMILIES.values()}:
        raise ValueError(f"task family {family.name!r} is already registered")
    for prefix in family.prefixes:
        if prefix in _FAMILIES:
            raise ValueError(f"data_source prefix {prefix!r} is already registered by {_FAMILIES[prefix].name!r}")
    for prefix in family.prefixes:
        _FAMILIES[prefix] = family
    _METRIC_KEYS.extend(k for k in family.metric_keys if k not in _METRIC_KEYS)
    return family


def find_family(data_source: str) -> TaskFamily | None:
    """Return the family serving ``data_source``, or None when no family does."""
    family = _FAMILIES.get(data_source)
    if family is not None:
        return family
    head, sep, _ = data_source.partition("/")
    if sep:
        return _FAMILIES.get(head + "/")
    return None


def family_for(data_source: str) -> TaskFamily:
    """Return the family serving ``data_source``.

    Raises:
        ValueError: no family serves it; the message lists the known prefixes.
    """
    family = find_family(data_source)
    if family is None:
        known = ", ".join(sorted(_FAMILIES))
        raise ValueError(f"unknown data_source {data_source!r}; known sources: {known}")
    return family


def metric_keys() -> tuple[str, ...]:
    """Every registered family's metric keys, each once, in registration order."""
    return tuple(_METRIC_KEYS)


def families() -> list[TaskFamily]:
    """All registered families, in registration order, each once."""
    return list(dict.fromkeys(_FAMILIES.values()))
