"""Markdown tables of an evaluation's metrics: an overview, then each task family's tables as its
``rewards.registry.Evaluation`` declares them (summary, per-group and per-source detail), ready to paste into a
paper draft or a pull request."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from rewards.registry import Evaluation, Layout, TaskFamily, families, find_family
from rlif.eval.metrics import UNKNOWN_GROUP


def markdown_tables(metrics: Mapping[str, Any]) -> str:
    """All tables of ``rlif.eval.metrics.compute_metrics``' result, as one Markdown document."""
    sources: Mapping[str, Mapping[str, Any]] = metrics["sources"]
    parts = [
        "# Evaluation results",
        "",
        _table(
            ["source", "prompts", "samples/prompt", "score", "acc", *_pass_heads(sources)],
            [_overview_row(s, v, _pass_heads(sources)) for s, v in sources.items()],
        ),
    ]
    for family in sorted(families(), key=lambda f: f.evaluation.table_order):
        own = _sources_of(family, sources)
        if own and family.evaluation.metrics:
            parts += _family_tables(family.evaluation, own, metrics)
    return "\n".join(parts) + "\n"


def _sources_of(family: TaskFamily, sources: Mapping[str, Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    return {source: values for source, values in sources.items() if find_family(source) is family}


def _family_tables(
    evaluation: Evaluation, sources: Mapping[str, Mapping[str, Any]], metrics: Mapping[str, Any]
) -> list[str]:
    """The Markdown lines of one family's tables (see ``rewards.registry.Layout``), each after a blank line.

    Where generation recorded it, the headline metric's column is followed by ``truncated_rate`` (of the row's
    samples), since a headline measured on cut responses is read differently."""
    names = list(evaluation.metric_names)
    if evaluation.headline in names and any("truncated_rate" in v for v in sources.values()):
        names.insert(names.index(evaluation.headline) + 1, "truncated_rate")
    parts: list[str] = []
    if evaluation.layout is Layout.SOURCES:
        rows = [[source, *(_fmt(values.get(m)) for m in names)] for source, values in sources.items()]
        parts += ["", f"## {evaluation.title}", "", _table([evaluation.source_label, *names], rows)]
    elif evaluation.layout is Layout.GROUPS_PER_SOURCE:
        for source, values in sources.items():
            for grouping in evaluation.groupings:
                if set(values[grouping.key]) <= {UNKNOWN_GROUP}:
                    continue  # no record carries the field (a file built without it): the "all" row says it all
                rows = [["all", *(_fmt(values.get(m)) for m in names)]]
                rows += [[group, *(_fmt(g.get(m)) for m in names)] for group, g in values[grouping.key].items()]
                title = f"## {source}: {evaluation.title} by {grouping.label}"
                parts += ["", title, "", _table([grouping.label, *names], rows)]
    else:
        mean = evaluation.source_mean
        labelled = list(sources.items())
        if mean is not None and mean.key in metrics:
            labelled.append((mean.label, metrics[mean.key]))
        for grouping in evaluation.groupings:
            rows = []
            for label, values in labelled:
                rows.append([label, "all", *(_fmt(values.get(m)) for m in names)])
                rows += [[label, group, *(_fmt(g.get(m)) for m in names)] for group, g in values[grouping.key].items()]
            head = [evaluation.source_label, grouping.label, *names]
            parts += ["", f"## {evaluation.title}", "", _table(head, rows)]
    for source, values in sources.items():
        for detail in evaluation.details:
            rows = [[row, *(_cell(fields[f]) for f in detail.fields)] for row, fields in values[detail.key].items()]
            parts += ["", f"### {source}: {detail.title}", "", _table(list(detail.head), rows)]
    return parts


def _pass_heads(sources: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """pass@k columns: k = 1, then powers of two, then the largest k any source has."""
    largest = max((max(map(int, v["pass@k"]), default=0) for v in sources.values()), default=0)
    ks = sorted({k for k in (1, 2, 4, 8, 16, 32, 64, 128, largest) if 1 <= k <= largest})
    return [f"pass@{k}" for k in ks]


def _overview_row(source: str, values: Mapping[str, Any], pass_heads: Sequence[str]) -> list[str]:
    spread = values["samples_per_prompt"]
    per_prompt = str(spread["min"]) if spread["min"] == spread["max"] else f"{spread['min']}-{spread['max']}"
    passes = [_fmt(values["pass@k"].get(head.removeprefix("pass@"))) for head in pass_heads]
    return [source, str(values["prompts"]), per_prompt, _fmt(values["score"]), _fmt(values["acc"]), *passes]


def _cell(value: Any) -> str:
    """A count as it is, any other number as ``_fmt`` writes it."""
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else _fmt(value)


def _fmt(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:.4f}"


def _table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(lines)
