"""Per-unit values of a flat metric, from an evaluation's scored samples: what its interval and a paired comparison
resample.

A flat key (``rlif.eval.metrics.flatten``) names a metric of one source (``<source>/<metric>``), a family's mean over
its sources (``graph/optimal_rate``: each source weighs the same) or a source's pass@k. Its units are prompts, or
what the family declares (``rewards.registry.Metric.units``: LogicIF's question-level accuracy is per function).
Units are named ``<source>\\x00<unit>`` so that units of different sources never merge.

A family mean over S sources is ``(1/S) sum_s sum(num_s) / sum(den_s)``; scaling each unit of source s by
``1 / (S * sum(den_s))`` writes it as one ratio of sums over all units, so it resamples like any other metric.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rewards.registry import Metric, PromptMean, families, find_family, per_prompt
from rlif.eval.pass_at_k import pass_at_k

Record = Mapping[str, Any]
Units = dict[str, tuple[float, float]]

GENERIC = {"acc": PromptMean("acc"), "score": PromptMean("score")}
"""Metrics every source gets that are per-prompt means (their value weighs prompts equally)."""


def ratio_of_sums(units: Mapping[str, tuple[float, float]]) -> float:
    """A metric's value over ``units``: the sum of numerators over the sum of denominators (NaN without any)."""
    total = sum(den for _, den in units.values())
    return sum(num for num, _ in units.values()) / total if total else float("nan")


def by_source(records: Iterable[Record]) -> dict[str, list[Record]]:
    """Records grouped by ``data_source``."""
    out: dict[str, list[Record]] = defaultdict(list)
    for record in records:
        out[record["data_source"]].append(record)
    return dict(out)


def family_metric(source: str, name: str) -> Metric | None:
    """The declared metric ``name`` of ``source``'s family that has units, or None."""
    family = find_family(source)
    if family is None:
        return None
    return next((m for m in family.evaluation.metrics if m.name == name and m.units is not None), None)


def source_units(source: str, name: str, records: Sequence[Record]) -> Units | None:
    """The units of metric ``name`` of one source (``acc``, ``score``, ``pass@<k>`` or a declared metric), or None
    when the metric has no declared units."""
    if name.startswith("pass@") and name[5:].isdigit():
        k = int(name[5:])
        units = {}
        for unit, samples in per_prompt(records).items():
            if len(samples) < k:
                return None
            correct = sum(r.get("acc", 0.0) == 1.0 for r in samples)
            units[unit] = (pass_at_k(len(samples), correct, k), 1.0)
        return units
    if name in GENERIC:
        return GENERIC[name](records)
    metric = family_metric(source, name)
    return None if metric is None or metric.units is None else metric.units(records)


def metric_units(records: Iterable[Record], key: str) -> Units:
    """The units of the flat metric ``key`` in ``records`` (see the module docstring).

    Raises:
        ValueError: ``key`` names no source or family mean of these records, or a metric without units (a group
            breakdown such as ``.../by_size`` entries, a count, a share of samples).
    """
    sources = by_source(records)
    for source in sorted(sources, key=len, reverse=True):
        if key.startswith(source + "/"):
            units = source_units(source, key[len(source) + 1 :], sources[source])
            if not units:  # None, or no unit with a value (a judge that answered none of them)
                break
            return {f"{source}\x00{unit}": value for unit, value in units.items()}
    else:
        for family in families():
            mean = family.evaluation.source_mean
            if mean is None or not key.startswith(mean.prefix + "/"):
                continue
            name = key[len(mean.prefix) + 1 :]
            own = {s: r for s, r in sources.items() if find_family(s) is family}
            parts = {s: source_units(s, name, r) for s, r in own.items()}
            if own and all(parts.values()):
                return _mean_over_sources(parts)  # type: ignore[arg-type]
    raise ValueError(f"metric {key!r}: no per-prompt values in these samples (not a source's declared metric)")


def _mean_over_sources(parts: Mapping[str, Units]) -> Units:
    out = {}
    for source, units in parts.items():
        total = sum(den for _, den in units.values()) * len(parts)
        for unit, (num, den) in units.items():
            out[f"{source}\x00{unit}"] = (num / total, den / total)
    return out


def key_samples(records: Iterable[Record], key: str) -> list[Record]:
    """The samples of the sources ``key`` rests on: its source's, or every source of the family it averages."""
    sources = by_source(records)
    own = [s for s in sources if key.startswith(s + "/")]
    if own:
        return sources[max(own, key=len)]
    for family in families():
        mean = family.evaluation.source_mean
        if mean is not None and key.startswith(mean.prefix + "/"):
            return [r for s, rs in sources.items() if find_family(s) is family for r in rs]
    return []


def sample_count(records: Iterable[Record], key: str) -> int:
    """Samples of the sources ``key`` rests on."""
    return len(key_samples(records, key))


def prompt_count(records: Iterable[Record], key: str) -> int:
    """Prompts of the sources ``key`` rests on."""
    return len({(r["data_source"], r["id"]) for r in key_samples(records, key)})


def truncated_rate(records: Iterable[Record], key: str) -> float | None:
    """Share of the samples ``key`` rests on that hit the generation limit (``finish_reason`` ``length``), or None
    where generation recorded no finish reason (imported samples)."""
    samples = key_samples(records, key)
    if not any("finish_reason" in r for r in samples):
        return None
    return sum(r.get("finish_reason") == "length" for r in samples) / len(samples)
