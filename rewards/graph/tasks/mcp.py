"""Maximum clique (MCP): the largest group of authors in which every two have collaborated.

Answer: ``[Author A, Author B, ...]``, distinct names spelt exactly; feasible iff every two listed authors are
linked; objective: the number of authors (bigger is better).
"""

from __future__ import annotations

from collections.abc import Sequence

from rewards.graph.answer import last_name_list
from rewards.graph.instances import NamedGraph, distinct_known_ids, read_named_graph, witness_names
from rewards.graph.task import GraphTask


def feasible(graph: NamedGraph, names: Sequence[str]) -> bool:
    """Distinct known names, every two of them linked."""
    chosen = distinct_known_ids(graph, names)
    return chosen is not None and all(chosen - {u} <= graph.neighbours[u] for u in chosen)


def objective(graph: NamedGraph, names: Sequence[str]) -> int:
    """The clique's size."""
    return len(names)


def optimum_bounds(graph: NamedGraph) -> tuple[int, int]:
    """A k-clique needs k vertices of degree >= k - 1; any edge is a 2-clique."""
    n = len(graph.names)
    degrees = sorted((len(a) for a in graph.neighbours), reverse=True)
    largest = max(k for k in range(1, n + 1) if degrees[k - 1] >= k - 1)
    return (2 if graph.edges else 1), largest


TASK = GraphTask(
    id="mcp",
    sense="max",
    parse_problem=read_named_graph,
    parse_answer=last_name_list,
    feasible=feasible,
    objective=objective,
    witness_answer=witness_names,
    optimum_bounds=optimum_bounds,
)
