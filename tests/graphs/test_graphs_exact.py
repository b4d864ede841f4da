"""Every exact solver agrees with networkx's exact solvers or brute force on small instances, witness included."""

from __future__ import annotations

import itertools
import random

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlif.graphs.airports import sample_tsp
from rlif.graphs.exact import solve
from rlif.graphs.ged_milp import edit_cost
from rlif.graphs.instance import Molecule, MoleculePair, SocialGraph
from rlif.graphs.mcs_search import max_common_induced_subgraph
from rlif.graphs.molecules import sample_molecule, sample_molecule_pair
from rlif.graphs.social import social_nx
from rlif.graphs.tasks.ged import min_edit_distance
from rlif.graphs.tasks.mcp import max_clique
from rlif.graphs.tasks.mcs import max_common_subgraph
from rlif.graphs.tasks.mis import max_independent_set
from rlif.graphs.tasks.mvc import min_vertex_cover
from rlif.graphs.tasks.tsp import shortest_tour


@st.composite
def social_graphs(draw, max_n=9):
    n = draw(st.integers(1, max_n))
    pairs = list(itertools.combinations(range(n), 2))
    edges = tuple(p for p in pairs if draw(st.booleans()))
    return SocialGraph(tuple(f"P{i}" for i in range(n)), edges)


def _brute_force_best(graph: SocialGraph, ok, maximise: bool) -> int:
    sizes = [k for k in range(graph.n + 1) for subset in itertools.combinations(range(graph.n), k) if ok(set(subset))]
    return max(sizes) if maximise else min(sizes)


@settings(max_examples=40, deadline=None)
@given(social_graphs())
def test_clique_independent_set_cover_match_brute_force(graph):
    edges = set(graph.edges)

    def is_clique(s):
        return all((u, v) in edges for u, v in itertools.combinations(sorted(s), 2))

    def is_independent(s):
        return not any((u, v) in edges for u, v in itertools.combinations(sorted(s), 2))

    def is_cover(s):
        return all(u in s or v in s for u, v in edges)

    for solver, ok, maximise in (
        (max_clique, is_clique, True),
        (max_independent_set, is_independent, True),
        (min_vertex_cover, is_cover, False),
    ):
        solution = solver(graph)
        assert solution.optimum == _brute_force_best(graph, ok, maximise)
        assert ok(set(solution.witness)) and len(set(solution.witness)) == solution.optimum
    assert max_clique(graph).optimum == nx.max_weight_clique(social_nx(graph), weight=None)[1]


def test_tsp_matches_brute_force():
    for seed in range(6):
        tsp = sample_tsp(4 + seed % 4, random.Random(seed))
        best = min(
            sum(tsp.weights[a][b] for a, b in zip((0, *perm), (*perm, 0), strict=True))
            for perm in itertools.permutations(range(1, tsp.n))
        )
        solution = shortest_tour(tsp)
        assert solution.optimum == best
        tour = solution.witness
        assert tour[0] == tour[-1] and sorted(tour[:-1]) == list(range(tsp.n))
        assert sum(tsp.weights[a][b] for a, b in itertools.pairwise(tour)) == best


def _labelled_nx(mol: Molecule) -> nx.Graph:
    graph = nx.Graph()
    graph.add_nodes_from((i, {"label": label}) for i, label in enumerate(mol.atoms))
    graph.add_edges_from((u, v) for u, v, _ in mol.bonds)
    return graph


def test_ged_matches_networkx():
    for seed in range(6):
        n = 4 + seed % 2
        pair = sample_molecule_pair(n, n, random.Random(seed))
        expected = nx.graph_edit_distance(
            _labelled_nx(pair.a), _labelled_nx(pair.b), node_subst_cost=lambda x, y: float(x["label"] != y["label"])
        )
        solution = min_edit_distance(pair)
        assert solution.optimum == expected
        assert edit_cost(pair.a, pair.b, solution.witness) == solution.optimum


def test_ged_of_a_relabelled_copy_is_zero_and_sizes_must_match():
    rng = random.Random(3)
    mol = sample_molecule(12, rng)
    order = list(range(mol.n))
    rng.shuffle(order)
    copy = Molecule(
        tuple(mol.atoms[order.index(i)] for i in range(mol.n)),
        tuple(sorted((*sorted((order[u], order[v])), b) for u, v, b in mol.bonds)),
    )
    assert min_edit_distance(MoleculePair(mol, copy)).optimum == 0
    with pytest.raises(ValueError, match="equal sizes"):
        min_edit_distance(MoleculePair(mol, sample_molecule(5, rng)))


def _check_common_subgraph(pairs, edges_a, edges_b):
    a_nodes = [a for a, _ in pairs]
    b_nodes = [b for _, b in pairs]
    assert len(set(a_nodes)) == len(a_nodes) and len(set(b_nodes)) == len(b_nodes)
    ea = {frozenset(e) for e in edges_a}
    eb = {frozenset(e) for e in edges_b}
    for (a1, b1), (a2, b2) in itertools.combinations(pairs, 2):
        assert (frozenset((a1, a2)) in ea) == (frozenset((b1, b2)) in eb)


def test_mcs_matches_networkx_ismags():
    for seed in range(8):
        rng = random.Random(seed)
        pair = sample_molecule_pair(rng.randint(4, 8), rng.randint(4, 8), rng)
        ga, gb = _labelled_nx(pair.a), _labelled_nx(pair.b)
        ismags = nx.isomorphism.ISMAGS(ga, gb)
        expected = len(next(iter(ismags.largest_common_subgraph(symmetry=False))))
        solution = max_common_subgraph(pair)
        assert solution.optimum == expected
        _check_common_subgraph(solution.witness, ga.edges(), gb.edges())


@settings(max_examples=40, deadline=None)
@given(social_graphs(max_n=7), social_graphs(max_n=7))
def test_mcs_matches_brute_force_on_arbitrary_graphs(graph_a, graph_b):
    """Dense and disconnected graphs too, not just molecules: try every injection of every subset."""
    pairs = max_common_induced_subgraph(graph_a.n, graph_a.edges, graph_b.n, graph_b.edges)
    _check_common_subgraph(pairs, graph_a.edges, graph_b.edges)
    ga, gb = social_nx(graph_a), social_nx(graph_b)
    best = 0
    for k in range(min(ga.number_of_nodes(), gb.number_of_nodes()), 0, -1):
        if any(
            nx.is_isomorphic(ga.subgraph(sa), gb.subgraph(sb))
            for sa in itertools.combinations(ga, k)
            for sb in itertools.combinations(gb, k)
        ):
            best = k
            break
    assert len(pairs) == best


def test_solve_dispatch_rejects_mismatched_instance():
    with pytest.raises(ValueError, match="no exact solver"):
        solve("tsp", SocialGraph(("A",), ()))
