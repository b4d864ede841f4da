"""GraphArena's own answer checks (``tasks/<Task>.py::check_solution`` at squareRoot3/GraphArena ``f460b25``).

Each check returns GraphArena's value: the objective of a feasible answer (>= 0), ``MISSING`` (-1: nothing
parseable) or ``HALLUCINATED`` (-2: parsed but infeasible). Kept as published, because its tables are computed from
these values (docs/evaluation.md, "GraphArena as published", lists where rlif's strict verdict differs):

* names are matched exactly after ``strip()`` to the first node of that name; **unknown names are dropped**;
* MCP/MIS/MVC read the last ``[...]`` on one line; an empty ``[]`` is a feasible 0 for MCP and MIS (and for MVC of
  an edgeless graph); duplicates count in the value (MIS, MVC) or make a clique infeasible (MCP);
* TSP reads only brackets of upper-case letters, spaces and commas, so lower-case codes are missing, not wrong;
* GED scans integer lists from the last back for the first permutation of the atom ids; MCS takes the last two
  integer lists and tests the induced subgraphs for isomorphism (no mapping, ids neither range-checked nor
  de-duplicated; an unparseable list is missing);
* Connected, Distance and Neighbor scan every ``[...]`` from the last back and take the first feasible one (an
  empty or all-unknown list is feasible for Connected and Neighbor); Diameter re-reads the last one on every pass,
  a slip in the original kept here.

The only change is what text is read: rlif passes the answer after the thinking section (``rewards.thinking``),
where GraphArena read the whole response.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from rewards.grapharena.isomorphism import isomorphic
from rewards.grapharena.problem import Graph, Problem

MISSING = -1
HALLUCINATED = -2

_ANY = re.compile(r"\[(.*?)\]")
_CODES = re.compile(r"\[\s*([A-Z\s,]*)\s*\]")
_INTS = re.compile(r"\[\s*([\d\s,]+)\s*\]")
_SPLIT = re.compile(r"[\s,]+")
_MAX_DIGITS = 6
"""Longer numbers cannot be atom ids; they are read as -1 (GraphArena calls ``int`` on any length)."""


def _known(graph: Graph, content: str) -> list[int]:
    """The nodes named in a bracket's content, unknown names dropped (GraphArena's loop over ``find_node_by_name``)."""
    nodes = []
    for name in content.split(","):
        node = graph.first_named(name.strip())
        if node is not None:
            nodes.append(node)
    return nodes


def _ints(content: str) -> tuple[int, ...]:
    """GraphArena's ``tuple(map(int, re.split(r'[\\s,]+', content.strip())))``; ValueError on an empty item."""
    return tuple(-1 if len(item) > _MAX_DIGITS else int(item) for item in _SPLIT.split(content.strip()))


def mcp(problem: Problem, text: str) -> int:
    """Maximum clique: as many induced edges as a clique of the list's length (duplicates count in the length)."""
    found = _ANY.findall(text)
    if not found:
        return MISSING
    graph, nodes = problem.graph, _known(problem.graph, found[-1])
    distinct = set(nodes)
    loops = sum(u in graph.adjacency[u] for u in distinct)
    edges = (sum(len(graph.adjacency[u] & distinct) for u in distinct) - loops) // 2 + loops
    return len(nodes) if edges >= len(nodes) * (len(nodes) - 1) / 2 else HALLUCINATED


def mis(problem: Problem, text: str) -> int:
    """Maximum independent set: no edge inside; the value is the list's length, duplicates included."""
    found = _ANY.findall(text)
    if not found:
        return MISSING
    graph, nodes = problem.graph, _known(problem.graph, found[-1])
    distinct = set(nodes)
    return HALLUCINATED if any(graph.adjacency[u] & distinct for u in distinct) else len(nodes)


def mvc(problem: Problem, text: str) -> int:
    """Minimum vertex cover: every edge has an end in the list; the value is the list's length."""
    found = _ANY.findall(text)
    if not found:
        return MISSING
    graph, nodes = problem.graph, _known(problem.graph, found[-1])
    chosen = set(nodes)
    for u, adjacent in enumerate(graph.adjacency):
        if u not in chosen and any(v not in chosen for v in adjacent):
            return HALLUCINATED
    return len(nodes)


def tsp(problem: Problem, text: str) -> int:
    """TSP: a closed tour naming every airport once, read from the last bracket of upper-case codes."""
    found = _CODES.findall(text)
    if not found:
        return MISSING
    graph = problem.graph
    route = [graph.first_named(name.strip()) for name in found[-1].split(",")]
    n = len(graph.names)
    if set(route) != set(range(n)) or len(route) != n + 1 or route[0] != route[-1]:
        return HALLUCINATED
    return sum(graph.weights[(route[k], route[k + 1])] for k in range(n))  # type: ignore[index]


def ged(problem: Problem, text: str) -> int:
    """Graph edit distance of the first permutation found scanning integer lists from the last back."""
    found = _INTS.findall(text)
    if not found:
        return MISSING
    a, b = problem.graphs
    n = len(a.ids)
    for content in reversed(found):
        try:
            mapping = _ints(content)
        except ValueError:
            return HALLUCINATED
        if len(mapping) == n and set(mapping) == set(range(n)):
            return _edit_cost(a, b, mapping)
    return HALLUCINATED


def _edit_cost(a: Graph, b: Graph, mapping: Sequence[int]) -> int:
    """Relabelled atoms that differ plus edges in one molecule but not the other, atom ``i`` of A mapped to
    ``mapping[i]`` of B (atom ids, as GraphArena's ``relabel_nodes`` uses them)."""
    a_index = {atom: k for k, atom in enumerate(a.ids)}
    b_index = {atom: k for k, atom in enumerate(b.ids)}
    cost = sum(a.names[a_index[atom]] != b.names[b_index[mapping[atom]]] for atom in range(len(mapping)))
    a_edges = {frozenset((mapping[a.ids[u]], mapping[a.ids[v]])) for u, adj in enumerate(a.adjacency) for v in adj}
    b_edges = {frozenset((b.ids[u], b.ids[v])) for u, adj in enumerate(b.adjacency) for v in adj}
    return cost + len(a_edges - b_edges) + len(b_edges - a_edges)


def mcs(problem: Problem, text: str) -> int:
    """Maximum common subgraph: the last two integer lists, of equal length, induce isomorphic subgraphs."""
    found = _INTS.findall(text)
    if len(found) < 2:
        return MISSING
    try:
        left, right = _ints(found[-2]), _ints(found[-1])
    except ValueError:
        return MISSING
    if not left or len(left) != len(right):
        return HALLUCINATED
    a, b = problem.graphs
    if isomorphic(*_induced(a, left), *_induced(b, right)):
        return len(left)
    return HALLUCINATED


def _induced(graph: Graph, atoms: Sequence[int]) -> tuple[int, set[frozenset[int]]]:
    """Node count and edges of the subgraph induced by the atom ids that exist (networkx ``subgraph`` semantics)."""
    index = {atom: k for k, atom in enumerate(graph.ids)}
    nodes = {index[atom] for atom in atoms if atom in index}
    edges = {frozenset((u, v)) for u in nodes for v in graph.adjacency[u] if v in nodes}
    return len(nodes), edges


def connected(problem: Problem, text: str) -> int:
    """Connected components: one node per component; the first list from the last back whose nodes are pairwise
    unreachable (a repeated node reaches itself) counts its length."""
    found = _ANY.findall(text)
    if not found:
        return MISSING
    graph = problem.graph
    component = graph.components()
    for content in reversed(found):
        nodes = _known(graph, content)
        labels = [component[u] for u in nodes]
        if len(set(labels)) == len(labels):
            return len(nodes)
    return HALLUCINATED


def diameter(problem: Problem, text: str) -> int:
    """Diameter: the last list is a path along edges that is a shortest path between its ends; its hop count."""
    found = _ANY.findall(text)
    if not found:
        return MISSING
    graph = problem.graph
    nodes = _known(graph, found[-1])
    if nodes and _is_walk(graph, nodes) and graph.distances(nodes[0])[nodes[-1]] == len(nodes) - 1:
        return len(nodes) - 1
    return HALLUCINATED


def distance(problem: Problem, text: str) -> int:
    """Shortest path: the first list from the last back that walks along edges from source to target; its hops."""
    found = _ANY.findall(text)
    if not found:
        return MISSING
    graph = problem.graph
    source, target = problem.ends
    for content in reversed(found):
        nodes = _known(graph, content)
        if nodes and nodes[0] == source and nodes[-1] == target and _is_walk(graph, nodes):
            return len(nodes) - 1
    return HALLUCINATED


def neighbor(problem: Problem, text: str) -> int:
    """Common neighbours: the first list from the last back whose nodes are all common neighbours; distinct count."""
    found = _ANY.findall(text)
    if not found:
        return MISSING
    graph = problem.graph
    first, second = problem.ends
    common = (graph.adjacency[first] & graph.adjacency[second]) - {first, second}
    for content in reversed(found):
        nodes = _known(graph, content)
        if all(u in common for u in nodes):
            return len(set(nodes))
    return HALLUCINATED


def _is_walk(graph: Graph, nodes: Sequence[int]) -> bool:
    return all(graph.has_edge(nodes[k], nodes[k + 1]) for k in range(len(nodes) - 1))


CHECKS: dict[str, Callable[[Problem, str], int]] = {
    "mcp": mcp,
    "mis": mis,
    "mvc": mvc,
    "tsp": tsp,
    "ged": ged,
    "mcs": mcs,
    "connected": connected,
    "diameter": diameter,
    "distance": distance,
    "neighbor": neighbor,
}

MINIMISE = ("ged", "tsp", "mvc")
"""Tasks whose accuracy is ``0 <= value <= answer`` in GraphArena's tables."""
AT_LEAST = ("mcp", "mcs")
"""Tasks whose accuracy is ``value >= answer``; every other task needs ``value == answer``."""


def value(problem: Problem, text: str) -> int:
    """GraphArena's value of ``text`` as an answer to ``problem``."""
    return CHECKS[problem.task](problem, text)


def accurate(task: str, score: int, answer: int) -> bool:
    """GraphArena's accuracy test (``reproduce/reproduce_tables_1_2.ipynb``)."""
    if task in MINIMISE:
        return 0 <= score <= answer
    if task in AT_LEAST:
        return score >= answer
    return score == answer
