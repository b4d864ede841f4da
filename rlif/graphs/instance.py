"""Graph task instances and their ground-truth JSON: the one contract between data building and the rewards.

A row's ``reward_model.ground_truth`` is the canonical JSON of ``{"task", "graph", "optimum"}`` where ``graph`` is
networkx node-link data (keys ``nodes`` and ``links``; ``nx.node_link_graph(g, edges="links")`` reads it):

* ``mcp``/``mis``/``mvc``: nodes ``{"id", "name"}``, links ``{"source", "target"}``.
* ``tsp``: nodes ``{"id", "name"}`` (3-letter code), a link with an integer ``weight`` for every pair.
* ``ged``/``mcs``: a list of two graphs ``[A, B]``, nodes ``{"id", "label"}`` (element), links
  ``{"source", "target", "label"}`` (bond type); ids are ``0..n-1``, the atom indices shown in the prompt.

The instance dataclasses below are the in-memory form the generators, solvers and prompt writers share; the
conversion both ways lives here so the format is defined once. Parsing validates everything and raises
``ValueError`` naming the field, because bad ground truth must fail when the data is built, not during training.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

TASKS: tuple[str, ...] = ("mcp", "mis", "mvc", "tsp", "ged", "mcs")
"""The six GraphArena NP tasks, in the order used everywhere (seeds, manifests, file listings)."""

SOCIAL_TASKS = frozenset({"mcp", "mis", "mvc"})
MOLECULE_TASKS = frozenset({"ged", "mcs"})

MAX_TSP_DISTANCE = 65535
"""fast-tsp stores distances as uint16, so every pairwise distance must fit."""

AIRPORT_CODE = re.compile(r"[A-Z]{3}")
"""TSP node names: GraphArena's answer pattern accepts only upper-case letters."""

BOND_TYPES: tuple[str, ...] = ("SINGLE", "DOUBLE", "TRIPLE", "AROMATIC")
"""Bond labels as RDKit's ``BondType`` names, which GraphArena's molecule graphs carry."""


@dataclass(frozen=True)
class SocialGraph:
    """A people network (MCP, MIS, MVC): node ``i`` is ``names[i]``; ``edges`` are sorted pairs ``u < v``."""

    names: tuple[str, ...]
    edges: tuple[tuple[int, int], ...]

    @property
    def n(self) -> int:
        """Number of people."""
        return len(self.names)


@dataclass(frozen=True)
class TspInstance:
    """A complete metric graph of airports: ``weights[i][j]`` is the integer distance in km between codes i and j."""

    codes: tuple[str, ...]
    weights: tuple[tuple[int, ...], ...]

    @property
    def n(self) -> int:
        """Number of airports."""
        return len(self.codes)


@dataclass(frozen=True)
class Molecule:
    """A heavy-atom molecular graph: ``atoms[i]`` is atom i's element, ``bonds`` are ``(u, v, type)`` with u < v."""

    atoms: tuple[str, ...]
    bonds: tuple[tuple[int, int, str], ...]

    @property
    def n(self) -> int:
        """Number of atoms."""
        return len(self.atoms)

    def edge_set(self) -> frozenset[tuple[int, int]]:
        """The bonds as unlabelled sorted pairs."""
        return frozenset((u, v) for u, v, _ in self.bonds)


@dataclass(frozen=True)
class MoleculePair:
    """Two molecules compared by GED (same size) or MCS (sizes drawn independently)."""

    a: Molecule
    b: Molecule

    @property
    def n(self) -> int:
        """The difficulty: the larger molecule's atom count."""
        return max(self.a.n, self.b.n)


Instance = SocialGraph | TspInstance | MoleculePair


@dataclass(frozen=True)
class GroundTruth:
    """A parsed ground truth: the task, its instance and the exact optimum."""

    task: str
    instance: Instance
    optimum: int


def _check_task(task: str) -> None:
    if task not in TASKS:
        raise ValueError(f"task: unknown task {task!r}; known: {list(TASKS)}")


def _link_graph(nodes: list[dict[str, Any]], links: list[dict[str, Any]]) -> dict[str, Any]:
    """Node-link data with the keys networkx writes, so ``nx.node_link_graph(g, edges="links")`` works as is."""
    return {"directed": False, "multigraph": False, "graph": {}, "nodes": nodes, "links": links}


def _molecule_graph(mol: Molecule) -> dict[str, Any]:
    nodes = [{"id": i, "label": label} for i, label in enumerate(mol.atoms)]
    links = [{"source": u, "target": v, "label": bond} for u, v, bond in mol.bonds]
    return _link_graph(nodes, links)


def to_node_link(task: str, instance: Instance) -> dict[str, Any] | list[dict[str, Any]]:
    """Convert an instance to its node-link ``graph`` (a list of two graphs for GED/MCS).

    Raises:
        ValueError: unknown task, or an instance of the wrong type for it.
    """
    _check_task(task)
    if task in SOCIAL_TASKS and isinstance(instance, SocialGraph):
        nodes = [{"id": i, "name": name} for i, name in enumerate(instance.names)]
        return _link_graph(nodes, [{"source": u, "target": v} for u, v in instance.edges])
    if task == "tsp" and isinstance(instance, TspInstance):
        nodes = [{"id": i, "name": code} for i, code in enumerate(instance.codes)]
        links = [
            {"source": i, "target": j, "weight": instance.weights[i][j]}
            for i, j in itertools.combinations(range(instance.n), 2)
        ]
        return _link_graph(nodes, links)
    if task in MOLECULE_TASKS and isinstance(instance, MoleculePair):
        return [_molecule_graph(instance.a), _molecule_graph(instance.b)]
    raise ValueError(f"instance: a {type(instance).__name__} is not an instance of task {task!r}")


def canonical_json(obj: Any) -> str:
    """The one JSON spelling used for ground truth: sorted keys, no spaces, UTF-8 kept (names are matched exactly)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def ground_truth_json(task: str, instance: Instance, optimum: int) -> str:
    """The canonical ground-truth string of one row.

    Raises:
        ValueError: unknown task, wrong instance type, or an invalid instance or optimum.
    """
    graph = to_node_link(task, instance)
    validate_instance(task, instance)
    if isinstance(optimum, bool) or not isinstance(optimum, int) or optimum < 0:
        raise ValueError(f"optimum: expected a non-negative int, got {optimum!r}")
    return canonical_json({"task": task, "graph": graph, "optimum": optimum})


def _field(obj: Mapping[str, Any], key: str, where: str) -> Any:
    if not isinstance(obj, Mapping) or key not in obj:
        raise ValueError(f"{where}: missing field {key!r}")
    return obj[key]


def _int_field(obj: Mapping[str, Any], key: str, where: str) -> int:
    value = _field(obj, key, where)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{where}.{key}: expected an int, got {value!r}")
    return value


def _str_field(obj: Mapping[str, Any], key: str, where: str) -> str:
    value = _field(obj, key, where)
    if not isinstance(value, str) or not value:
        raise ValueError(f"{where}.{key}: expected a non-empty string, got {value!r}")
    return value


def _nodes_and_links(graph: Any, where: str) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]:
    nodes = _field(graph, "nodes", where)
    links = _field(graph, "links", where)
    if not isinstance(nodes, list) or not isinstance(links, list):
        raise ValueError(f"{where}: 'nodes' and 'links' must be lists")
    for k, node in enumerate(nodes):
        if _int_field(node, "id", f"{where}.nodes[{k}]") != k:
            raise ValueError(f"{where}.nodes[{k}].id: ids must be 0..n-1 in order, got {node['id']!r}")
    return nodes, links


def _endpoints(link: Mapping[str, Any], n: int, where: str) -> tuple[int, int]:
    u = _int_field(link, "source", where)
    v = _int_field(link, "target", where)
    if not (0 <= u < n and 0 <= v < n) or u == v:
        raise ValueError(f"{where}: endpoints ({u}, {v}) must be two distinct node ids in 0..{n - 1}")
    return (u, v) if u < v else (v, u)


def _molecule_from_graph(graph: Any, where: str) -> Molecule:
    nodes, links = _nodes_and_links(graph, where)
    atoms = tuple(_str_field(node, "label", f"{where}.nodes[{k}]") for k, node in enumerate(nodes))
    bonds = []
    for k, link in enumerate(links):
        u, v = _endpoints(link, len(atoms), f"{where}.links[{k}]")
        bonds.append((u, v, _str_field(link, "label", f"{where}.links[{k}]")))
    return Molecule(atoms, tuple(sorted(bonds)))


def from_node_link(task: str, graph: Any, where: str = "graph") -> Instance:
    """Read an instance back from its node-link ``graph``.

    Args:
        task: one of ``TASKS``.
        graph: node-link data as written by ``to_node_link`` (extra keys such as ``directed`` are ignored).
        where: the field path used in error messages.

    Returns:
        The validated instance.

    Raises:
        ValueError: the graph does not have the task's format, naming the offending field.
    """
    _check_task(task)
    instance: Instance
    if task in MOLECULE_TASKS:
        if not isinstance(graph, list) or len(graph) != 2:
            raise ValueError(f"{where}: {task} needs a list of two molecule graphs")
        instance = MoleculePair(
            _molecule_from_graph(graph[0], f"{where}[0]"), _molecule_from_graph(graph[1], f"{where}[1]")
        )
    else:
        nodes, links = _nodes_and_links(graph, where)
        names = tuple(_str_field(node, "name", f"{where}.nodes[{k}]") for k, node in enumerate(nodes))
        pairs = [_endpoints(link, len(names), f"{where}.links[{k}]") for k, link in enumerate(links)]
        if task == "tsp":
            weights = [[0] * len(names) for _ in names]
            for k, (link, (u, v)) in enumerate(zip(links, pairs, strict=True)):
                weights[u][v] = weights[v][u] = _int_field(link, "weight", f"{where}.links[{k}]")
            instance = TspInstance(names, tuple(tuple(row) for row in weights))
            if len(set(pairs)) != len(pairs) or len(pairs) != len(names) * (len(names) - 1) // 2:
                raise ValueError(f"{where}.links: tsp needs exactly one weighted link per pair of airports")
        else:
            instance = SocialGraph(names, tuple(sorted(pairs)))
    validate_instance(task, instance, where)
    return instance


def validate_instance(task: str, instance: Instance, where: str = "graph") -> None:
    """Check the invariants every instance of ``task`` must hold.

    Raises:
        ValueError: duplicate names/edges, unknown bond type, distances out of range, unequal GED sizes, ...
    """
    if isinstance(instance, SocialGraph):
        if instance.n < 1 or len(set(instance.names)) != instance.n:
            raise ValueError(f"{where}.nodes: names must be non-empty and distinct")
        for k, name in enumerate(instance.names):
            if name != name.strip() or set(name) & set("[],"):
                raise ValueError(f"{where}.nodes[{k}].name: {name!r} cannot be written in a [A, B] answer")
        if len(set(instance.edges)) != len(instance.edges):
            raise ValueError(f"{where}.links: duplicate edge")
    elif isinstance(instance, TspInstance):
        if instance.n < 3 or len(set(instance.codes)) != instance.n:
            raise ValueError(f"{where}.nodes: tsp needs at least 3 airports with distinct codes")
        if not all(AIRPORT_CODE.fullmatch(code) for code in instance.codes):
            raise ValueError(f"{where}.nodes: tsp names must be three upper-case letters (IATA-like codes)")
        for i, j in itertools.combinations(range(instance.n), 2):
            w = instance.weights[i][j]
            if w != instance.weights[j][i] or not 0 < w <= MAX_TSP_DISTANCE:
                raise ValueError(f"{where}.links: distance {i}-{j} must be symmetric and in 1..{MAX_TSP_DISTANCE}")
    elif isinstance(instance, MoleculePair):
        for side, mol in (("[0]", instance.a), ("[1]", instance.b)):
            if mol.n < 1:
                raise ValueError(f"{where}{side}.nodes: empty molecule")
            if len(mol.edge_set()) != len(mol.bonds):
                raise ValueError(f"{where}{side}.links: duplicate bond")
            for u, v, bond in mol.bonds:
                if bond not in BOND_TYPES:
                    raise ValueError(f"{where}{side}.links: bond {u}-{v} has unknown type {bond!r}")
        if task == "ged" and instance.a.n != instance.b.n:
            raise ValueError(f"{where}: ged molecules must have the same number of atoms")


def parse_ground_truth(text: str) -> GroundTruth:
    """Parse and validate a row's ground-truth JSON.

    Raises:
        ValueError: not JSON, missing/ill-typed field, or an invalid instance.
    """
    try:
        obj = json.loads(text)
    except (TypeError, json.JSONDecodeError) as exc:
        raise ValueError(f"ground_truth: not valid JSON ({exc})") from exc
    task = _str_field(obj, "task", "ground_truth")
    _check_task(task)
    optimum = _int_field(obj, "optimum", "ground_truth")
    if optimum < 0:
        raise ValueError(f"ground_truth.optimum: must be >= 0, got {optimum}")
    instance = from_node_link(task, _field(obj, "graph", "ground_truth"), "ground_truth.graph")
    return GroundTruth(task, instance, optimum)


def difficulty(instance: Instance) -> int:
    """The row's difficulty: its node count (for GED/MCS the larger molecule's)."""
    return instance.n
