"""Exact optima of the six tasks, computed once when the data is built (never during training).

* MCP: largest maximal clique (networkx's Bron-Kerbosch ``find_cliques``), as GraphArena does.
* MIS: maximum clique of the complement; MVC: ``n - MIS`` (Gallai), as GraphArena does.
* TSP: fast-tsp's exact Held-Karp dynamic programme (fine up to 20 cities).
* GED: the HiGHS MILP of ``rlif.graphs.ged_milp``.
* MCS: the McSplit branch and bound of ``rlif.graphs.mcs_search``.

Each solver returns the optimum with a witness (clique, tour, mapping, ...) so tests can check both.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import networkx as nx

from rlif.graphs.ged_milp import graph_edit_distance
from rlif.graphs.instance import Instance, MoleculePair, SocialGraph, TspInstance
from rlif.graphs.mcs_search import max_common_induced_subgraph


@dataclass(frozen=True)
class Solution:
    """An optimum and one solution attaining it (node list, closed tour, atom mapping or matched pairs)."""

    optimum: int
    witness: tuple


def social_nx(graph: SocialGraph) -> nx.Graph:
    """The people network as a networkx graph on ``0..n-1``."""
    g = nx.Graph()
    g.add_nodes_from(range(graph.n))
    g.add_edges_from(graph.edges)
    return g


def max_clique(graph: SocialGraph) -> Solution:
    """A maximum clique."""
    clique = max(nx.find_cliques(social_nx(graph)), key=len)
    return Solution(len(clique), tuple(sorted(clique)))


def max_independent_set(graph: SocialGraph) -> Solution:
    """A maximum independent set (a maximum clique of the complement)."""
    independent = max(nx.find_cliques(nx.complement(social_nx(graph))), key=len)
    return Solution(len(independent), tuple(sorted(independent)))


def min_vertex_cover(graph: SocialGraph) -> Solution:
    """A minimum vertex cover: everything outside a maximum independent set."""
    independent = set(max_independent_set(graph).witness)
    cover = tuple(v for v in range(graph.n) if v not in independent)
    return Solution(len(cover), cover)


def shortest_tour(tsp: TspInstance) -> Solution:
    """A shortest closed tour (witness starts and ends at the same city)."""
    import fast_tsp

    tour = fast_tsp.solve_tsp_exact([list(row) for row in tsp.weights])
    closed = (*tour, tour[0])
    return Solution(sum(tsp.weights[u][v] for u, v in itertools.pairwise(closed)), closed)


def min_edit_distance(pair: MoleculePair) -> Solution:
    """The exact unit-cost GED; the witness maps atom u of A to ``witness[u]`` of B."""
    cost, mapping = graph_edit_distance(pair.a, pair.b)
    return Solution(cost, tuple(mapping))


def max_common_subgraph(pair: MoleculePair) -> Solution:
    """The maximum common induced subgraph size; the witness lists matched ``(atom of A, atom of B)`` pairs."""
    edges_a = [(u, v) for u, v, _ in pair.a.bonds]
    edges_b = [(u, v) for u, v, _ in pair.b.bonds]
    pairs = max_common_induced_subgraph(pair.a.n, edges_a, pair.b.n, edges_b)
    return Solution(len(pairs), tuple(pairs))


def solve(task: str, instance: Instance) -> Solution:
    """The exact optimum of ``instance`` for ``task``.

    Raises:
        ValueError: unknown task or an instance of the wrong type.
    """
    if isinstance(instance, SocialGraph) and task in ("mcp", "mis", "mvc"):
        return {"mcp": max_clique, "mis": max_independent_set, "mvc": min_vertex_cover}[task](instance)
    if isinstance(instance, TspInstance) and task == "tsp":
        return shortest_tour(instance)
    if isinstance(instance, MoleculePair) and task in ("ged", "mcs"):
        return min_edit_distance(instance) if task == "ged" else max_common_subgraph(instance)
    raise ValueError(f"task: no exact solver for task {task!r} with a {type(instance).__name__}")
