"""What evaluation reports about the graph tasks: GraphArena's rates and NPG-Muse's quality ratio, by size class.

Feasibility is rlif's checker, stricter than GraphArena's (duplicates and unknown names are infeasible). GraphArena's
table rows are means over tasks, so the family also reports each rate averaged over its sources (one per task).
"""

from __future__ import annotations

from rewards.registry import Evaluation, Grouping, Layout, Metric, PromptMean, Records, SourceMean, mean

METRICS = (
    Metric(
        "feasible_rate", "mean over prompts of the prompt's mean graph_feasible", units=PromptMean("graph_feasible")
    ),
    Metric(
        "optimal_rate",
        "mean over prompts of the prompt's mean graph_optimal (GraphArena's accuracy)",
        units=PromptMean("graph_optimal"),
    ),
    Metric(
        "mean_quality_ratio",
        "mean over prompts of the prompt's mean graph_quality (NPG-Muse's capped ratio, 0 unless feasible)",
        units=PromptMean("graph_quality"),
    ),
    Metric("hallucination_rate", "share of samples parsed but infeasible", lower_is_better=True),
    Metric(
        "missing_rate",
        "mean over prompts of the prompt's mean graph_missing (no answer found)",
        lower_is_better=True,
        units=PromptMean("graph_missing"),
    ),
)


def graph_metrics(records: Records) -> dict[str, float]:
    """GraphArena's rates (rlif's checker) and NPG-Muse's mean quality ratio."""
    return {
        "feasible_rate": mean(r.get("graph_feasible", 0.0) for r in records),
        "optimal_rate": mean(r.get("graph_optimal", 0.0) for r in records),
        "mean_quality_ratio": mean(r.get("graph_quality", 0.0) for r in records),
        "hallucination_rate": mean(
            float(not r.get("graph_feasible", 0.0) and not r.get("graph_missing", 0.0)) for r in records
        ),
        "missing_rate": mean(r.get("graph_missing", 0.0) for r in records),
        "samples": len(records),
    }


EVALUATION = Evaluation(
    metrics=METRICS,
    headline="optimal_rate",
    compute=graph_metrics,
    counts=("samples",),
    record_fields=("size",),
    groupings=(Grouping(field="size", key="by_size", label="size"),),
    source_mean=SourceMean(key="graph_mean_over_tasks", prefix="graph", label="mean over tasks", count="tasks"),
    title="Graph tasks (GraphArena rates, rlif's checker)",
    layout=Layout.GROUPS,
    source_label="task",
    table_order=30,
)
