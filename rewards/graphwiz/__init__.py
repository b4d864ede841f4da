"""GraphWiz's test tasks (GraphInstruct) with exact checkers: the ``graphwiz`` family.

Rows come from the user's copy of GraphWiz's test set (``python -m rlif.data graphwiz``), one ``data_source`` per
task, ``graphwiz/<task>`` (``rewards.graphwiz.problem.TASKS``), never pooled with rlif's synthetic graph rows. Each
response gets two verdicts, both on the answer after the thinking section (a response whose thinking never closed
is wrong under both):

* rlif's exact one (``rewards.graphwiz.exact``): the graph, rebuilt from the question, decides (``score``, ``acc``,
  the ``accuracy`` metric);
* GraphWiz's (``rewards.graphwiz.published``): its ``evaluate_nlg.py`` rule against its reference answer
  (``graphwiz_accuracy``, the number of its tables).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rewards.graphwiz.exact import exact_answer, exact_correct
from rewards.graphwiz.problem import TASKS, normalize_ground_truth, parse_ground_truth
from rewards.graphwiz.published import graphwiz_correct
from rewards.registry import (
    Evaluation,
    Metric,
    PromptMean,
    Records,
    SourceMean,
    TaskFamily,
    mean,
    register_family,
)
from rewards.thinking import SplitResponse

PREFIX = "graphwiz/"


def check_ground_truth(ground_truth: str, extra_info: Mapping[str, Any] | None = None) -> None:
    """Build-time check: the ground truth parses and its ``exact`` is what the graph gives.

    Raises:
        ValueError: malformed ground truth, or an ``exact`` the graph contradicts.
    """
    del extra_info
    problem = parse_ground_truth(ground_truth)
    computed = exact_answer(problem.question, problem.answer)
    if computed != problem.exact or type(computed) is not type(problem.exact):
        raise ValueError(f"graphwiz ground truth: exact {problem.exact!r}, but the graph gives {computed!r}")


def score_graphwiz(
    response: SplitResponse, ground_truth: str, extra_info: Mapping[str, Any] | None = None
) -> dict[str, float]:
    """The family's scorer (``rewards.registry.ScoreFn``).

    Returns:
        ``score`` = ``acc`` = rlif's exact verdict (0/1) and ``graphwiz_published`` (GraphWiz's rule, 0/1).
    """
    del extra_info
    problem = parse_ground_truth(ground_truth)
    if response.think_unclosed:
        exact = published = False
    else:
        exact = exact_correct(problem, response.answer)
        published = graphwiz_correct(problem.task, problem.answer, response.answer)
    return {"score": float(exact), "acc": float(exact), "graphwiz_published": float(published)}


def graphwiz_metrics(records: Records) -> dict[str, float]:
    """rlif's exact accuracy and GraphWiz's own beside it."""
    return {
        "accuracy": mean(r.get("acc", 0.0) for r in records),
        "graphwiz_accuracy": mean(r.get("graphwiz_published", 0.0) for r in records),
        "samples": len(records),
    }


EVALUATION = Evaluation(
    metrics=(
        Metric(
            "accuracy",
            "mean over prompts of the prompt's mean acc (rlif's exact verdict from the graph)",
            units=PromptMean("acc"),
        ),
        Metric(
            "graphwiz_accuracy",
            "mean over prompts of the prompt's mean graphwiz_published (GraphWiz's evaluate_nlg.py rule)",
            units=PromptMean("graphwiz_published"),
        ),
    ),
    headline="accuracy",
    compute=graphwiz_metrics,
    counts=("samples",),
    source_mean=SourceMean(key="graphwiz_mean_over_tasks", prefix="graphwiz", label="mean over tasks", count="tasks"),
    title="GraphWiz tasks (rlif's exact verdict; GraphWiz's rule beside it)",
    source_label="task",
    table_order=36,
)


GRAPHWIZ_FAMILY = register_family(
    TaskFamily(
        name="graphwiz",
        prefixes=(PREFIX,),
        ability="graph_reasoning",
        metric_keys=("graphwiz_published",),
        options={},
        score=score_graphwiz,
        normalize_ground_truth=normalize_ground_truth,
        check_ground_truth=check_ground_truth,
        evaluation=EVALUATION,
    )
)

__all__ = ["GRAPHWIZ_FAMILY", "PREFIX", "TASKS", "check_ground_truth", "score_graphwiz"]
