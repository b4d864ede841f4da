"""Molecule-like labelled graphs for GED and MCS: heavy atoms with element labels and valence-respecting bonds.

GraphArena draws pairs of real molecules (RDKit graphs of heavy atoms, bond labels = RDKit bond type names). We
generate molecules instead: a random tree of heavy atoms grown under each element's valence, a few ring
closures that make 5- and 6-membered rings, then some bonds raised to double or triple where both atoms still
have free valence (the rest is implicit hydrogen). Six-membered all-carbon rings are sometimes made aromatic.
The result has the degrees (<= 4), ring counts and label mix of small organic molecules.

Deviation from GraphArena: the molecules are synthetic (no molecule data set is shipped).
"""

from __future__ import annotations

import random

import networkx as nx

from rlif.graphs.instance import Molecule, MoleculePair

VALENCE: dict[str, int] = {"C": 4, "N": 3, "O": 2, "S": 2, "F": 1, "Cl": 1}
_ELEMENT_WEIGHTS: dict[str, float] = {"C": 72, "N": 11, "O": 11, "S": 3, "F": 2, "Cl": 1}


def _pick_element(rng: random.Random, allowed: tuple[str, ...]) -> str:
    return rng.choices(allowed, weights=[_ELEMENT_WEIGHTS[e] for e in allowed])[0]


def _grow_tree(rng: random.Random, n: int) -> tuple[list[str], list[int], nx.Graph]:
    """Atoms, their free valence and the bond graph of a random valence-respecting tree of ``n`` atoms."""
    atoms = [_pick_element(rng, ("C", "C", "N", "O", "S"))]
    free = [VALENCE[atoms[0]]]
    graph = nx.Graph()
    graph.add_node(0)
    for new in range(1, n):
        open_atoms = [i for i in range(new) if free[i] > 0]
        # A newcomer must leave a free valence for the atoms still to come (univalent atoms only at the end).
        needs_branch = new < n - 1 and sum(free[i] for i in open_atoms) <= 1
        allowed = tuple(e for e in VALENCE if VALENCE[e] >= 2) if needs_branch else tuple(VALENCE)
        element = _pick_element(rng, allowed)
        parent = rng.choice(open_atoms)
        atoms.append(element)
        free.append(VALENCE[element] - 1)
        free[parent] -= 1
        graph.add_edge(parent, new)
    return atoms, free, graph


def _close_rings(rng: random.Random, free: list[int], graph: nx.Graph, rings: int) -> None:
    """Add up to ``rings`` bonds that close 5- or 6-membered rings between atoms with free valence."""
    for _ in range(rings):
        candidates = [
            (u, v)
            for u, lengths in nx.all_pairs_shortest_path_length(graph, cutoff=5)
            for v, d in lengths.items()
            if u < v and d in (4, 5) and free[u] > 0 and free[v] > 0
        ]
        if not candidates:
            return
        u, v = rng.choice(candidates)
        graph.add_edge(u, v)
        free[u] -= 1
        free[v] -= 1


def _bond_types(rng: random.Random, atoms: list[str], free: list[int], graph: nx.Graph) -> dict[tuple[int, int], str]:
    """Bond labels: aromatic all-carbon 6-rings sometimes, then random double/triple bonds within free valence."""
    types = {tuple(sorted(e)): "SINGLE" for e in graph.edges()}
    aromatic: set[int] = set()
    for cycle in nx.cycle_basis(graph):
        if len(cycle) != 6 or aromatic.intersection(cycle):  # no fused aromatic systems: keeps valences simple
            continue
        if all(atoms[a] == "C" and free[a] > 0 for a in cycle) and rng.random() < 0.6:
            aromatic.update(cycle)
            for k in range(6):
                types[tuple(sorted((cycle[k], cycle[(k + 1) % 6])))] = "AROMATIC"
            for a in cycle:  # an aromatic carbon uses one extra valence unit, as in a Kekule structure
                free[a] -= 1
    edges = list(types)
    rng.shuffle(edges)
    for u, v in edges:
        if types[(u, v)] != "SINGLE" or min(free[u], free[v]) < 1 or rng.random() > 0.2:
            continue
        order = 3 if min(free[u], free[v]) >= 2 and {atoms[u], atoms[v]} <= {"C", "N"} and rng.random() < 0.15 else 2
        types[(u, v)] = "TRIPLE" if order == 3 else "DOUBLE"
        free[u] -= order - 1
        free[v] -= order - 1
    return types


def sample_molecule(n: int, rng: random.Random) -> Molecule:
    """A connected molecule-like graph of ``n`` heavy atoms.

    Raises:
        ValueError: ``n`` < 1.
    """
    if n < 1:
        raise ValueError(f"n: a molecule needs at least one atom, got {n}")
    atoms, free, graph = _grow_tree(rng, n)
    _close_rings(rng, free, graph, rng.choice((0, 1, 1, 2)) if n >= 5 else 0)
    types = _bond_types(rng, atoms, free, graph)
    order = list(range(n))
    rng.shuffle(order)  # atom indices in the prompt should not reveal the growth order
    relabel = {old: new for new, old in enumerate(order)}
    new_atoms = [""] * n
    for old, new in relabel.items():
        new_atoms[new] = atoms[old]
    bonds = sorted((*sorted((relabel[u], relabel[v])), bond) for (u, v), bond in types.items())
    return Molecule(tuple(new_atoms), tuple((u, v, bond) for u, v, bond in bonds))


def sample_molecule_pair(n_a: int, n_b: int, rng: random.Random) -> MoleculePair:
    """Two molecules of the given sizes; redrawn until they differ (GraphArena pairs distinct molecules)."""
    a = sample_molecule(n_a, rng)
    while True:
        b = sample_molecule(n_b, rng)
        if b != a:
            return MoleculePair(a, b)
