"""Travelling salesman (TSP): the shortest round trip through every listed airport.

Answer: ``[AAA, BBB, ..., AAA]``, three-letter codes in any case, a closed tour of ``n + 1`` codes visiting every
airport exactly once; start and direction are free. Objective: the tour length in km (smaller is better).
NPG-Muse's ``complicated`` variant squares TSP's quality ratio.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rewards.graph.answer import last_code_list
from rewards.graph.instances import get, nodes_links, text, witness_ids
from rewards.graph.task import GraphTask

AIRPORT_CODE = re.compile(r"[A-Z]{3}")
"""Node names are IATA-style codes; answers may spell them in any case (``answer.last_code_list``)."""


@dataclass(frozen=True)
class Airports:
    """A complete TSP instance: ``ids`` maps the upper-case code to its id; ``weights`` is the full matrix."""

    codes: tuple[str, ...]
    ids: Mapping[str, int]
    weights: tuple[tuple[int, ...], ...]


def read_airports(graph: Any, where: str) -> Airports:
    """Nodes ``{id, name}`` (three upper-case letters), one link with a positive int ``weight`` per pair."""
    nodes, links = nodes_links(graph, where)
    codes = tuple(text(node, "name", f"{where}.nodes[{k}]") for k, node in enumerate(nodes))
    for k, code in enumerate(codes):
        if not AIRPORT_CODE.fullmatch(code):
            raise ValueError(f"{where}.nodes[{k}].name: airport codes must be three upper-case letters, got {code!r}")
    if len(set(codes)) != len(codes) or len(codes) < 3:
        raise ValueError(f"{where}.nodes: tsp needs at least 3 airports with distinct codes")
    n = len(codes)
    if len(links) != n * (n - 1) // 2:
        raise ValueError(f"{where}.links: tsp needs one weighted link per pair, got {len(links)} for {n} airports")
    weights = [[0] * n for _ in range(n)]
    for k, (u, v, link) in enumerate(links):
        weight = get(link, "weight", f"{where}.links[{k}]")
        if isinstance(weight, bool) or not isinstance(weight, int) or weight <= 0:
            raise ValueError(f"{where}.links[{k}].weight: expected a positive int, got {weight!r}")
        weights[u][v] = weights[v][u] = weight
    return Airports(codes, {code: i for i, code in enumerate(codes)}, tuple(tuple(row) for row in weights))


def _route(airports: Airports, codes: Sequence[str]) -> list[int]:
    return [airports.ids.get(code, -1) for code in codes]


def feasible(airports: Airports, codes: Sequence[str]) -> bool:
    """A closed tour of known codes visiting every airport exactly once."""
    n = len(airports.codes)
    route = _route(airports, codes)
    return len(route) == n + 1 and route[0] == route[-1] and -1 not in route and len(set(route[:-1])) == n


def objective(airports: Airports, codes: Sequence[str]) -> int:
    """The tour's length."""
    weights = airports.weights
    return sum(weights[a][b] for a, b in itertools.pairwise(_route(airports, codes)))


def witness_answer(airports: Airports, witness: Sequence[Any]) -> list[str]:
    """The solver's closed tour of ids as codes."""
    return [airports.codes[i] for i in witness_ids(witness, len(airports.codes))]


def optimum_bounds(airports: Airports) -> tuple[int, int]:
    """Each airport is entered and left once, so half the sum of each airport's two cheapest links is a lower
    bound; the identity tour is an upper one."""
    n = len(airports.codes)
    two_cheapest = sum(
        sum(sorted(w for j, w in enumerate(row) if j != i)[:2]) for i, row in enumerate(airports.weights)
    )
    identity = sum(airports.weights[i][(i + 1) % n] for i in range(n))
    return math.ceil(two_cheapest / 2), identity


TASK = GraphTask(
    id="tsp",
    sense="min",
    parse_problem=read_airports,
    parse_answer=last_code_list,
    feasible=feasible,
    objective=objective,
    witness_answer=witness_answer,
    optimum_bounds=optimum_bounds,
    squared_quality=True,
)
