"""Maximum independent set (MIS): the largest group of users in which no two are friends.

Answer: ``[User A, User B, ...]``, distinct names spelt exactly (GraphArena counts duplicates, which lets a padded
answer score as optimal); feasible iff no two listed users are linked; objective: the number of users (bigger is
better).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from rewards.graph.answer import last_name_list
from rewards.graph.instances import NamedGraph, distinct_known_ids, read_named_graph, witness_names
from rewards.graph.task import GraphTask


def feasible(graph: NamedGraph, names: Sequence[str]) -> bool:
    """Distinct known names, no two of them linked."""
    chosen = distinct_known_ids(graph, names)
    return chosen is not None and all(not (graph.neighbours[u] & chosen) for u in chosen)


def objective(graph: NamedGraph, names: Sequence[str]) -> int:
    """The set's size."""
    return len(names)


def optimum_bounds(graph: NamedGraph) -> tuple[int, int]:
    """Caro-Wei: a greedy independent set reaches sum 1/(d+1), rounded up; any edge excludes one endpoint."""
    caro_wei = sum(1 / (len(a) + 1) for a in graph.neighbours)
    return max(1, math.ceil(caro_wei - 1e-9)), len(graph.names) - (1 if graph.edges else 0)


TASK = GraphTask(
    id="mis",
    sense="max",
    parse_problem=read_named_graph,
    parse_answer=last_name_list,
    feasible=feasible,
    objective=objective,
    witness_answer=witness_names,
    optimum_bounds=optimum_bounds,
)
