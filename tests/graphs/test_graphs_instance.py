"""Ground-truth JSON: round trips, networkx readability and the ValueErrors bad data must raise."""

from __future__ import annotations

import json

import networkx as nx
import pytest

from rlif.graphs.instance import Molecule, MoleculePair, SocialGraph, TspInstance
from rlif.graphs.truth import from_node_link, ground_truth_json, parse_ground_truth, to_node_link

SOCIAL = SocialGraph(("Ana Silva", "Bo Kim", "Manfred Schmidt-Schauß"), ((0, 1), (1, 2)))
TSP = TspInstance(("AAA", "BBB", "CCC", "DDD"), ((0, 5, 7, 3), (5, 0, 4, 6), (7, 4, 0, 2), (3, 6, 2, 0)))
MOL_A = Molecule(("C", "C", "O"), ((0, 1, "SINGLE"), (1, 2, "DOUBLE")))
MOL_B = Molecule(("C", "N", "C"), ((0, 1, "SINGLE"), (0, 2, "SINGLE")))
PAIR = MoleculePair(MOL_A, MOL_B)
CASES = [
    ("mcp", SOCIAL, 2),
    ("mis", SOCIAL, 2),
    ("mvc", SOCIAL, 1),
    ("tsp", TSP, 14),
    ("ged", PAIR, 3),
    ("mcs", PAIR, 3),
]


@pytest.mark.parametrize(("task", "instance", "optimum"), CASES)
def test_round_trip(task, instance, optimum):
    text = ground_truth_json(task, instance, optimum)
    truth = parse_ground_truth(text)
    assert (truth.task, truth.instance, truth.optimum) == (task, instance, optimum)
    assert text == json.dumps(json.loads(text), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def test_documented_node_and_link_fields():
    social = to_node_link("mcp", SOCIAL)
    assert social["nodes"][2] == {"id": 2, "name": "Manfred Schmidt-Schauß"}
    assert social["links"] == [{"source": 0, "target": 1}, {"source": 1, "target": 2}]
    tsp = to_node_link("tsp", TSP)
    assert len(tsp["links"]) == 6 and {"source": 2, "target": 3, "weight": 2} in tsp["links"]
    a, b = to_node_link("ged", PAIR)
    assert a["nodes"][2] == {"id": 2, "label": "O"} and a["links"][1] == {"source": 1, "target": 2, "label": "DOUBLE"}
    assert b["nodes"][1] == {"id": 1, "label": "N"}


def test_networkx_reads_the_graph():
    graph = nx.node_link_graph(json.loads(ground_truth_json("tsp", TSP, 14))["graph"], edges="links")
    assert graph.number_of_edges() == 6 and graph[0][3]["weight"] == 3 and graph.nodes[1]["name"] == "BBB"


def _mutated(task, instance, change):
    obj = json.loads(ground_truth_json(task, instance, 1))
    change(obj)
    return json.dumps(obj)


@pytest.mark.parametrize(
    ("task", "instance", "change", "message"),
    [
        ("mcp", SOCIAL, lambda o: o.pop("optimum"), "optimum"),
        ("mcp", SOCIAL, lambda o: o.update(task="clique"), "task"),
        ("mcp", SOCIAL, lambda o: o.update(optimum=-1), "optimum"),
        ("mcp", SOCIAL, lambda o: o["graph"]["nodes"][1].update(id=5), "id"),
        ("mcp", SOCIAL, lambda o: o["graph"]["nodes"][1].update(name="Ana Silva"), "distinct"),
        ("mcp", SOCIAL, lambda o: o["graph"]["links"].append({"source": 1, "target": 0}), "duplicate"),
        ("mcp", SOCIAL, lambda o: o["graph"]["links"].append({"source": 1, "target": 1}), "endpoints"),
        ("mcp", SOCIAL, lambda o: o["graph"]["nodes"][1].update(name="Kim, Bo"), "cannot be written"),
        ("mcp", SOCIAL, lambda o: o["graph"]["nodes"][1].update(name="Bo Kim "), "cannot be written"),
        ("tsp", TSP, lambda o: o["graph"]["nodes"][1].update(name="Bbb"), "three upper-case letters"),
        ("tsp", TSP, lambda o: o["graph"]["links"].pop(), "one weighted link per pair"),
        ("tsp", TSP, lambda o: o["graph"]["links"][0].update(weight=70000), "distance"),
        ("tsp", TSP, lambda o: o["graph"]["links"][0].update(weight=1.5), "weight"),
        ("ged", PAIR, lambda o: o["graph"][0]["links"][0].update(label="QUADRUPLE"), "bond"),
        ("ged", PAIR, lambda o: o["graph"][1]["nodes"].append({"id": 3, "label": "C"}), "same number"),
        ("mcs", PAIR, lambda o: o.update(graph=o["graph"][:1]), "two molecule graphs"),
    ],
)
def test_bad_ground_truth_raises(task, instance, change, message):
    with pytest.raises(ValueError, match=message):
        parse_ground_truth(_mutated(task, instance, change))


def test_not_json_and_wrong_instance_type_raise():
    with pytest.raises(ValueError, match="JSON"):
        parse_ground_truth("{not json")
    with pytest.raises(ValueError, match="not an instance"):
        to_node_link("tsp", SOCIAL)
    with pytest.raises(ValueError, match="optimum"):
        ground_truth_json("mcp", SOCIAL, True)


def test_mcs_allows_different_sizes():
    pair = MoleculePair(MOL_A, Molecule(("C", "C"), ((0, 1, "SINGLE"),)))
    assert from_node_link("mcs", to_node_link("mcs", pair)) == pair
