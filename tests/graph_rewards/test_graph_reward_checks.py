"""Feasibility and objective of graph answers: hand-made cases, every exploit from the notes, brute-force agreement."""

from __future__ import annotations

import itertools
import random

import networkx as nx
import pytest
from graph_reward_instances import (
    brute_ged,
    molecule,
    molecule_truth,
    random_molecule,
    random_social,
    random_tsp,
    social_truth,
    to_nx,
    tsp_truth,
)

from rewards.graph.checks import Category, judge
from rewards.graph.truth import parse_ground_truth

NAMES = ["Ana Li", "Bo Chen", "Manfred Schmidt-Schauss", "Manfred Schmidt-Schauß", "Dana Ortiz", "Eve Park"]
EDGES = [(0, 1), (0, 2), (1, 2), (2, 3), (3, 4), (4, 5), (1, 4)]
# Max clique {Ana, Bo, Schauss} = 3; max independent set size 3 (e.g. Ana, Schauß, Eve); min cover 3.


def verdict(task: str, answer: str, truth: str | None = None):
    return judge(parse_ground_truth(truth or social_truth(task, NAMES, EDGES)), answer)


def names(*ids: int) -> str:
    return "[" + ", ".join(NAMES[i] for i in ids) + "]"


def test_hand_made_optima_are_what_the_brute_force_says():
    assert [parse_ground_truth(social_truth(t, NAMES, EDGES)).optimum for t in ("mcp", "mis", "mvc")] == [3, 3, 3]


@pytest.mark.parametrize(
    ("task", "answer", "category", "value"),
    [
        ("mcp", names(0, 1, 2), Category.OPTIMAL, 3),
        ("mcp", "The clique is " + names(2, 1, 0) + ".", Category.OPTIMAL, 3),
        ("mcp", names(3, 4), Category.SUBOPTIMAL, 2),
        ("mcp", names(0, 1, 3), Category.INFEASIBLE, None),  # 0-3 is not an edge
        ("mcp", "[]", Category.SUBOPTIMAL, 0),
        ("mcp", names(0, 1, 2) + " and some text [see above]", Category.INFEASIBLE, None),  # last bracket wins
        ("mcp", names(0, 1, 2, 2), Category.INFEASIBLE, None),  # duplicate
        ("mcp", "[Ana Li, Bo Chen, Manfred Schmidt-Schauss, Nobody]", Category.INFEASIBLE, None),  # unknown name
        ("mcp", "[ana li, bo chen, manfred schmidt-schauss]", Category.INFEASIBLE, None),  # names are exact
        ("mcp", '["Ana Li", "Bo Chen", \'Manfred Schmidt-Schauss\']', Category.OPTIMAL, 3),  # quotes stripped
        ("mcp", "[Ana Li, Bo Chen, Manfred Schmidt-Schauß]", Category.INFEASIBLE, None),  # the other Manfred
        ("mcp", "no brackets at all", Category.MISSING, None),
        ("mcp", "[\nAna Li,\nBo Chen,\nManfred Schmidt-Schauss\n]", Category.OPTIMAL, 3),
        ("mis", names(0, 3, 5), Category.OPTIMAL, 3),
        ("mis", names(0, 3), Category.SUBOPTIMAL, 2),
        ("mis", names(0, 3, 3), Category.INFEASIBLE, None),  # exploit: opt-1 distinct + a duplicate
        ("mis", names(*[5] * 6), Category.INFEASIBLE, None),  # exploit: one node E+3 times
        ("mis", names(0, 3, 5) + "[Ghost]", Category.INFEASIBLE, None),
        ("mis", "[Ana Li, Manfred Schmidt-Schauß, Eve Park, Ghost]", Category.INFEASIBLE, None),  # exploit: fake name
        ("mis", names(0, 1), Category.INFEASIBLE, None),
        ("mvc", names(1, 2, 4), Category.OPTIMAL, 3),
        ("mvc", names(0, 1, 2, 4), Category.SUBOPTIMAL, 4),
        ("mvc", names(1, 2), Category.INFEASIBLE, None),  # 3-4, 4-5 uncovered
        ("mvc", names(1, 2, 4, 4), Category.INFEASIBLE, None),  # duplicate
        ("mvc", "[Bo Chen, Manfred Schmidt-Schauss, Dana Ortiz, Ghost]", Category.INFEASIBLE, None),
        ("mvc", "[]", Category.INFEASIBLE, None),
        ("mvc", "[Bo Chen, , Manfred Schmidt-Schauss, Dana Ortiz]", Category.INFEASIBLE, None),  # empty item
    ],
)
def test_social_answers(task, answer, category, value):
    v = verdict(task, answer)
    assert (v.category, v.value) == (category, value)
    assert v.feasible == (value is not None)


CODES = ["YNT", "TEB", "CFC", "VIE", "NSH", "ROV"]
# GraphArena's example (utils/examples.md), optimum 42737.
_KM = {
    ("YNT", "VIE"): 7962, ("YNT", "ROV"): 6644, ("YNT", "NSH"): 6176, ("YNT", "CFC"): 18668, ("YNT", "TEB"): 12263,
    ("TEB", "VIE"): 6987, ("TEB", "ROV"): 8529, ("TEB", "NSH"): 10389, ("TEB", "CFC"): 8846, ("CFC", "VIE"): 10716,
    ("CFC", "ROV"): 12244, ("CFC", "NSH"): 13193, ("VIE", "ROV"): 1736, ("VIE", "NSH"): 3406, ("NSH", "ROV"): 3000,
}  # fmt: skip
WEIGHTS = [[0 if a == b else _KM.get((a, b), _KM.get((b, a), 0)) for b in CODES] for a in CODES]
TSP = tsp_truth(CODES, WEIGHTS)
OPT_TOUR = "[YNT, TEB, CFC, VIE, ROV, NSH, YNT]"


def test_grarena_example_optimum():
    assert parse_ground_truth(TSP).optimum == 42737


@pytest.mark.parametrize(
    ("answer", "category", "value"),
    [
        (OPT_TOUR, Category.OPTIMAL, 42737),
        ("[VIE, ROV, NSH, YNT, TEB, CFC, VIE]", Category.OPTIMAL, 42737),  # rotated
        ("[YNT, NSH, ROV, VIE, CFC, TEB, YNT]", Category.OPTIMAL, 42737),  # reversed
        ("[ynt, teb, cfc, vie, rov, nsh, ynt]", Category.OPTIMAL, 42737),  # case-insensitive codes
        (OPT_TOUR + " [Done]", Category.OPTIMAL, 42737),  # [Done] is not a code list
        (OPT_TOUR + " [total 42737 km]", Category.OPTIMAL, 42737),
        ("[YNT, TEB, CFC, VIE, NSH, ROV, YNT]", Category.SUBOPTIMAL, 12263 + 8846 + 10716 + 3406 + 3000 + 6644),
        ("[YNT, TEB, CFC, VIE, ROV, NSH]", Category.INFEASIBLE, None),  # no return
        ("[YNT, TEB, CFC, ROV, NSH, YNT]", Category.INFEASIBLE, None),  # VIE missing
        ("[YNT, TEB, CFC, VIE, ROV, ROV, YNT]", Category.INFEASIBLE, None),  # repeated city
        ("[YNT, TEB, CFC, VIE, ROV, NSH, TEB]", Category.INFEASIBLE, None),  # not closed
        ("[YNT, TEB, CFC, VIE, ROV, NSH, YNT, TEB, YNT]", Category.INFEASIBLE, None),  # too long
        ("[YNT, TEB, CFC, VIE, ROV, XXX, YNT]", Category.INFEASIBLE, None),  # unknown code
        ("[Done]", Category.MISSING, None),
        ("YNT -> TEB -> CFC", Category.MISSING, None),
    ],
)
def test_tsp_answers(answer, category, value):
    v = judge(parse_ground_truth(TSP), answer)
    assert (v.category, v.value) == (category, value)


# GED: A = C0-C1-N2 path, B = N0-C1-C2 path: mapping [2, 1, 0] is free.
GED = molecule_truth("ged", molecule(["C", "C", "N"], [(0, 1), (1, 2)]), molecule(["N", "C", "C"], [(0, 1), (1, 2)]))
# MCS: A = triangle 0-1-2 plus pendant 3 on 2; B = path 0-1-2-3.
MCS = molecule_truth(
    "mcs", molecule(list("CCCC"), [(0, 1), (0, 2), (1, 2), (2, 3)]), molecule(list("CCCC"), [(0, 1), (1, 2), (2, 3)])
)


def test_small_molecule_optima():
    assert parse_ground_truth(GED).optimum == 0
    assert parse_ground_truth(MCS).optimum == 3  # e.g. path 0-2-3 in A and 0-1-2 in B


@pytest.mark.parametrize(
    ("answer", "category", "value"),
    [
        ("[2, 1, 0]", Category.OPTIMAL, 0),
        ("[2 1 0]", Category.OPTIMAL, 0),
        ("[0, 1, 2]", Category.SUBOPTIMAL, 2),  # two relabels, no edge change
        ("[1, 0, 2]", Category.SUBOPTIMAL, 4),  # relabels A1->B0, A2->B2; bond 1-2 becomes 0-2: delete + insert
        ("[2, 1, 0] then [1, 2]", Category.INFEASIBLE, None),  # last integer list wins
        ("[2, 1, 0] [see above]", Category.OPTIMAL, 0),  # not an integer list
        ("[1, 1, 2]", Category.INFEASIBLE, None),
        ("[0, 1]", Category.INFEASIBLE, None),
        ("[0, 1, 2, 3]", Category.INFEASIBLE, None),
        ("[0, 1, 99999999999999999999999999]", Category.INFEASIBLE, None),
        ("[]", Category.INFEASIBLE, None),
        ("mapping: 2, 1, 0", Category.MISSING, None),
    ],
)
def test_ged_answers(answer, category, value):
    v = judge(parse_ground_truth(GED), answer)
    assert (v.category, v.value) == (category, value)


@pytest.mark.parametrize(
    ("answer", "category", "value"),
    [
        ("[0, 2, 3], [0, 1, 2]", Category.OPTIMAL, 3),
        ("[3, 2, 0], [2, 1, 0]", Category.OPTIMAL, 3),
        ("[0, 2, 3], [1, 0, 2]", Category.INFEASIBLE, None),  # isomorphic sets, but A's 0-2 bond pairs with B's 1-0
        ("[0, 2, 3], [2, 1, 0]", Category.OPTIMAL, 3),  # the path 0-2-3 read backwards on B is still a pairing
        ("Molecule A: [0, 2, 3]\nMolecule B: [0, 1, 2]", Category.OPTIMAL, 3),
        ("[0, 1], [0, 1]", Category.SUBOPTIMAL, 2),
        ("[0], [0]", Category.SUBOPTIMAL, 1),
        ("[0, 1, 2], [0, 1, 2]", Category.INFEASIBLE, None),  # triangle vs path
        ("[0, 2, 90], [0, 1, 91]", Category.INFEASIBLE, None),  # exploit: fake out-of-range pair
        ("[0, 2, 3, 90], [0, 1, 2, 91]", Category.INFEASIBLE, None),  # exploit: optimum + fake pair
        ("[0, 2, 2], [0, 1, 1]", Category.INFEASIBLE, None),  # exploit: duplicated pair
        ("[0, 2, 3], [0, 1]", Category.INFEASIBLE, None),  # unequal lengths
        ("[0, 2, 3]", Category.MISSING, None),  # a single list
        ("[], []", Category.SUBOPTIMAL, 0),
    ],
)
def test_mcs_answers(answer, category, value):
    v = judge(parse_ground_truth(MCS), answer)
    assert (v.category, v.value) == (category, value)


def test_quality_is_capped_and_one_only_when_optimal():
    truth = parse_ground_truth(social_truth("mis", NAMES, EDGES))
    assert judge(truth, names(0, 3, 5)).quality == 1.0
    assert judge(truth, names(0, 3)).quality == pytest.approx(2 / 3)
    tsp = parse_ground_truth(TSP)
    assert judge(tsp, "[YNT, TEB, CFC, VIE, NSH, ROV, YNT]").quality == pytest.approx(42737 / 44875)
    # A "better than optimal" answer (only possible with a wrong optimum) is optimal with quality exactly 1.
    low = parse_ground_truth(tsp_truth(CODES, WEIGHTS, optimum=42737 + 100))
    assert judge(low, OPT_TOUR).quality == 1.0


@pytest.mark.parametrize("task", ["mcp", "mis", "mvc"])
@pytest.mark.parametrize("seed", range(4))
def test_social_verdicts_agree_with_brute_force_on_every_subset(task, seed):
    rng = random.Random(seed)
    names_, edges = random_social(rng, 6, 0.45)
    truth = parse_ground_truth(social_truth(task, names_, edges))
    graph = nx.Graph(edges)
    graph.add_nodes_from(range(6))
    for k in range(7):
        for subset in itertools.combinations(range(6), k):
            sub = graph.subgraph(subset)
            ok = {
                "mcp": sub.number_of_edges() == k * (k - 1) // 2,
                "mis": sub.number_of_edges() == 0,
                "mvc": all(u in subset or v in subset for u, v in edges),
            }[task]
            v = judge(truth, "[" + ", ".join(names_[i] for i in rng.sample(subset, k)) + "]")
            assert v.value == (k if ok else None)
            assert (v.category is Category.OPTIMAL) == (ok and k == truth.optimum)


@pytest.mark.parametrize("seed", range(3))
def test_tsp_verdicts_agree_with_brute_force(seed):
    rng = random.Random(seed)
    codes, weights = random_tsp(rng, 6)
    truth = parse_ground_truth(tsp_truth(codes, weights))
    lengths = []
    for perm in itertools.permutations(range(6)):
        tour = [*perm, perm[0]]
        v = judge(truth, "[" + ", ".join(codes[i] for i in tour) + "]")
        assert v.value == sum(weights[a][b] for a, b in itertools.pairwise(tour))
        lengths.append(v.value)
    assert min(lengths) == truth.optimum


@pytest.mark.parametrize("seed", range(3))
def test_ged_costs_agree_with_networkx(seed):
    rng = random.Random(seed)
    first, second = random_molecule(rng, 5), random_molecule(rng, 5)
    truth = parse_ground_truth(molecule_truth("ged", first, second))
    ga, gb = to_nx(first), to_nx(second)
    costs = []
    for perm in itertools.permutations(range(5)):
        mapped = nx.relabel_nodes(ga, dict(enumerate(perm)))
        relabels = sum(ga.nodes[i]["label"] != gb.nodes[j]["label"] for i, j in enumerate(perm))
        expected = relabels + len({frozenset(e) for e in mapped.edges} ^ {frozenset(e) for e in gb.edges})
        v = judge(truth, str(list(perm)))
        assert v.value == expected
        costs.append(expected)
    assert min(costs) == truth.optimum == brute_ged(first, second)


@pytest.mark.parametrize("seed", range(3))
def test_mcs_verdicts_agree_with_networkx(seed):
    rng = random.Random(seed)
    first, second = random_molecule(rng, 5), random_molecule(rng, 4)
    truth = parse_ground_truth(molecule_truth("mcs", first, second))
    ga, gb = to_nx(first), to_nx(second)
    for _ in range(150):
        k = rng.randint(1, 4)
        left, right = rng.sample(range(5), k), rng.sample(range(4), k)
        v = judge(truth, f"{left}, {right}")
        pairing = dict(zip(left, right, strict=True))
        iso = nx.is_isomorphic(ga.subgraph(left), gb.subgraph(right))
        images = {frozenset((pairing[u], pairing[v])) for u, v in ga.subgraph(left).edges}
        is_map = images == {frozenset(e) for e in gb.subgraph(right).edges}
        assert v.value == (k if is_map else None)
        assert (v.category is Category.OPTIMAL) == (is_map and k == truth.optimum)
        assert iso or not is_map  # a valid pairing is an isomorphism
    # Every optimum is reachable as a pairing: the best feasible pairing has exactly the brute-force size.
    best = max(
        k
        for k in range(1, 5)
        for left in itertools.permutations(range(5), k)
        for right in itertools.combinations(range(4), k)
        if judge(truth, f"{list(left)}, {list(right)}").value == k
    )
    assert best == truth.optimum
