"""Graph instance types and their node-link form: the one contract between data building and the rewards.

A row's ``reward_model.ground_truth`` is the canonical JSON of ``{"task", "graph", "optimum"}`` where ``graph`` is
networkx node-link data (keys ``nodes`` and ``links``; ``nx.node_link_graph(g, edges="links")`` reads it). Each
instance type writes and reads its own form:

* ``SocialGraph`` (``mcp``/``mis``/``mvc``): nodes ``{"id", "name"}``, links ``{"source", "target"}``.
* ``TspInstance`` (``tsp``): nodes ``{"id", "name"}`` (3-letter code), a link with an integer ``weight`` for every
  pair.
* ``MoleculePair`` (``ged``/``mcs``): a list of two graphs ``[A, B]``, nodes ``{"id", "label"}`` (element), links
  ``{"source", "target", "label"}`` (bond type); ids are ``0..n-1``, the atom indices shown in the prompt.

Which type a task uses is its registry entry's ``instance_type`` (``rlif.graphs.tasks``); the functions that take a
task id live in ``rlif.graphs.truth``. Every instance type provides ``n`` (the difficulty), ``to_node_link()``,
``from_node_link(graph, where)``, ``validate(where)``, and for importing GraphArena files ``GRAPHS`` (graphs per
instance), ``NODE_ATTRIBUTE`` and ``grapharena_link(link)``. Reading validates everything and raises
``ValueError`` naming the field, because bad ground truth must fail when the data is built, not during training.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

MAX_TSP_DISTANCE = 65535
"""fast-tsp stores distances as uint16, so every pairwise distance must fit."""

AIRPORT_CODE = re.compile(r"[A-Z]{3}")
"""TSP node names: GraphArena's answer pattern accepts only upper-case letters."""

BOND_TYPES: tuple[str, ...] = ("SINGLE", "DOUBLE", "TRIPLE", "AROMATIC")
"""Bond labels as RDKit's ``BondType`` names, which GraphArena's molecule graphs carry."""


def _link_graph(nodes: list[dict[str, Any]], links: list[dict[str, Any]]) -> dict[str, Any]:
    """Node-link data with the keys networkx writes, so ``nx.node_link_graph(g, edges="links")`` works as is."""
    return {"directed": False, "multigraph": False, "graph": {}, "nodes": nodes, "links": links}


def field(obj: Mapping[str, Any], key: str, where: str) -> Any:
    """``obj[key]``, or a ValueError naming ``where`` when ``obj`` is not a mapping holding ``key``."""
    if not isinstance(obj, Mapping) or key not in obj:
        raise ValueError(f"{where}: missing field {key!r}")
    return obj[key]


def int_field(obj: Mapping[str, Any], key: str, where: str) -> int:
    """An int field (bools refused), or a ValueError naming ``where.key``."""
    value = field(obj, key, where)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{where}.{key}: expected an int, got {value!r}")
    return value


def str_field(obj: Mapping[str, Any], key: str, where: str) -> str:
    """A non-empty string field, or a ValueError naming ``where.key``."""
    value = field(obj, key, where)
    if not isinstance(value, str) or not value:
        raise ValueError(f"{where}.{key}: expected a non-empty string, got {value!r}")
    return value


def _nodes_and_links(graph: Any, where: str) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]:
    nodes = field(graph, "nodes", where)
    links = field(graph, "links", where)
    if not isinstance(nodes, list) or not isinstance(links, list):
        raise ValueError(f"{where}: 'nodes' and 'links' must be lists")
    for k, node in enumerate(nodes):
        if int_field(node, "id", f"{where}.nodes[{k}]") != k:
            raise ValueError(f"{where}.nodes[{k}].id: ids must be 0..n-1 in order, got {node['id']!r}")
    return nodes, links


def _endpoints(link: Mapping[str, Any], n: int, where: str) -> tuple[int, int]:
    u = int_field(link, "source", where)
    v = int_field(link, "target", where)
    if not (0 <= u < n and 0 <= v < n) or u == v:
        raise ValueError(f"{where}: endpoints ({u}, {v}) must be two distinct node ids in 0..{n - 1}")
    return (u, v) if u < v else (v, u)


def _names_and_pairs(graph: Any, where: str) -> tuple[tuple[str, ...], list[Mapping[str, Any]], list[tuple[int, int]]]:
    nodes, links = _nodes_and_links(graph, where)
    names = tuple(str_field(node, "name", f"{where}.nodes[{k}]") for k, node in enumerate(nodes))
    pairs = [_endpoints(link, len(names), f"{where}.links[{k}]") for k, link in enumerate(links)]
    return names, links, pairs


@dataclass(frozen=True)
class SocialGraph:
    """A people network (MCP, MIS, MVC): node ``i`` is ``names[i]``; ``edges`` are sorted pairs ``u < v``."""

    names: tuple[str, ...]
    edges: tuple[tuple[int, int], ...]

    GRAPHS: ClassVar[int] = 1
    NODE_ATTRIBUTE: ClassVar[str] = "name"

    @property
    def n(self) -> int:
        """Number of people."""
        return len(self.names)

    def to_node_link(self) -> dict[str, Any]:
        """Nodes ``{id, name}``, links ``{source, target}``."""
        nodes = [{"id": i, "name": name} for i, name in enumerate(self.names)]
        return _link_graph(nodes, [{"source": u, "target": v} for u, v in self.edges])

    @classmethod
    def from_node_link(cls, graph: Any, where: str) -> SocialGraph:
        """Read (not yet validate) a people network."""
        names, _, pairs = _names_and_pairs(graph, where)
        return cls(names, tuple(sorted(pairs)))

    def validate(self, where: str) -> None:
        """Names distinct and writable inside ``[A, B]``; no duplicate edge."""
        if self.n < 1 or len(set(self.names)) != self.n:
            raise ValueError(f"{where}.nodes: names must be non-empty and distinct")
        for k, name in enumerate(self.names):
            if name != name.strip() or set(name) & set("[],"):
                raise ValueError(f"{where}.nodes[{k}].name: {name!r} cannot be written in a [A, B] answer")
        if len(set(self.edges)) != len(self.edges):
            raise ValueError(f"{where}.links: duplicate edge")

    @staticmethod
    def grapharena_link(link: Mapping[str, Any]) -> dict[str, Any]:
        """A GraphArena people link carries nothing rlif keeps."""
        return {}


@dataclass(frozen=True)
class TspInstance:
    """A complete metric graph of airports: ``weights[i][j]`` is the integer distance in km between codes i and j."""

    codes: tuple[str, ...]
    weights: tuple[tuple[int, ...], ...]

    GRAPHS: ClassVar[int] = 1
    NODE_ATTRIBUTE: ClassVar[str] = "name"

    @property
    def n(self) -> int:
        """Number of airports."""
        return len(self.codes)

    def to_node_link(self) -> dict[str, Any]:
        """Nodes ``{id, name}``, one link ``{source, target, weight}`` per pair."""
        nodes = [{"id": i, "name": code} for i, code in enumerate(self.codes)]
        pairs = itertools.combinations(range(self.n), 2)
        links = [{"source": i, "target": j, "weight": self.weights[i][j]} for i, j in pairs]
        return _link_graph(nodes, links)

    @classmethod
    def from_node_link(cls, graph: Any, where: str) -> TspInstance:
        """Read (not yet validate) an airport graph with exactly one weighted link per pair."""
        names, links, pairs = _names_and_pairs(graph, where)
        weights = [[0] * len(names) for _ in names]
        for k, (link, (u, v)) in enumerate(zip(links, pairs, strict=True)):
            weights[u][v] = weights[v][u] = int_field(link, "weight", f"{where}.links[{k}]")
        instance = cls(names, tuple(tuple(row) for row in weights))
        if len(set(pairs)) != len(pairs) or len(pairs) != len(names) * (len(names) - 1) // 2:
            raise ValueError(f"{where}.links: tsp needs exactly one weighted link per pair of airports")
        return instance

    def validate(self, where: str) -> None:
        """At least 3 distinct upper-case codes; symmetric distances that fit fast-tsp's uint16."""
        if self.n < 3 or len(set(self.codes)) != self.n:
            raise ValueError(f"{where}.nodes: tsp needs at least 3 airports with distinct codes")
        if not all(AIRPORT_CODE.fullmatch(code) for code in self.codes):
            raise ValueError(f"{where}.nodes: tsp names must be three upper-case letters (IATA-like codes)")
        for i, j in itertools.combinations(range(self.n), 2):
            w = self.weights[i][j]
            if w != self.weights[j][i] or not 0 < w <= MAX_TSP_DISTANCE:
                raise ValueError(f"{where}.links: distance {i}-{j} must be symmetric and in 1..{MAX_TSP_DISTANCE}")

    @staticmethod
    def grapharena_link(link: Mapping[str, Any]) -> dict[str, Any]:
        """GraphArena stores km as floats; rlif keeps integral ones as ints."""
        weight = link.get("weight")
        if not isinstance(weight, int | float) or weight != int(weight):
            raise ValueError(f"tsp weight {weight!r} is not an integral number")
        return {"weight": int(weight)}


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

    def to_node_link(self) -> dict[str, Any]:
        """Nodes ``{id, label}``, links ``{source, target, label}``."""
        nodes = [{"id": i, "label": label} for i, label in enumerate(self.atoms)]
        links = [{"source": u, "target": v, "label": bond} for u, v, bond in self.bonds]
        return _link_graph(nodes, links)

    @classmethod
    def from_node_link(cls, graph: Any, where: str) -> Molecule:
        """Read (not yet validate) one molecule."""
        nodes, links = _nodes_and_links(graph, where)
        atoms = tuple(str_field(node, "label", f"{where}.nodes[{k}]") for k, node in enumerate(nodes))
        bonds = []
        for k, link in enumerate(links):
            u, v = _endpoints(link, len(atoms), f"{where}.links[{k}]")
            bonds.append((u, v, str_field(link, "label", f"{where}.links[{k}]")))
        return cls(atoms, tuple(sorted(bonds)))


@dataclass(frozen=True)
class MoleculePair:
    """Two molecules compared by GED (same size) or MCS (sizes drawn independently)."""

    a: Molecule
    b: Molecule

    GRAPHS: ClassVar[int] = 2
    NODE_ATTRIBUTE: ClassVar[str] = "label"

    @property
    def n(self) -> int:
        """The difficulty: the larger molecule's atom count."""
        return max(self.a.n, self.b.n)

    def to_node_link(self) -> list[dict[str, Any]]:
        """The two molecules' graphs ``[A, B]``."""
        return [self.a.to_node_link(), self.b.to_node_link()]

    @classmethod
    def from_node_link(cls, graph: Any, where: str) -> MoleculePair:
        """Read (not yet validate) a list of two molecule graphs."""
        if not isinstance(graph, list) or len(graph) != 2:
            raise ValueError(f"{where}: needs a list of two molecule graphs [A, B]")
        return cls(Molecule.from_node_link(graph[0], f"{where}[0]"), Molecule.from_node_link(graph[1], f"{where}[1]"))

    def validate(self, where: str) -> None:
        """Non-empty molecules, no duplicate bond, known bond types."""
        for side, mol in (("[0]", self.a), ("[1]", self.b)):
            if mol.n < 1:
                raise ValueError(f"{where}{side}.nodes: empty molecule")
            if len(mol.edge_set()) != len(mol.bonds):
                raise ValueError(f"{where}{side}.links: duplicate bond")
            for u, v, bond in mol.bonds:
                if bond not in BOND_TYPES:
                    raise ValueError(f"{where}{side}.links: bond {u}-{v} has unknown type {bond!r}")

    @staticmethod
    def grapharena_link(link: Mapping[str, Any]) -> dict[str, Any]:
        """The bond type, from an RDKit name such as ``SINGLE`` or ``BondType.SINGLE``."""
        label = link.get("label")
        name = str(label).rsplit(".", 1)[-1].upper()
        if name not in BOND_TYPES:
            raise ValueError(f"bond label {label!r} is not one of {list(BOND_TYPES)}")
        return {"label": name}


Instance = SocialGraph | TspInstance | MoleculePair
"""The instance types of the shipped tasks; a new task may bring its own type with the same methods."""
