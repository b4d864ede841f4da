"""Generators: determinism, GraphArena size ranges, structural invariants, names and prompts."""

from __future__ import annotations

import itertools
import random

import networkx as nx
import pytest

from rlif.graphs.airports import sample_tsp
from rlif.graphs.instance import MAX_TSP_DISTANCE, MoleculePair, SocialGraph, TspInstance
from rlif.graphs.items import make_item
from rlif.graphs.molecules import VALENCE, sample_molecule
from rlif.graphs.names import airport_codes, person_names
from rlif.graphs.prompts import ANSWER_RULES, MAX_PROMPT_CHARS
from rlif.graphs.social import social_nx
from rlif.graphs.task import sample_size
from rlif.graphs.tasks import TASKS

_AROMATIC_ORDER = 1.5
_ORDER = {"SINGLE": 1, "DOUBLE": 2, "TRIPLE": 3, "AROMATIC": _AROMATIC_ORDER}


def test_sample_size_stays_in_range_and_skews_low():
    rng = random.Random(0)
    draws = [sample_size(15, 30, rng) for _ in range(3000)]
    assert min(draws) >= 15 and max(draws) <= 30
    mean = sum(draws) / len(draws)
    assert 18.5 < mean < 21.5  # GraphArena's 15-30 draws average about 19.9


@pytest.mark.parametrize("task", TASKS)
def test_items_are_deterministic_and_in_range(task):
    for size in ("small", "large"):
        lo, hi = TASKS[task].size_ranges[size]
        first = make_item(task, size, 7, 3)
        assert first == make_item(task, size, 7, 3)
        assert first != make_item(task, size, 7, 4)
        assert first.item_id == f"{task}-{size}-7-3"
        assert lo <= first.instance.n <= hi
        assert first.prompt.startswith(ANSWER_RULES) and len(first.prompt) <= MAX_PROMPT_CHARS


def test_social_graphs_have_the_graph_arena_properties():
    for index in range(6):
        mis = make_item("mis", "large", 0, index)
        mvc = make_item("mvc", "small", 0, index)
        for item in (mis, mvc):
            assert isinstance(item.instance, SocialGraph)
            assert nx.is_connected(social_nx(item.instance))
            for name in item.instance.names:
                assert name in item.prompt
        assert mvc.optimum >= 3


def test_tsp_distances_are_a_metric_within_uint16():
    for seed in range(5):
        tsp = sample_tsp(12, random.Random(seed))
        assert isinstance(tsp, TspInstance) and len(set(tsp.codes)) == tsp.n
        w = tsp.weights
        for i, j, k in itertools.permutations(range(tsp.n), 3):
            assert w[i][j] <= w[i][k] + w[k][j]
        assert all(0 < w[i][j] <= MAX_TSP_DISTANCE for i, j in itertools.combinations(range(tsp.n), 2))


def test_molecules_respect_valence_and_are_connected():
    for seed in range(40):
        rng = random.Random(seed)
        mol = sample_molecule(rng.randint(4, 20), rng)
        used = [0.0] * mol.n
        graph = nx.Graph()
        graph.add_nodes_from(range(mol.n))
        for u, v, bond in mol.bonds:
            used[u] += _ORDER[bond]
            used[v] += _ORDER[bond]
            graph.add_edge(u, v)
        assert all(used[i] <= VALENCE[atom] for i, atom in enumerate(mol.atoms))
        assert nx.is_connected(graph)


def test_ged_pairs_are_equal_size_and_distinct():
    for index in range(5):
        item = make_item("ged", "small", 1, index)
        assert isinstance(item.instance, MoleculePair)
        assert item.instance.a.n == item.instance.b.n and item.instance.a != item.instance.b


def test_names_and_codes_are_distinct_and_seeded():
    names = person_names(random.Random(1), 300)
    assert len(set(names)) == 300 and names == person_names(random.Random(1), 300)
    assert all("," not in n and "[" not in n and n == n.strip() for n in names)
    codes = airport_codes(random.Random(2), 500)
    assert len(set(codes)) == 500 and all(len(c) == 3 and c.isupper() and c.isalpha() for c in codes)
    with pytest.raises(ValueError, match="count"):
        airport_codes(random.Random(0), 26**3 + 1)


def test_unknown_task_or_size_raises():
    with pytest.raises(ValueError, match="task"):
        make_item("clique", "small", 0, 0)
    with pytest.raises(ValueError, match="size"):
        make_item("mcp", "huge", 0, 0)
