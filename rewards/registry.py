"""Registry of task families, keyed by ``data_source`` prefix: the one place that knows what each family serves.

A task family (IF, LogicIF, graph, math) declares its data sources, scorer, ground-truth normaliser and checker,
the verl ``ability`` of its rows and its reward options with their defaults. Families register themselves at
import time; the router looks them up by the row's ``data_source``, data builders ask them for the ``ability`` and
the canonical ground truth, and the recipe checks take the accepted reward options from them, so none of these is
written twice. Duplicate prefixes are refused, and an unknown source raises with the list of known prefixes, so a
typo in a data builder fails at build time.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from rewards.lookup import look_up, unknown_name

ScoreFn = Callable[..., Mapping[str, float | None]]
"""``score(response: SplitResponse, ground_truth: str, extra_info: Mapping | None, **params) -> {key: value}``.

It must return ``score`` (the reward) and ``acc`` (the family's headline accuracy in [0, 1]) and may otherwise
only use the family's declared ``metric_keys``. ``params`` are every one of the family's ``options``: the run's
value where it set one, the declared default otherwise. It never raises on model output: a malformed answer
scores, it does not crash."""

NormalizeFn = Callable[..., str]
"""``normalize_ground_truth(raw, *, where) -> str``: the canonical JSON string the scorer reads, from the ground
truth in any form the family accepts; raises ``ValueError`` starting with ``where`` when it cannot be scored."""

CheckFn = Callable[[str, Mapping[str, Any] | None], None]
"""``check(ground_truth, extra_info)`` raises ``ValueError`` when a row's ground truth cannot be scored."""

ParamsCheckFn = Callable[[Mapping[str, Any]], None]
"""``check_params(params)`` raises ``ValueError`` for a bad value of one of the family's reward options; ``params``
holds every option (defaults filled in), as the scorer gets them."""

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


@dataclass(frozen=True, eq=False)
class TaskFamily:
    """One family of tasks sharing a scorer.

    Attributes:
        name: short family name used in metric names (``if``, ``logicif``, ``graph``, ``math``).
        prefixes: ``data_source`` values this family serves. A prefix ending in ``/`` matches every source that
            starts with it (``graph/`` serves ``graph/tsp``); any other prefix must match exactly.
        ability: the verl ``ability`` column of the family's rows (verl carries it along; rlif's data builders
            write the family's value, so every row of a family has the same one).
        metric_keys: the extra keys the scorer returns besides ``score`` and ``acc``; prefix them with the
            family name (``if_prompt_strict``) so keys of different families never collide.
        options: reward options this family accepts from ``reward.custom_reward_function.reward_kwargs``, each
            with the value it takes when a run does not set it (prefixed with the family name too, e.g.
            ``graph_reward``). Read-only.
        score: the scorer (see ``ScoreFn``).
        normalize_ground_truth: turns ground truth in any accepted form into the canonical string the scorer
            reads (see ``NormalizeFn``); every data builder calls it.
        check_ground_truth: the build-time checker (see ``CheckFn``).
        check_params: validates the values of the options a run sets (see ``ParamsCheckFn``), so a typo such as
            ``graph_reward=binery`` fails on the first sample instead of zeroing every reward.
        failure_score: the score the router gives a sample whose scorer raised (see ``FailureScoreFn``); the
            default, 0, suits families whose scores are never negative.
    """

    name: str
    prefixes: tuple[str, ...]
    ability: str
    metric_keys: tuple[str, ...]
    options: Mapping[str, Any]
    score: ScoreFn
    normalize_ground_truth: NormalizeFn
    check_ground_truth: CheckFn
    check_params: ParamsCheckFn = accept_any_params
    failure_score: FailureScoreFn = zero_failure_score

    def __post_init__(self) -> None:
        object.__setattr__(self, "options", MappingProxyType(dict(self.options)))

    def resolve_options(self, kwargs: Mapping[str, Any]) -> dict[str, Any]:
        """Every option of this family: the value in ``kwargs`` where it has one, the declared default otherwise."""
        return {name: kwargs.get(name, default) for name, default in self.options.items()}


_FAMILIES: dict[str, TaskFamily] = {}
_METRIC_KEYS: list[str] = []
"""Union of every registered family's metric keys, in registration order (kept here so scoring never rebuilds it)."""


def register_family(family: TaskFamily) -> TaskFamily:
    """Add ``family`` to the registry.

    Raises:
        ValueError: a prefix, family name or reward option is already registered.
    """
    if family.name in {f.name for f in _FAMILIES.values()}:
        raise ValueError(f"task family {family.name!r} is already registered")
    for option in family.options:
        owner = next((f.name for f in _FAMILIES.values() if option in f.options), None)
        if owner is not None:
            raise ValueError(f"reward option {option!r} of {family.name!r} is already declared by {owner!r}")
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
        raise unknown_name("data_source", data_source, sorted(_FAMILIES), label="known sources", joined=True)
    return family


def metric_keys() -> tuple[str, ...]:
    """Every registered family's metric keys, each once, in registration order."""
    return tuple(_METRIC_KEYS)


def families() -> list[TaskFamily]:
    """All registered families, in registration order, each once."""
    return list(dict.fromkeys(_FAMILIES.values()))


def family_named(name: str) -> TaskFamily:
    """Return the family called ``name`` (``if``, ``logicif``, ``graph``, ``math``).

    Raises:
        ValueError: no family has that name; the message lists the known names.
    """
    by_name = {family.name: family for family in families()}
    return look_up(by_name, name, "task family", label="known families", joined=True)


def reward_options() -> dict[str, Any]:
    """Every family's reward options with their defaults, in registration order: the run settings
    ``reward.custom_reward_function.reward_kwargs.<name>`` accepts."""
    return {name: default for family in families() for name, default in family.options.items()}


def normalize_ground_truth(data_source: str, raw: Any, *, where: str) -> str:
    """The canonical ground truth of a row of ``data_source``, by the family serving it.

    Raises:
        ValueError: unknown ``data_source``, or ground truth the family cannot score (message starts with ``where``).
    """
    return family_for(data_source).normalize_ground_truth(raw, where=where)
