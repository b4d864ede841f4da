"""Minimum vertex cover (MVC): the smallest group of users touching every friendship.

Answer: ``[User A, User B, ...]``, distinct names spelt exactly; feasible iff every link has an endpoint in the
list; objective: the number of users (smaller is better).
"""

from __future__ import annotations

from collections.abc import Sequence

from rewards.graph.answer import last_name_list
from rewards.graph.instances import NamedGraph, distinct_known_ids, read_named_graph, witness_names
from rewards.graph.task import GraphTask


def feasible(graph: NamedGraph, names: Sequence[str]) -> bool:
    """Distinct known names covering every link."""
    chosen = distinct_known_ids(graph, names)
    return chosen is not None and all(u in chosen or v in chosen for u, v in graph.edges)


def objective(graph: NamedGraph, names: Sequence[str]) -> int:
    """The cover's size."""
    return len(names)


def optimum_bounds(graph: NamedGraph) -> tuple[int, int]:
    """A cover is the complement of an independent set, which always holds one vertex."""
    return (1 if graph.edges else 0), len(graph.names) - 1


TASK = GraphTask(
    id="mvc",
    sense="min",
    parse_problem=read_named_graph,
    parse_answer=last_name_list,
    feasible=feasible,
    objective=objective,
    witness_answer=witness_names,
    optimum_bounds=optimum_bounds,
)
