"""Registry of task families, keyed by ``data_source`` prefix: the one place that knows what each family serves.

A task family (IF, LogicIF, graph, math) declares its data sources, scorer, ground-truth normaliser and checker,
the verl ``ability`` of its rows and its reward options with their defaults, and what evaluation and training
report about it (``Evaluation``, ``training_flags``). Families register themselves at import time; the router looks
them up by the row's ``data_source``, data builders ask them for the ``ability`` and the canonical ground truth, the
recipe checks take the accepted reward options from them, and evaluation, its tables and the training feedback hook
read their declarations, so none of these is written twice and no code outside a family's module names it.
Duplicate prefixes are refused, and an unknown source raises with the list of known prefixes, so a typo in a data
builder fails at build time.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
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


Records = Sequence[Mapping[str, Any]]
"""Scored samples as evaluation records them (one ``samples.jsonl`` record each: ``id``, ``data_source``, the
family's ``record_fields``, every score key of the sample, and the family's ``sample_details``)."""

MetricsFn = Callable[[Records], dict[str, Any]]
"""``compute(records) -> {name: value}``: a family's block of the metrics of one source, or of one group of it, in
the order ``metrics.json`` lists it. It holds every declared ``Metric`` and may add counts (``Evaluation.counts``)
and nested detail (``Evaluation.details``); ``records`` is never empty."""

SampleDetailsFn = Callable[..., Mapping[str, Any]]
"""``sample_details(response: SplitResponse, ground_truth, scores, params, *, where) -> {key: value}``: fields
evaluation adds to a sample's record beside its scores. ``scores`` is what the scorer returned, ``params`` the
family's options as the evaluation ran them. It raises ``RuntimeError`` starting with ``where`` when the detail
disagrees with ``scores`` (a scoring bug)."""


def mean(values: Iterable[float]) -> float:
    """The mean of ``values``, NaN when there are none (a metric with nothing to average is unknown, not 0)."""
    items = [float(v) for v in values]
    return sum(items) / len(items) if items else math.nan


def per_prompt(records: Iterable[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    """Records grouped by prompt (``id``), prompts in first-seen order."""
    out: dict[str, list[Mapping[str, Any]]] = {}
    for record in records:
        out.setdefault(record["id"], []).append(record)
    return out


UnitsFn = Callable[[Records], dict[str, tuple[float, float]]]
"""``units(records) -> {unit: (numerator, denominator)}``: a metric written as a ratio of sums over its sampling units
(prompts, or LogicIF's functions), each unit's samples kept together, so that evaluation can bootstrap the metric
over units and pair two evaluations unit by unit (``rlif.eval.intervals``). ``sum(numerators) / sum(denominators)``
is the metric, every prompt weighing the same whatever its number of samples."""


class PromptMean:
    """``units`` of a rate that is the mean over prompts of each prompt's mean of a per-sample record key.

    A small class, not a closure, so a declaration stays picklable.
    """

    def __init__(self, key: str) -> None:
        self.key = key

    def __call__(self, records: Records) -> dict[str, tuple[float, float]]:
        return {
            unit: (mean(float(r.get(self.key) or 0.0) for r in samples), 1.0)
            for unit, samples in per_prompt(records).items()
        }


@dataclass(frozen=True)
class Metric:
    """One evaluation metric of a family, as its benchmark's paper names it.

    Attributes:
        name: the key in the source's metrics and the last part of its flat name (``<source>/<name>``).
        aggregation: how samples and prompts combine into it, in words (a reader of ``metrics.json`` should not
            need the code to know whether a rate is per sample, per instruction or per function).
        lower_is_better: whether smaller values win (comparison reports and ablation chains rank by it).
        units: the metric as a ratio of sums over its sampling units (see ``UnitsFn``), or None. A metric with
            units gets a confidence interval in every evaluation, can be compared between evaluations, and its
            value is the ratio (prompts weigh equally).
    """

    name: str
    aggregation: str
    lower_is_better: bool = False
    units: UnitsFn | None = None


@dataclass(frozen=True)
class Grouping:
    """A breakdown of a family's metrics by a field of its records (LogicIF difficulty, graph size class).

    Attributes:
        field: the record field (one of the family's ``record_fields``); a record without it falls in the group
            ``unknown``.
        key: the key the groups are written under in the source's metrics (``by_size``).
        label: the column head naming the group in the tables (``size``).
    """

    field: str
    key: str
    label: str


@dataclass(frozen=True)
class SourceMean:
    """The family's metrics averaged over its sources, each source weighing the same, overall and per group.

    Benchmarks that report one row over several sources (GraphArena's tables are means over tasks) need it.

    Attributes:
        key: the key of the mean in the evaluation's metrics (``graph_mean_over_tasks``).
        prefix: the first part of its flat names (``<prefix>/<metric>[/<group>]``).
        label: the name of its rows in the tables.
        count: the key holding the number of sources averaged.
    """

    key: str
    prefix: str
    label: str
    count: str = "sources"


@dataclass(frozen=True)
class Detail:
    """A nested table in a source's metrics (IF's per-instruction accuracy): ``{row name: {field: value}}``.

    Attributes:
        key: the key of the table in the source's metrics.
        title: the heading of its table, after the source's name.
        head: the column heads, the row name's first.
        fields: the field of each later column, in order.
    """

    key: str
    title: str
    head: tuple[str, ...]
    fields: tuple[str, ...]


class Layout(enum.Enum):
    """How a family's summary table in ``metrics.md`` is laid out."""

    SOURCES = "sources"
    """One table, one row per source."""
    GROUPS_PER_SOURCE = "groups_per_source"
    """One table per source and grouping: an ``all`` row, then one row per group."""
    GROUPS = "groups"
    """One table per grouping over all sources: per source an ``all`` row and its groups, then the source mean's."""


def no_metrics(records: Records) -> dict[str, Any]:
    """Default ``Evaluation.compute``: a family that declares no metrics adds none to the generic ones."""
    return {}


@dataclass(frozen=True)
class Evaluation:
    """What evaluation reports about a family beyond the metrics every source gets (score and ``acc`` means,
    pass@k, truncation and health rates).

    The defaults declare nothing, so a family's sources are still evaluated on the generic metrics.

    Attributes:
        metrics: the family's metrics, in the order its tables show them.
        headline: the name of the metric its benchmark leads with (one of ``metrics``), or None.
        compute: the family's block of a source's metrics (see ``MetricsFn``); also run per group.
        counts: integer fields of that block that are counts, not metrics (flat metrics leave them out).
        details: nested tables in that block (flat metrics leave them out; ``metrics.md`` shows each per source).
        record_fields: ``extra_info`` fields copied into each sample's record, for ``compute`` and the groupings.
        groupings: the breakdowns of the metrics by a record field.
        source_mean: the mean over sources the family's benchmark reports, or None.
        sample_details: fields added to each sample's record (see ``SampleDetailsFn``), or None.
        options: reward options evaluation uses unless the user sets them (e.g. no length cap where the official
            harness has none); each must be one of the family's ``options``.
        title: the heading of the family's summary table (with ``GROUPS_PER_SOURCE``, after the source's name and
            followed by ``by <grouping label>``).
        layout: how that table is laid out (see ``Layout``).
        source_label: the head of the column naming the source.
        table_order: where the family's tables come in ``metrics.md``; ties keep registration order.
    """

    metrics: tuple[Metric, ...] = ()
    headline: str | None = None
    compute: MetricsFn = no_metrics
    counts: tuple[str, ...] = ()
    details: tuple[Detail, ...] = ()
    record_fields: tuple[str, ...] = ()
    groupings: tuple[Grouping, ...] = ()
    source_mean: SourceMean | None = None
    sample_details: SampleDetailsFn | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    title: str = ""
    layout: Layout = Layout.SOURCES
    source_label: str = "source"
    table_order: int = 100

    def __post_init__(self) -> None:
        object.__setattr__(self, "options", MappingProxyType(dict(self.options)))

    @property
    def metric_names(self) -> tuple[str, ...]:
        """The names of ``metrics``, in order."""
        return tuple(metric.name for metric in self.metrics)

    def check(self, family: str, options: Mapping[str, Any]) -> None:
        """Refuse a declaration that contradicts itself.

        Raises:
            ValueError: repeated metric names, a headline that is not a metric, a grouping field that is not a
                record field, a grouped layout without a grouping, or an evaluation option the family lacks.
        """
        names = self.metric_names
        if len(set(names)) != len(names):
            raise ValueError(f"{family}: evaluation metrics repeat a name: {list(names)}")
        if self.headline is not None and self.headline not in names:
            raise ValueError(f"{family}: headline {self.headline!r} is not one of its metrics {list(names)}")
        for grouping in self.groupings:
            if grouping.field not in self.record_fields:
                raise ValueError(f"{family}: grouping field {grouping.field!r} is not a record field")
        if self.layout is not Layout.SOURCES and not self.groupings:
            raise ValueError(f"{family}: layout {self.layout.value!r} needs a grouping")
        unknown = sorted(set(self.options) - set(options))
        if unknown:
            raise ValueError(f"{family}: evaluation options {unknown} are not reward options of the family")


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
        evaluation: what evaluation reports about the family (see ``Evaluation``); the default adds nothing to
            the metrics every source gets.
        training_flags: per-sample 0/1 ``metric_keys`` whose rate per source the training feedback hook logs
            (``train/<source>/<flag>``): verl logs reward extras only in validation.
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
    evaluation: Evaluation = Evaluation()
    training_flags: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "options", MappingProxyType(dict(self.options)))
        self.evaluation.check(self.name, self.options)
        stray = sorted(set(self.training_flags) - set(self.metric_keys))
        if stray:
            raise ValueError(f"{self.name}: training flags {stray} are not metric keys of the family")

    def resolve_options(self, kwargs: Mapping[str, Any]) -> dict[str, Any]:
        """Every option of this family: the value in ``kwargs`` where it has one, the declared default otherwise."""
        return {name: kwargs.get(name, default) for name, default in self.options.items()}


_FAMILIES: dict[str, TaskFamily] = {}
_METRIC_KEYS: list[str] = []
"""Union of every registered family's metric keys, in registration order (kept here so scoring never rebuilds it)."""
_TRAINING_FLAGS: list[str] = []
"""Union of every registered family's training flags, in registration order (the hook reads it every step)."""


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
    _TRAINING_FLAGS.extend(k for k in family.training_flags if k not in _TRAINING_FLAGS)
    return family


def unregister_family(family: TaskFamily) -> None:
    """Remove ``family`` from the registry (tests register throwaway families; shipped ones never leave).

    Raises:
        ValueError: ``family`` is not registered.
    """
    if family not in _FAMILIES.values():
        raise ValueError(f"task family {family.name!r} is not registered")
    for prefix in family.prefixes:
        del _FAMILIES[prefix]
    remaining = families()
    _METRIC_KEYS[:] = dict.fromkeys(k for f in remaining for k in f.metric_keys)
    _TRAINING_FLAGS[:] = dict.fromkeys(k for f in remaining for k in f.training_flags)


@contextmanager
def registered(family: TaskFamily) -> Iterator[TaskFamily]:
    """Register ``family`` for the duration of a ``with`` block, then remove it, whatever the block raised."""
    register_family(family)
    try:
        yield family
    finally:
        unregister_family(family)


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


def training_flags() -> tuple[str, ...]:
    """Every registered family's training flags, each once, in registration order."""
    return tuple(_TRAINING_FLAGS)


def evaluation_options() -> dict[str, Any]:
    """The reward options evaluation uses unless the user sets them: every family's ``Evaluation.options``."""
    return {name: value for family in families() for name, value in family.evaluation.options.items()}


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
