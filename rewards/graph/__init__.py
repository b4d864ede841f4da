"""GraphArena NP tasks (MCP, MIS, MVC, TSP, GED, MCS): strict answer checks and NPG-Muse's reward variants.

Importing this package registers the ``graph`` family for every ``data_source`` starting with ``graph/``.
Details, formulas and deviations from GraphArena/NPG-Muse: ``docs/np-graph-rewards.md``.
"""

from rewards.graph.scorer import score_graph
from rewards.graph.truth import check_ground_truth
from rewards.graph.variants import shape_named
from rewards.registry import TaskFamily, register_family


def check_params(params: dict) -> None:
    """``graph_reward`` must name one of the five variants."""
    if "graph_reward" in params:
        shape_named(params["graph_reward"])


GRAPH_FAMILY = register_family(
    TaskFamily(
        name="graph",
        prefixes=("graph/",),
        metric_keys=(
            "graph_optimal",
            "graph_feasible",
            "graph_missing",
            "graph_quality",
            "graph_format",
            "graph_repeat",
        ),
        params=("graph_reward",),
        score=score_graph,
        check_ground_truth=check_ground_truth,
        check_params=check_params,
    )
)

__all__ = ["GRAPH_FAMILY", "check_ground_truth", "score_graph"]
