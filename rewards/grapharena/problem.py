"""A GraphArena row's ground truth, read once into the lookup tables both checkers need.

The ground truth is the JSON ``{"task", "graph", "answer", ...}`` written by ``rlif.data.grapharena``:

* ``task``: one of ``TASKS`` (GraphArena's ten, lower case).
* ``graph``: networkx node-link data of the instance as GraphArena's file holds it: nodes in the file's order (name
  look-ups return the first node with the name, as GraphArena's ``find_node_by_name`` does), each ``{"id", "name"}``
  or, for the molecules (GED, MCS), ``{"id", "label"}`` with the file's own atom ids 0..n-1 (answers are atom ids);
  links ``{"source", "target"}`` plus ``weight`` for TSP. GED and MCS hold a list of two graphs.
* ``answer``: GraphArena's reference value (its ``exact_answer``, or ``approx_answer`` where that is missing, as its
  tables use); ``strict_answer``: the exact optimum rlif's solvers found (equal to ``answer`` wherever the file had an
  exact answer).
* ``source``/``target`` (Distance) and ``node1``/``node2`` (Neighbor): node ids of ``graph``.
* ``strict`` (NP tasks only): the ``graph`` family's ground truth of the same instance, for rlif's strict verdict.

Anything malformed raises ``ValueError`` naming the field, so a bad file fails when the data is built.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from rewards.canonical import canonical_form, load_ground_truth

NP_TASKS = ("mcp", "mis", "mvc", "tsp", "ged", "mcs")
"""GraphArena's NP-complete tasks; rlif's ``graph`` family scores the same instances strictly."""
P_TASKS = ("connected", "diameter", "distance", "neighbor")
"""GraphArena's polynomial tasks."""
TASKS = NP_TASKS + P_TASKS
MOLECULE_TASKS = ("ged", "mcs")
ENDPOINTS = {"distance": ("source", "target"), "neighbor": ("node1", "node2")}
"""The extra node fields a task's records carry, under GraphArena's own names."""


@dataclass(frozen=True)
class Graph:
    """One undirected graph with nodes 0..n-1 in file order.

    Attributes:
        ids: the file's node id of each node (atom ids for molecules).
        names: each node's ``name`` (or ``label`` for molecules).
        adjacency: each node's neighbours.
        weights: ``{(u, v): weight}`` for both orders of each weighted edge (TSP).
        first: the first node with each name.
    """

    ids: tuple[Any, ...]
    names: tuple[str, ...]
    adjacency: tuple[frozenset[int], ...]
    weights: Mapping[tuple[int, int], int]
    first: Mapping[str, int]

    def first_named(self, name: str) -> int | None:
        """The first node whose name equals ``name`` (GraphArena's ``find_node_by_name``), or None."""
        return self.first.get(name)

    def has_edge(self, u: int, v: int) -> bool:
        """Whether ``u`` and ``v`` are joined (a node is joined to itself only by a self-loop)."""
        return v in self.adjacency[u]

    def distances(self, start: int) -> list[int | None]:
        """Hop distance from ``start`` to every node (None where unreachable), by breadth-first search."""
        dist: list[int | None] = [None] * len(self.names)
        dist[start] = 0
        frontier = [start]
        while frontier:
            nxt = []
            for u in frontier:
                for v in self.adjacency[u]:
                    if dist[v] is None:
                        dist[v] = dist[u] + 1  # type: ignore[operator]
                        nxt.append(v)
            frontier = nxt
        return dist

    def components(self) -> list[int]:
        """The connected-component number of every node."""
        label = [-1] * len(self.names)
        count = 0
        for start in range(len(self.names)):
            if label[start] < 0:
                for node, d in enumerate(self.distances(start)):
                    if d is not None:
                        label[node] = count
                count += 1
        return label


@dataclass(frozen=True)
class Problem:
    """A parsed GraphArena ground truth (see the module docstring).

    Attributes:
        task: a task id of ``TASKS``.
        graphs: the instance's graph, or the two molecules of GED/MCS.
        answer: GraphArena's reference value.
        strict_answer: rlif's exact optimum.
        ends: the two node indices of Distance (source, target) or Neighbor (node1, node2); empty otherwise.
        strict: the ``graph`` family's ground truth (NP tasks), or None.
    """

    task: str
    graphs: tuple[Graph, ...]
    answer: int
    strict_answer: int
    ends: tuple[int, ...]
    strict: str | None

    @property
    def graph(self) -> Graph:
        """The instance's (first) graph."""
        return self.graphs[0]


def _graph(data: Any, task: str, where: str) -> Graph:
    if (
        not isinstance(data, Mapping)
        or not isinstance(data.get("nodes"), list)
        or not isinstance(data.get("links"), list)
    ):
        raise ValueError(f"{where}: expected node-link data with 'nodes' and 'links' lists")
    attribute = "label" if task in MOLECULE_TASKS else "name"
    ids = tuple(node.get("id") for node in data["nodes"])
    names = tuple(str(node.get(attribute)) for node in data["nodes"])
    if None in ids or len(set(ids)) != len(ids):
        raise ValueError(f"{where}: node ids missing or repeated")
    if task in MOLECULE_TASKS and sorted(ids) != list(range(len(ids))):
        raise ValueError(f"{where}: molecule atom ids must be 0..n-1 (answers name atoms by id)")
    index = {node_id: k for k, node_id in enumerate(ids)}
    adjacency: list[set[int]] = [set() for _ in ids]
    weights: dict[tuple[int, int], int] = {}
    for link in data["links"]:
        try:
            u, v = index[link["source"]], index[link["target"]]
        except (KeyError, TypeError):
            raise ValueError(f"{where}: link {link!r} names an unknown node") from None
        adjacency[u].add(v)
        adjacency[v].add(u)
        if task == "tsp":
            weight = link.get("weight")
            if isinstance(weight, bool) or not isinstance(weight, int):
                raise ValueError(f"{where}: TSP link {link!r} needs an integer weight")
            weights[(u, v)] = weights[(v, u)] = weight
    if task == "tsp" and any(len(adj) != len(ids) - 1 or k in adj for k, adj in enumerate(adjacency)):
        raise ValueError(f"{where}: a TSP instance must be a complete graph without loops")
    first: dict[str, int] = {}
    for k, name in enumerate(names):
        first.setdefault(name, k)
    return Graph(ids, names, tuple(frozenset(a) for a in adjacency), weights, first)


def _integer(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{where}: expected an integer, got {value!r}")
    return value


def problem_from(value: Any) -> Problem:
    """Parse a ground-truth object (the decoded JSON).

    Raises:
        ValueError: an unknown task or a malformed field; the message names the field.
    """
    if not isinstance(value, Mapping):
        raise ValueError("grapharena ground truth: expected a JSON object")
    task = value.get("task")
    if task not in TASKS:
        raise ValueError(f"grapharena ground truth: task {task!r} is not one of {list(TASKS)}")
    raw = value.get("graph")
    if task in MOLECULE_TASKS:
        if not isinstance(raw, list) or len(raw) != 2:
            raise ValueError(f"grapharena ground truth: graph: {task} needs a list of two molecules")
        graphs = tuple(_graph(g, task, f"graph[{k}]") for k, g in enumerate(raw))
        if task == "ged" and len(graphs[0].ids) != len(graphs[1].ids):
            raise ValueError("grapharena ground truth: graph: GED molecules must have the same number of atoms")
    else:
        graphs = (_graph(raw, task, "graph"),)
    ends: tuple[int, ...] = ()
    if task in ENDPOINTS:
        index = {node_id: k for k, node_id in enumerate(graphs[0].ids)}
        try:
            ends = tuple(index[value[field]] for field in ENDPOINTS[task])
        except (KeyError, TypeError):
            raise ValueError(
                f"grapharena ground truth: {task} needs {ENDPOINTS[task]} naming nodes of the graph"
            ) from None
    strict = value.get("strict")
    if (task in NP_TASKS) != isinstance(strict, str):
        raise ValueError("grapharena ground truth: strict: the graph family's ground truth, for NP tasks only")
    answer = _integer(value.get("answer"), "grapharena ground truth: answer")
    strict_answer = _integer(value.get("strict_answer"), "grapharena ground truth: strict_answer")
    return Problem(task, graphs, answer, strict_answer, ends, strict)


@lru_cache(maxsize=1024)
def parse_ground_truth(ground_truth: str) -> Problem:
    """The parsed ground truth, once per distinct string (verl scores several responses per prompt).

    Raises:
        ValueError: not JSON, or malformed (see ``problem_from``).
    """
    value = load_ground_truth(ground_truth, "grapharena")
    return problem_from(value)


def normalize_ground_truth(raw: Any, *, where: str) -> str:
    """The canonical string of a GraphArena ground truth given as JSON text or as the object itself.

    Raises:
        ValueError: not JSON or malformed; the message starts with ``where``.
    """
    return canonical_form(raw, where=where, check=parse_ground_truth)
