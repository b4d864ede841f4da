"""Read and validate a graph row's ground truth once, into the lookup tables the answer checks need.

A row's ``reward_model.ground_truth`` is the JSON ``{"task", "graph", "optimum"}`` written by ``rlif/graphs``
(networkx node-link data, see ``docs/np-graph-rewards.md``). verl scores 8-16 responses per prompt, so the parsed
form is cached on the exact string. Anything that cannot be scored raises ``ValueError`` naming the field, so bad
data fails when the data set is built (``check_ground_truth``), not as a silent zero during training.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

MAXIMISE_TASKS = frozenset({"mcp", "mis", "mcs"})
"""Tasks whose objective is bigger-is-better; the others (mvc, tsp, ged) are smaller-is-better."""

NAME_TASKS = frozenset({"mcp", "mis", "mvc"})
TASKS = ("mcp", "mis", "mvc", "tsp", "ged", "mcs")

AIRPORT_CODE = re.compile(r"[A-Z]{3}")
"""TSP node names are IATA-style codes; answers may spell them in any case (``answer.py``)."""

_FORBIDDEN_NAME_CHARS = frozenset("[],")
"""Characters that would make a name unparseable inside a ``[A, B, ...]`` answer."""

_QUOTES = frozenset("\"'`")

CACHE_SIZE = 1024
"""Parsed ground truths kept per process: a verl batch holds at most a few hundred distinct prompts."""


@dataclass(frozen=True)
class NamedGraph:
    """A people graph (MCP, MIS, MVC): node ids are positions in ``names``."""

    names: tuple[str, ...]
    ids: Mapping[str, int]
    neighbours: tuple[frozenset[int], ...]
    edges: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class Airports:
    """A complete TSP instance: ``ids`` maps the upper-case code to its id; ``weights`` is the full matrix."""

    codes: tuple[str, ...]
    ids: Mapping[str, int]
    weights: tuple[tuple[int, ...], ...]


@dataclass(frozen=True)
class Molecule:
    """One molecule: atom ``i`` has element ``labels[i]``; ``edges`` are unlabelled sorted pairs."""

    labels: tuple[str, ...]
    neighbours: tuple[frozenset[int], ...]
    edges: frozenset[tuple[int, int]]


@dataclass(frozen=True)
class GraphTruth:
    """A parsed ground truth.

    Attributes:
        task: one of ``TASKS``.
        problem: the instance in the form its answer check reads.
        optimum: the exact optimal objective value.
    """

    task: str
    problem: NamedGraph | Airports | tuple[Molecule, Molecule]
    optimum: int

    @property
    def maximise(self) -> bool:
        """Whether a bigger objective is better."""
        return self.task in MAXIMISE_TASKS


def check_ground_truth(ground_truth: str, extra_info: Mapping[str, Any] | None = None) -> None:
    """Build-time check that a graph row can be scored (the family's ``check_ground_truth``).

    Args:
        ground_truth: the row's ``reward_model.ground_truth``.
        extra_info: the row's ``extra_info``; scoring does not read it, but when it carries ``task``,
            ``exact_answer``, ``optimum`` or ``instance`` (node-link JSON, as ``rlif.graphs.rows`` writes) they must
            agree with the ground truth, so analysis that reads ``extra_info`` sees what the reward scores. A
            ``witness`` (the solver's solution as JSON, see ``checks.witness_value``) must be feasible and reach the
            optimum exactly: a witness that beats it proves the stored optimum wrong (the reward would pay 1.0 for
            a suboptimal answer), one that falls short proves nothing and is as wrong.

    Raises:
        ValueError: malformed JSON, unknown task, bad ids/names/weights/labels, an optimum that no solution of
            this instance can have, ``extra_info`` disagreeing with the ground truth, or a witness that is not a
            feasible solution of exactly the stored optimum.
    """
    truth = parse_ground_truth(ground_truth)
    if extra_info is None:
        return
    if "task" in extra_info and extra_info["task"] != truth.task:
        raise ValueError(f"extra_info.task: {extra_info['task']!r} but the ground truth is a {truth.task!r} instance")
    for key in ("exact_answer", "optimum"):
        if key in extra_info and extra_info[key] != truth.optimum:
            raise ValueError(f"extra_info.{key}: {extra_info[key]!r} but the optimum is {truth.optimum}")
    if "instance" in extra_info:
        instance = extra_info["instance"]
        try:
            same = isinstance(instance, str) and json.loads(instance) == json.loads(ground_truth)["graph"]
        except ValueError:
            same = False
        if not same:
            raise ValueError("extra_info.instance: not the ground truth's graph as a node-link JSON string")
    if "witness" in extra_info:
        _check_witness(truth, extra_info["witness"])


def _check_witness(truth: GraphTruth, witness_json: Any) -> None:
    """Judge the stored solution with the answer checks; its value must equal the stored optimum."""
    from rewards.graph.checks import witness_value  # checks imports this module

    try:
        witness = json.loads(witness_json) if isinstance(witness_json, str) else None
    except ValueError:
        witness = None
    value = None if witness is None else witness_value(truth, witness)
    if value is None:
        raise ValueError(f"extra_info.witness: not a feasible {truth.task} solution of this instance")
    if value != truth.optimum:
        better = value > truth.optimum if truth.maximise else value < truth.optimum
        if better:
            raise ValueError(
                f"optimum: stored {truth.optimum}, but extra_info.witness is a feasible {truth.task} solution "
                f"of value {value}: the stored optimum is wrong"
            )
        raise ValueError(f"extra_info.witness: value {value}, not the stored optimum {truth.optimum}")


def parse_ground_truth(ground_truth: str) -> GraphTruth:
    """Parse and validate ``ground_truth`` (cached on the exact string).

    Raises:
        ValueError: see ``check_ground_truth``.
    """
    if not isinstance(ground_truth, str):
        raise ValueError(f"ground_truth: expected a JSON string, got {type(ground_truth).__name__}")
    return _parse_cached(ground_truth)


@lru_cache(maxsize=CACHE_SIZE)
def _parse_cached(text: str) -> GraphTruth:
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"ground_truth: not valid JSON ({exc})") from exc
    if not isinstance(obj, dict):
        raise ValueError("ground_truth: expected a JSON object")
    task = _get(obj, "task", "ground_truth")
    if task not in TASKS:
        raise ValueError(f"ground_truth.task: unknown task {task!r}; known: {list(TASKS)}")
    optimum = _get(obj, "optimum", "ground_truth")
    if isinstance(optimum, bool) or not isinstance(optimum, int):
        raise ValueError(f"ground_truth.optimum: expected an int, got {optimum!r}")
    graph = _get(obj, "graph", "ground_truth")
    where = "ground_truth.graph"
    problem: NamedGraph | Airports | tuple[Molecule, Molecule]
    if task in NAME_TASKS:
        problem = _named_graph(graph, where)
    elif task == "tsp":
        problem = _airports(graph, where)
    else:
        if not isinstance(graph, list) or len(graph) != 2:
            raise ValueError(f"{where}: {task} needs a list of two molecule graphs")
        problem = (_molecule(graph[0], f"{where}[0]"), _molecule(graph[1], f"{where}[1]"))
    truth = GraphTruth(task=task, problem=problem, optimum=optimum)
    _check_optimum(truth)
    return truth


def _get(obj: Any, key: str, where: str) -> Any:
    if not isinstance(obj, dict) or key not in obj:
        raise ValueError(f"{where}: missing field {key!r}")
    return obj[key]


def _nodes_links(graph: Any, where: str) -> tuple[list[Any], list[tuple[int, int, dict[str, Any]]]]:
    """Nodes (ids checked to be 0..n-1 in order) and links as ``(u, v, link)`` with valid distinct endpoints."""
    nodes = _get(graph, "nodes", where)
    links = _get(graph, "links", where)
    if not isinstance(nodes, list) or not isinstance(links, list):
        raise ValueError(f"{where}: 'nodes' and 'links' must be lists")
    if not nodes:
        raise ValueError(f"{where}.nodes: empty graph")
    for k, node in enumerate(nodes):
        node_id = _get(node, "id", f"{where}.nodes[{k}]")
        if isinstance(node_id, bool) or node_id != k:
            raise ValueError(f"{where}.nodes[{k}].id: ids must be 0..n-1 in order, got {node_id!r}")
    seen: set[tuple[int, int]] = set()
    pairs = []
    for k, link in enumerate(links):
        ends = [_get(link, key, f"{where}.links[{k}]") for key in ("source", "target")]
        if any(isinstance(e, bool) or not isinstance(e, int) or not 0 <= e < len(nodes) for e in ends):
            raise ValueError(f"{where}.links[{k}]: endpoints {ends} must be node ids in 0..{len(nodes) - 1}")
        u, v = sorted(ends)
        if u == v or (u, v) in seen:
            raise ValueError(f"{where}.links[{k}]: self-loop or duplicate edge {u}-{v}")
        seen.add((u, v))
        pairs.append((u, v, link))
    return nodes, pairs


def _text(obj: Any, key: str, where: str) -> str:
    value = _get(obj, key, where)
    if not isinstance(value, str) or not value:
        raise ValueError(f"{where}.{key}: expected a non-empty string, got {value!r}")
    return value


def _neighbours(n: int, edges: list[tuple[int, int]]) -> tuple[frozenset[int], ...]:
    adjacent: list[set[int]] = [set() for _ in range(n)]
    for u, v in edges:
        adjacent[u].add(v)
        adjacent[v].add(u)
    return tuple(frozenset(a) for a in adjacent)


def _named_graph(graph: Any, where: str) -> NamedGraph:
    nodes, links = _nodes_links(graph, where)
    names = tuple(_text(node, "name", f"{where}.nodes[{k}]") for k, node in enumerate(nodes))
    for k, name in enumerate(names):
        if name != name.strip() or _FORBIDDEN_NAME_CHARS & set(name) or (name[0] == name[-1] and name[0] in _QUOTES):
            raise ValueError(
                f"{where}.nodes[{k}].name: {name!r} cannot be matched in a [A, B] answer "
                "(surrounding spaces or quotes, or one of '[', ']', ',')"
            )
    if len(set(names)) != len(names):
        raise ValueError(f"{where}.nodes: names must be distinct")
    edges = [(u, v) for u, v, _ in links]
    return NamedGraph(names, {name: i for i, name in enumerate(names)}, _neighbours(len(names), edges), tuple(edges))


def _airports(graph: Any, where: str) -> Airports:
    nodes, links = _nodes_links(graph, where)
    codes = tuple(_text(node, "name", f"{where}.nodes[{k}]") for k, node in enumerate(nodes))
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
        weight = _get(link, "weight", f"{where}.links[{k}]")
        if isinstance(weight, bool) or not isinstance(weight, int) or weight <= 0:
            raise ValueError(f"{where}.links[{k}].weight: expected a positive int, got {weight!r}")
        weights[u][v] = weights[v][u] = weight
    return Airports(codes, {code: i for i, code in enumerate(codes)}, tuple(tuple(row) for row in weights))


def _molecule(graph: Any, where: str) -> Molecule:
    nodes, links = _nodes_links(graph, where)
    labels = tuple(_text(node, "label", f"{where}.nodes[{k}]") for k, node in enumerate(nodes))
    edges = [(u, v) for u, v, _ in links]
    return Molecule(labels, _neighbours(len(labels), edges), frozenset(edges))


def edit_cost(first: Molecule, second: Molecule, mapping: tuple[int, ...]) -> int:
    """GraphArena's edit cost of turning ``first`` into ``second`` when atom ``i`` of ``first`` becomes ``mapping[i]``.

    Each relabelled atom costs 1, each bond of ``first`` with no image in ``second`` costs 1 (deletion) and each bond
    of ``second`` with no preimage costs 1 (insertion). Bond types are not shown in the prompt and not scored.

    Args:
        first: molecule A.
        second: molecule B, with as many atoms as A.
        mapping: a permutation of ``range(len(second.labels))``.

    Returns:
        The edit cost.
    """
    relabels = sum(first.labels[i] != second.labels[j] for i, j in enumerate(mapping))
    images = {(a, b) if a < b else (b, a) for a, b in ((mapping[u], mapping[v]) for u, v in first.edges)}
    return relabels + len(images - second.edges) + len(second.edges - images)


def _check_optimum(truth: GraphTruth) -> None:
    """Reject an optimum that no solution of the instance can reach (cheap necessary conditions, not a solve).

    Raises:
        ValueError: the optimum is outside the bounds every solution of this instance obeys.
    """
    low, high = _optimum_bounds(truth)
    if not low <= truth.optimum <= high:
        raise ValueError(
            f"ground_truth.optimum: {truth.optimum} is impossible for this {truth.task} instance "
            f"(every solution lies in [{low}, {high}])"
        )


def _optimum_bounds(truth: GraphTruth) -> tuple[int, int]:
    problem = truth.problem
    if isinstance(problem, NamedGraph):
        n = len(problem.names)
        if truth.task == "mcp":
            # A k-clique needs k vertices of degree >= k - 1.
            degrees = sorted((len(a) for a in problem.neighbours), reverse=True)
            largest = max(k for k in range(1, n + 1) if degrees[k - 1] >= k - 1)
            return (2 if problem.edges else 1), largest
        if truth.task == "mis":
            # Caro-Wei: a greedy independent set reaches sum 1/(d+1), rounded up.
            caro_wei = sum(1 / (len(a) + 1) for a in problem.neighbours)
            return max(1, math.ceil(caro_wei - 1e-9)), n - (1 if problem.edges else 0)
        # mvc: a cover is the complement of an independent set, which always holds one vertex.
        return (1 if problem.edges else 0), n - 1
    if isinstance(problem, Airports):
        n = len(problem.codes)
        # Each airport is entered and left once: half the sum of each airport's two cheapest links is a bound.
        two_cheapest = sum(
            sum(sorted(w for j, w in enumerate(row) if j != i)[:2]) for i, row in enumerate(problem.weights)
        )
        identity = sum(problem.weights[i][(i + 1) % n] for i in range(n))
        return math.ceil(two_cheapest / 2), identity
    first, second = problem
    if truth.task == "ged":
        if len(first.labels) != len(second.labels):
            raise ValueError(
                f"ground_truth.graph: ged molecules must have the same number of atoms "
                f"({len(first.labels)} vs {len(second.labels)})"
            )
        identity_cost = edit_cost(first, second, tuple(range(len(first.labels))))
        unmatched_labels = len(first.labels) - sum((Counter(first.labels) & Counter(second.labels)).values())
        return unmatched_labels + abs(len(first.edges) - len(second.edges)), identity_cost
    return 1, min(len(first.labels), len(second.labels))
