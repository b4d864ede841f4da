"""Benchmark metrics from scored samples, named as the papers that define them name them.

Input: the per-sample records of ``rlif.eval.scoring`` (or the ``samples.jsonl`` they were written to), grouped by
``data_source``. With several samples per prompt a rate is the mean over prompts of each prompt's mean over its
samples (every prompt weighs the same, whatever its number of samples), which equals the paper's definition at one
sample per prompt; a metric a family declares with ``units`` is their ratio of sums. The headline metrics, ``acc``
and pass@k also get a 95% bootstrap interval over prompts (``intervals``; ``rlif.eval.intervals``).

- Every source: ``score`` and ``acc`` means, ``truncated_rate`` (share of samples that hit the generation limit;
  only for generated samples, which record vLLM's ``finish_reason``), and pass@k for every k up to the smallest
  number of samples per prompt (unbiased estimator, ``rlif.eval.pass_at_k``; a sample is correct when its family's
  ``acc`` is 1: IF prompt-level strict, LogicIF output-and-stats, graph optimal, math verified).
- Each task family's own metrics, as its ``rewards.registry.Evaluation`` declares them (defined in the family's
  module under ``rewards/``): IF's prompt- and instruction-level accuracy (lm-eval's names) and per-instruction
  accuracy; LogicIF's case- and question-level accuracy, ``by_difficulty``; GraphArena's rates and NPG-Muse's
  quality ratio, ``by_size``, and their mean over tasks (GraphArena's table rows are means over tasks); math-verify's
  accuracy and parsed rate. Each declared grouping breaks the family's metrics down by a record field, and a
  declared ``SourceMean`` averages them over the family's sources, each source weighing the same.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rewards.registry import Evaluation, MetricsFn, TaskFamily, families, find_family, mean, per_prompt
from rlif.eval.intervals import bootstrap
from rlif.eval.pass_at_k import mean_pass_at_k
from rlif.eval.units import GENERIC, metric_units, prompt_count, ratio_of_sums, sample_count

Record = Mapping[str, Any]

LOWER_IS_BETTER = ("think_unclosed_rate", "reward_errors", "truncated_rate")
"""Generic metric names (the part of a flat key after the source, before any group) for which smaller values win;
each family declares its own (``rewards.registry.Metric.lower_is_better``)."""
INTERVAL_PASS_AT = (1, 8, 64)
"""pass@k values that get an interval (those no larger than the smallest sample count)."""
COUNTS = ("prompts", "samples", "samples_per_prompt")
"""Generic fields of a source's metrics that are counts, not metrics; each family declares its own."""
UNKNOWN_GROUP = "unknown"
"""Group name of records that lack the grouping field (a LogicIF row without ``difficulty_level``)."""


def lower_is_better(key: str) -> bool:
    """Whether smaller values of the flat metric ``key`` (``<source>/<metric>[/<group>]``) are better."""
    names = [*LOWER_IS_BETTER, *(m.name for f in families() for m in f.evaluation.metrics if m.lower_is_better)]
    return any(f"/{name}" in f"/{key}" for name in names)


def compute_metrics(records: Iterable[Record]) -> dict[str, Any]:
    """All metrics of a set of scored samples.

    Returns:
        ``{"sources": {data_source: {...}}, <source mean key>: {...} (one per family that declares a
        ``SourceMean`` and has sources here), "metrics": {flat name: value}}``; flat names are
        ``<source>/<metric>[/<group>]`` and ``<source>/pass@<k>``, the keys the comparison report and the ablation
        chain read.
    """
    by_source: dict[str, list[Record]] = defaultdict(list)
    for record in records:
        by_source[record["data_source"]].append(record)
    sources = {source: source_metrics(source, by_source[source]) for source in sorted(by_source)}
    out: dict[str, Any] = {"sources": sources}
    for family in families():
        source_mean = family.evaluation.source_mean
        own = {source: values for source, values in sources.items() if find_family(source) is family}
        if source_mean is not None and own:
            out[source_mean.key] = _mean_over_sources(family.evaluation, source_mean.count, own)
    out["metrics"] = flatten(out)
    out["intervals"] = intervals(by_source, out["metrics"])
    return out


def interval_keys(sources: Mapping[str, Sequence[Record]]) -> list[str]:
    """The flat keys that get an interval: each source's ``acc``, its family's headline and pass@k for k in
    ``INTERVAL_PASS_AT`` (up to its smallest sample count), and the headline of each family's mean over sources."""
    keys = []
    for source, records in sorted(sources.items()):
        family = find_family(source)
        headline = None if family is None else family.evaluation.headline
        smallest = min(len(samples) for samples in per_prompt(records).values())
        names = [headline] if headline else []
        names += ["acc", *(f"pass@{k}" for k in INTERVAL_PASS_AT if k <= smallest)]
        keys += [f"{source}/{name}" for name in dict.fromkeys(names)]
    for family in families():
        mean_of = family.evaluation.source_mean
        if mean_of is not None and family.evaluation.headline and any(find_family(s) is family for s in sources):
            keys.append(f"{mean_of.prefix}/{family.evaluation.headline}")
    return keys


def intervals(sources: Mapping[str, Sequence[Record]], flat: Mapping[str, float]) -> dict[str, dict[str, Any]]:
    """``{flat key: {value, low, high, n, level, prompts, samples}}``: the 95% bootstrap interval over units
    (``rlif.eval.intervals``) of every key of ``interval_keys`` that ``flat`` holds and whose metric declares its
    units (``rewards.registry.Metric.units``); ``n`` counts the units (prompts, or LogicIF functions)."""
    records = [record for items in sources.values() for record in items]
    out = {}
    for key in interval_keys(sources):
        if key not in flat:
            continue
        try:
            units = metric_units(records, key)
        except ValueError:  # a metric declared without per-unit values has a point value only
            continue
        nums, dens = zip(*units.values(), strict=True)
        interval = bootstrap(nums, dens)
        out[key] = {
            **interval.as_dict(),
            "prompts": prompt_count(records, key),
            "samples": sample_count(records, key),
        }
    return out


def source_metrics(source: str, records: Sequence[Record]) -> dict[str, Any]:
    """The metrics of one ``data_source`` (see the module docstring)."""
    prompts = per_prompt(records)
    sizes = [len(samples) for samples in prompts.values()]
    out: dict[str, Any] = {
        "prompts": len(prompts),
        "samples": len(records),
        "samples_per_prompt": {"min": min(sizes), "max": max(sizes)},
        "reward_errors": int(sum(r.get("reward_error", 0.0) for r in records)),
        "think_unclosed_rate": mean(r.get("think_unclosed", 0.0) for r in records),
        "pass@k": {str(k): v for k, v in pass_at_k_of(prompts).items()},
    }
    out.update(_truncation(records))
    out.update(_per_prompt_values(None, records))
    family = find_family(source)
    if family is not None:
        evaluation = family.evaluation
        out.update(family_block(family, records))
        for grouping in evaluation.groupings:
            out[grouping.key] = _by_group(
                records, grouping.field, lambda items: {**family_block(family, items), **_truncation(items)}
            )
    return out


def _truncation(records: Sequence[Record]) -> dict[str, float]:
    """``truncated_rate``, the share of samples cut at the generation limit, where generation recorded it: a
    headline that rests on cut responses is read beside it."""
    if not any("finish_reason" in r for r in records):
        return {}
    return {"truncated_rate": mean(float(r.get("finish_reason") == "length") for r in records)}


def family_block(family: TaskFamily, records: Sequence[Record]) -> dict[str, Any]:
    """The family's block of metrics, each metric with declared units replaced by its ratio over units, so that
    prompts weigh equally whatever their number of samples (equal counts give the same value)."""
    block = family.evaluation.compute(records)
    block.update(_per_prompt_values(family, records))
    return block


def _per_prompt_values(family: TaskFamily | None, records: Sequence[Record]) -> dict[str, float]:
    declared = (
        {"acc": GENERIC["acc"], "score": GENERIC["score"]}
        if family is None
        else {m.name: m.units for m in family.evaluation.metrics if m.units is not None}
    )
    out = {}
    for name, units_of in declared.items():
        out[name] = ratio_of_sums(units_of(records))  # type: ignore[misc]
    return out


def pass_at_k_of(per_prompt: Mapping[str, Sequence[Record]]) -> dict[int, float]:
    """pass@k for every k up to the smallest sample count; a sample is correct when its ``acc`` is 1."""
    counts = [(len(samples), sum(r.get("acc", 0.0) == 1.0 for r in samples)) for samples in per_prompt.values()]
    return mean_pass_at_k(counts)


def flatten(metrics: Mapping[str, Any]) -> dict[str, float]:
    """``<source>/<metric>[/<group>]`` -> value for every number of ``compute_metrics``' nested result."""
    evaluations = [family.evaluation for family in families()]
    skip = {*COUNTS, *(name for e in evaluations for name in e.counts)}
    skip |= {e.source_mean.count for e in evaluations if e.source_mean is not None}
    group_keys = {grouping.key for e in evaluations for grouping in e.groupings}
    flat: dict[str, float] = {}
    for source, values in metrics["sources"].items():
        _flatten_into(flat, source, values, skip, group_keys)
    for evaluation in evaluations:
        source_mean = evaluation.source_mean
        if source_mean is not None and source_mean.key in metrics:
            _flatten_into(flat, source_mean.prefix, metrics[source_mean.key], skip, group_keys)
    return flat


def _flatten_into(
    flat: dict[str, float], prefix: str, values: Mapping[str, Any], skip: set[str], group_keys: set[str]
) -> None:
    for key, value in values.items():
        if key in skip:
            continue
        if key == "pass@k":
            flat.update({f"{prefix}/pass@{k}": v for k, v in value.items()})
        elif key in group_keys:
            for group, group_values in value.items():
                for name, number in group_values.items():
                    if name not in skip:
                        flat[f"{prefix}/{name}/{group}"] = number
        elif isinstance(value, int | float):
            flat[f"{prefix}/{key}"] = float(value)


def _mean_over_sources(evaluation: Evaluation, count: str, sources: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Each of the family's metrics averaged over its sources (each weighs the same), overall and per group;
    ``count`` holds the number of sources."""
    names = evaluation.metric_names
    out: dict[str, Any] = {name: mean(values[name] for values in sources.values()) for name in names}
    out[count] = len(sources)
    for grouping in evaluation.groupings:
        key = grouping.key
        groups = sorted({group for values in sources.values() for group in values[key]})
        out[key] = {
            group: {name: mean(v[key][group][name] for v in sources.values() if group in v[key]) for name in names}
            for group in groups
        }
    return out


def _by_group(records: Sequence[Record], field: str, metric_fn: MetricsFn) -> dict[str, dict[str, Any]]:
    groups: dict[str, list[Record]] = defaultdict(list)
    for record in records:
        groups[str(record.get(field, UNKNOWN_GROUP))].append(record)
    return {group: metric_fn(groups[group]) for group in sorted(groups, key=_group_order)}


def _group_order(group: str) -> tuple[int, float, str]:
    """Numbered groups (curriculum intervals) in numeric order, then named ones alphabetically."""
    try:
        return (0, float(group), group)
    except ValueError:
        return (1, 0.0, group)
