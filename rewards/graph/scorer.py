"""Score one response to a GraphArena NP task: the graph family's ``score`` function.

Steps: parse the (cached) ground truth; grade the answer section only (``checks.judge``); add NPG-Muse's format
bonus (the raw response starts with ``<think>\\n``) and, for the variants that use it, the loop penalty
(``rewards/graph/repetition.py`` on the raw response, thinking included, as NPG-Muse does).

A response whose thinking never closed (``think_unclosed``) has no answer: it is graded as missing, even if the
thinking holds a bracketed list, because a truncated response must not be rewarded for a guess written while
thinking. The format bonus and loop penalty still apply as in NPG-Muse, so under ``complicated`` a truncated
response scores -1 + 1 = 0 (or -1 with a loop).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rewards.graph.checks import MISSING, Category, judge
from rewards.graph.repetition import has_repetition
from rewards.graph.truth import parse_ground_truth
from rewards.graph.variants import DEFAULT_VARIANT, variant_named
from rewards.thinking import SplitResponse

FORMAT_PREFIX = "<think>\n"
"""NPG-Muse's whole format check: the response opens its thinking section on the first line."""


def score_graph(
    response: SplitResponse,
    ground_truth: str,
    extra_info: Mapping[str, Any] | None = None,
    graph_reward: str = DEFAULT_VARIANT,
) -> dict[str, float | None]:
    """Reward one response to a graph task.

    Args:
        response: the response split by ``rewards.thinking.split_thinking``.
        ground_truth: the row's ground-truth JSON (``{"task", "graph", "optimum"}``).
        extra_info: the row's ``extra_info``; unused (the ground truth holds everything).
        graph_reward: one of ``variants.VARIANTS`` (default ``binary``).

    Returns:
        ``score`` (the reward, in the variant's range), ``acc`` (1 iff optimal), ``graph_optimal``,
        ``graph_feasible``, ``graph_missing`` (0/1 flags), ``graph_quality`` (capped ratio in [0, 1], 0 unless
        feasible), ``graph_format`` (0/1) and ``graph_repeat`` (0/1, None when the variant has no loop penalty).

    Raises:
        ValueError: unknown ``graph_reward`` or malformed ground truth (data/config errors, never model output).
    """
    del extra_info
    variant = variant_named(graph_reward)
    truth = parse_ground_truth(ground_truth)
    verdict = MISSING if response.think_unclosed else judge(truth, response.answer)
    formatted = response.raw.startswith(FORMAT_PREFIX)
    repeated = has_repetition(response.raw) if variant.repeat_penalty else None
    score = variant.answer_part(truth.task, verdict) + variant.format_bonus * formatted
    if repeated:
        score -= variant.repeat_penalty
    optimal = verdict.category is Category.OPTIMAL
    return {
        "score": score,
        "acc": float(optimal),
        "graph_optimal": float(optimal),
        "graph_feasible": float(verdict.feasible),
        "graph_missing": float(verdict.category is Category.MISSING),
        "graph_quality": verdict.quality,
        "graph_format": float(formatted),
        "graph_repeat": None if repeated is None else float(repeated),
    }
