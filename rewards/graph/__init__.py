"""GraphArena NP tasks (MCP, MIS, MVC, TSP, GED, MCS): strict answer checks and NPG-Muse's reward variants.

Importing this package registers the ``graph`` family for every ``data_source`` starting with ``graph/``. The tasks
are ``rewards.graph.tasks.TASKS``, one module each, keyed by task id (its docstring says how to add one).
Details, formulas and deviations from GraphArena/NPG-Muse: ``docs/np-graph-rewards.md``.
"""

from collections.abc import Mapping
from typing import Any

from rewards.graph.evaluation import EVALUATION
from rewards.graph.scorer import score_graph
from rewards.graph.truth import check_ground_truth, normalize_ground_truth
from rewards.graph.variants import DEFAULT_VARIANT, variant_named
from rewards.registry import TaskFamily, register_family


def check_params(params: dict) -> None:
    """``graph_reward`` must name one of the five variants."""
    if "graph_reward" in params:
        variant_named(params["graph_reward"])


def failure_score(params: Mapping[str, Any]) -> float:
    """A crashed sample scores the variant's lowest reward, so a scorer bug never pays more than any answer.

    Under ``complicated`` an infeasible answer scores -1 (-2 with a loop): a crash scored 0 would beat it, the
    NPG-Muse hazard ``docs/np-graph-rewards.md`` (deviation 11) rules out.
    """
    return variant_named(params.get("graph_reward", DEFAULT_VARIANT)).bounds()[0]


GRAPH_FAMILY = register_family(
    TaskFamily(
        name="graph",
        prefixes=("graph/",),
        ability="graph_reasoning",
        metric_keys=(
            "graph_optimal",
            "graph_feasible",
            "graph_missing",
            "graph_quality",
            "graph_format",
            "graph_repeat",
        ),
        options={"graph_reward": DEFAULT_VARIANT},
        score=score_graph,
        normalize_ground_truth=normalize_ground_truth,
        check_ground_truth=check_ground_truth,
        check_params=check_params,
        failure_score=failure_score,
        evaluation=EVALUATION,
    )
)

__all__ = ["GRAPH_FAMILY", "check_ground_truth", "score_graph"]
