"""Markdown tables of an evaluation's metrics: one summary table per family, then per-group and per-instruction
detail, ready to paste into a paper draft or a pull request."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from rlif.eval.metrics import GRAPH_METRICS, IF_METRICS, LOGICIF_METRICS


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
    if_sources = {s: v for s, v in sources.items() if "prompt_level_strict_acc" in v}
    if if_sources:
        parts += [
            "",
            "## Instruction following",
            "",
            _table(["source", *IF_METRICS], [[s, *(_fmt(v[m]) for m in IF_METRICS)] for s, v in if_sources.items()]),
        ]
        for source, values in if_sources.items():
            rows = [
                [iid, str(c["count"]), _fmt(c["strict_acc"]), _fmt(c["loose_acc"])]
                for iid, c in values["per_instruction"].items()
            ]
            parts += [
                "",
                f"### {source}: per-instruction accuracy",
                "",
                _table(["instruction", "n", "strict", "loose"], rows),
            ]
    for source, values in sources.items():
        if "by_difficulty" in values:
            rows = [["all", *(_fmt(values[m]) for m in LOGICIF_METRICS)]]
            rows += [
                [level, *(_fmt(group[m]) for m in LOGICIF_METRICS)] for level, group in values["by_difficulty"].items()
            ]
            parts += ["", f"## {source}: accuracy by difficulty", "", _table(["difficulty", *LOGICIF_METRICS], rows)]
    graph_rows = []
    for source, values in sources.items():
        if "by_size" in values:
            graph_rows.append([source, "all", *(_fmt(values[m]) for m in GRAPH_METRICS)])
            graph_rows += [
                [source, size, *(_fmt(group[m]) for m in GRAPH_METRICS)] for size, group in values["by_size"].items()
            ]
    if "graph_mean_over_tasks" in metrics:
        mean = metrics["graph_mean_over_tasks"]
        graph_rows.append(["mean over tasks", "all", *(_fmt(mean[m]) for m in GRAPH_METRICS)])
        graph_rows += [
            ["mean over tasks", size, *(_fmt(group[m]) for m in GRAPH_METRICS)]
            for size, group in mean["by_size"].items()
        ]
    if graph_rows:
        parts += [
            "",
            "## Graph tasks (GraphArena rates, rlif's checker)",
            "",
            _table(["task", "size", *GRAPH_METRICS], graph_rows),
        ]
    math_rows = [[s, _fmt(v["accuracy"]), _fmt(v["parsed_rate"])] for s, v in sources.items() if "parsed_rate" in v]
    if math_rows:
        parts += ["", "## Mathematics (math-verify)", "", _table(["source", "accuracy", "parsed_rate"], math_rows)]
    return "\n".join(parts) + "\n"


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


def _fmt(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:.4f}"


def _table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(lines)
