"""GraphArena as published (its ten tasks, its problem text, its answer checks): the ``grapharena`` family.

Rows come from the user's copy of GraphArena (``python -m rlif.data grapharena``), one ``data_source`` per task,
``grapharena/<task>`` (``grapharena/mcp`` ... ``grapharena/neighbor``), never pooled with rlif's synthetic
``graph/<task>`` rows. Each response gets two verdicts:

* GraphArena's (``rewards.grapharena.published``): its value (objective, -1 missing, -2 hallucinated) and its
  accuracy test, so ``accuracy``, ``feasible_rate`` and ``hallucination_rate`` are the numbers of its tables;
* rlif's strict one (``rewards.grapharena.strict``): ``strict_accuracy``.

Both read only the answer after the thinking section (``rewards.thinking``): GraphArena read whole responses (for
DeepSeek-R1 its reasoning and its answer joined), so a bracket written while thinking could count there and never
counts here. A response whose thinking never closed is missing. ``score`` and ``acc`` are GraphArena's accuracy.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rewards.graph.truth import check_ground_truth as check_graph_truth
from rewards.graph.truth import parse_ground_truth as parse_graph_truth
from rewards.grapharena.problem import TASKS, normalize_ground_truth, parse_ground_truth
from rewards.grapharena.published import HALLUCINATED, MISSING, accurate, value
from rewards.grapharena.strict import strict_correct
from rewards.registry import (
    Evaluation,
    Grouping,
    Layout,
    Metric,
    PromptMean,
    Records,
    SourceMean,
    TaskFamily,
    mean,
    register_family,
)
from rewards.thinking import SplitResponse

PREFIX = "grapharena/"


def check_ground_truth(ground_truth: str, extra_info: Mapping[str, Any] | None = None) -> None:
    """Build-time check: the ground truth parses, and an NP task's strict ground truth is a valid ``graph`` one
    whose optimum is the recorded ``strict_answer``.

    Raises:
        ValueError: malformed ground truth.
    """
    del extra_info
    problem = parse_ground_truth(ground_truth)
    if problem.strict is not None:
        check_graph_truth(problem.strict)
        optimum = parse_graph_truth(problem.strict).optimum
        if optimum != problem.strict_answer:
            raise ValueError(
                f"grapharena ground truth: strict optimum {optimum} != strict_answer {problem.strict_answer}"
            )


def score_grapharena(
    response: SplitResponse, ground_truth: str, extra_info: Mapping[str, Any] | None = None
) -> dict[str, float]:
    """The family's scorer (``rewards.registry.ScoreFn``).

    Returns:
        ``score`` = ``acc`` = GraphArena's accuracy (0/1); ``grapharena_value`` (its checker's value);
        ``grapharena_feasible`` (value > 0, its tables' test), ``grapharena_hallucinated`` (value -2),
        ``grapharena_missing`` (value -1) and ``grapharena_strict`` (rlif's verdict), each 0/1.
    """
    del extra_info
    problem = parse_ground_truth(ground_truth)
    if response.think_unclosed:
        ga, strict = MISSING, False
    else:
        ga, strict = value(problem, response.answer), strict_correct(problem, response.answer)
    correct = accurate(problem.task, ga, problem.answer)
    return {
        "score": float(correct),
        "acc": float(correct),
        "grapharena_value": float(ga),
        "grapharena_feasible": float(ga > 0),
        "grapharena_hallucinated": float(ga == HALLUCINATED),
        "grapharena_missing": float(ga == MISSING),
        "grapharena_strict": float(strict),
    }


def grapharena_metrics(records: Records) -> dict[str, float]:
    """GraphArena's table rates from its own checker, and rlif's strict accuracy beside them."""
    return {
        "accuracy": mean(r.get("acc", 0.0) for r in records),
        "feasible_rate": mean(r.get("grapharena_feasible", 0.0) for r in records),
        "hallucination_rate": mean(r.get("grapharena_hallucinated", 0.0) for r in records),
        "missing_rate": mean(r.get("grapharena_missing", 0.0) for r in records),
        "strict_accuracy": mean(r.get("grapharena_strict", 0.0) for r in records),
        "samples": len(records),
    }


EVALUATION = Evaluation(
    metrics=(
        Metric(
            "accuracy",
            "mean over prompts of the prompt's mean acc (GraphArena's accuracy test on its checker's value)",
            units=PromptMean("acc"),
        ),
        Metric("feasible_rate", "share of samples whose GraphArena value is > 0 (its tables' feasibility)"),
        Metric(
            "hallucination_rate", "share of samples GraphArena scores -2 (parsed, infeasible)", lower_is_better=True
        ),
        Metric("missing_rate", "share of samples GraphArena scores -1 (nothing parseable)", True),
        Metric("strict_accuracy", "mean over samples of rlif's strict verdict (optimal, every name real and once)"),
    ),
    headline="accuracy",
    compute=grapharena_metrics,
    counts=("samples",),
    record_fields=("difficulty",),
    groupings=(Grouping(field="difficulty", key="by_difficulty", label="difficulty"),),
    source_mean=SourceMean(
        key="grapharena_mean_over_tasks", prefix="grapharena", label="mean over tasks", count="tasks"
    ),
    title="GraphArena as published (its checker; rlif's strict accuracy beside it)",
    layout=Layout.GROUPS,
    source_label="task",
    table_order=35,
)


GRAPHARENA_FAMILY = register_family(
    TaskFamily(
        name="grapharena",
        prefixes=(PREFIX,),
        ability="graph_reasoning",
        metric_keys=(
            "grapharena_value",
            "grapharena_feasible",
            "grapharena_hallucinated",
            "grapharena_missing",
            "grapharena_strict",
        ),
        options={},
        score=score_grapharena,
        normalize_ground_truth=normalize_ground_truth,
        check_ground_truth=check_ground_truth,
        evaluation=EVALUATION,
    )
)

__all__ = ["GRAPHARENA_FAMILY", "PREFIX", "TASKS", "check_ground_truth", "score_grapharena"]
