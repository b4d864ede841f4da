"""Node-link readers and the instance forms several graph tasks share (people graphs, molecules).

Task modules (``rewards/graph/tasks/``) build their ``parse_problem`` from these. Every reader validates what it
reads and raises ``ValueError`` naming the field, because bad ground truth must fail when the data set is built
(``truth.check_ground_truth``), not as a silent zero during training.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

_FORBIDDEN_NAME_CHARS = frozenset("[],")
"""Characters that would make a name unparseable inside a ``[A, B, ...]`` answer."""

QUOTES = frozenset("\"'`")
"""Quotes an answer may put around a name (``answer.py`` removes one matching pair)."""


@dataclass(frozen=True)
class NamedGraph:
    """A people graph (MCP, MIS, MVC): node ids are positions in ``names``."""

    names: tuple[str, ...]
    ids: Mapping[str, int]
    neighbours: tuple[frozenset[int], ...]
    edges: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class Molecule:
    """One molecule: atom ``i`` has element ``labels[i]``; ``edges`` are unlabelled sorted pairs."""

    labels: tuple[str, ...]
    neighbours: tuple[frozenset[int], ...]
    edges: frozenset[tuple[int, int]]


def get(obj: Any, key: str, where: str) -> Any:
    """``obj[key]``, or a ValueError naming ``where`` when ``obj`` is not an object holding ``key``."""
    if not isinstance(obj, dict) or key not in obj:
        raise ValueError(f"{where}: missing field {key!r}")
    return obj[key]


def nodes_links(graph: Any, where: str) -> tuple[list[Any], list[tuple[int, int, dict[str, Any]]]]:
    """Nodes (ids checked to be 0..n-1 in order) and links as ``(u, v, link)`` with valid distinct endpoints."""
    nodes = get(graph, "nodes", where)
    links = get(graph, "links", where)
    if not isinstance(nodes, list) or not isinstance(links, list):
        raise ValueError(f"{where}: 'nodes' and 'links' must be lists")
    if not nodes:
        raise ValueError(f"{where}.nodes: empty graph")
    for k, node in enumerate(nodes):
        node_id = get(node, "id", f"{where}.nodes[{k}]")
        if isinstance(node_id, bool) or node_id != k:
            raise ValueError(f"{where}.nodes[{k}].id: ids must be 0..n-1 in order, got {node_id!r}")
    seen: set[tuple[int, int]] = set()
    pairs = []
    for k, link in enumerate(links):
        ends = [get(link, key, f"{where}.links[{k}]") for key in ("source", "target")]
        if any(isinstance(e, bool) or not isinstance(e, int) or not 0 <= e < len(nodes) for e in ends):
            raise ValueError(f"{where}.links[{k}]: endpoints {ends} must be node ids in 0..{len(nodes) - 1}")
        u, v = sorted(ends)
        if u == v or (u, v) in seen:
            raise ValueError(f"{where}.links[{k}]: self-loop or duplicate edge {u}-{v}")
        seen.add((u, v))
        pairs.append((u, v, link))
    return nodes, pairs


def text(obj: Any, key: str, where: str) -> str:
    """A non-empty string field."""
    value = get(obj, key, where)
    if not isinstance(value, str) or not value:
        raise ValueError(f"{where}.{key}: expected a non-empty string, got {value!r}")
    return value


def neighbours(n: int, edges: Sequence[tuple[int, int]]) -> tuple[frozenset[int], ...]:
    """Each node's neighbour set."""
    adjacent: list[set[int]] = [set() for _ in range(n)]
    for u, v in edges:
        adjacent[u].add(v)
        adjacent[v].add(u)
    return tuple(frozenset(a) for a in adjacent)


def read_named_graph(graph: Any, where: str) -> NamedGraph:
    """A people graph: nodes ``{id, name}`` with distinct names an answer can spell, links ``{source, target}``."""
    nodes, links = nodes_links(graph, where)
    names = tuple(text(node, "name", f"{where}.nodes[{k}]") for k, node in enumerate(nodes))
    for k, name in enumerate(names):
        if name != name.strip() or _FORBIDDEN_NAME_CHARS & set(name) or (name[0] == name[-1] and name[0] in QUOTES):
            raise ValueError(
                f"{where}.nodes[{k}].name: {name!r} cannot be matched in a [A, B] answer "
                "(surrounding spaces or quotes, or one of '[', ']', ',')"
            )
    if len(set(names)) != len(names):
        raise ValueError(f"{where}.nodes: names must be distinct")
    edges = [(u, v) for u, v, _ in links]
    return NamedGraph(names, {name: i for i, name in enumerate(names)}, neighbours(len(names), edges), tuple(edges))


def read_molecule(graph: Any, where: str) -> Molecule:
    """One molecule: nodes ``{id, label}`` (element), links ``{source, target, label}`` (bond type, not scored)."""
    nodes, links = nodes_links(graph, where)
    labels = tuple(text(node, "label", f"{where}.nodes[{k}]") for k, node in enumerate(nodes))
    edges = [(u, v) for u, v, _ in links]
    return Molecule(labels, neighbours(len(labels), edges), frozenset(edges))


def read_molecule_pair(task: str, graph: Any, where: str) -> tuple[Molecule, Molecule]:
    """The two molecules ``[A, B]`` of a GED or MCS instance."""
    if not isinstance(graph, list) or len(graph) != 2:
        raise ValueError(f"{where}: {task} needs a list of two molecule graphs")
    return read_molecule(graph[0], f"{where}[0]"), read_molecule(graph[1], f"{where}[1]")


def distinct_known_ids(graph: NamedGraph, names: Sequence[str]) -> set[int] | None:
    """The ids of ``names``, or None when a name is unknown (exact spelling) or repeated."""
    ids = [graph.ids.get(name, -1) for name in names]
    chosen = set(ids)
    if -1 in chosen or len(chosen) != len(ids):
        return None
    return chosen


def witness_ids(witness: Sequence[Any], n: int) -> list[int]:
    """A witness that must be a list of node ids in ``0..n-1``.

    Raises:
        ValueError: an item is not an int id in range.
    """
    if not all(isinstance(i, int) and not isinstance(i, bool) and 0 <= i < n for i in witness):
        raise ValueError("witness ids out of range")
    return list(witness)


def witness_names(graph: NamedGraph, witness: Sequence[Any]) -> list[str]:
    """A people-graph witness (node ids) as the names an answer would list."""
    return [graph.names[i] for i in witness_ids(witness, len(graph.names))]
