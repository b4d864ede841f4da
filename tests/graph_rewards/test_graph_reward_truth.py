"""Ground-truth parsing: every malformed instance raises ValueError naming the field; parsing is cached."""

from __future__ import annotations

import json

import pytest
from graph_reward_instances import molecule, molecule_truth, social_truth, tsp_truth

from rewards.graph.truth import check_ground_truth, parse_ground_truth

NAMES = ["Ana Li", "Bo Chen", "Cy Diaz", "Dee Ek"]
EDGES = [(0, 1), (1, 2), (2, 3)]


def mutate(truth: str, edit) -> str:
    obj = json.loads(truth)
    edit(obj)
    return json.dumps(obj)


GOOD = social_truth("mis", NAMES, EDGES)
TSP = tsp_truth(["AAA", "BBB", "CCC"], [[0, 2, 3], [2, 0, 4], [3, 4, 0]])
GED = molecule_truth("ged", molecule(["C", "N"], [(0, 1)]), molecule(["C", "C"], [(0, 1)]))


def test_valid_rows_pass():
    for truth in (GOOD, TSP, GED, social_truth("mcp", NAMES, EDGES), social_truth("mvc", NAMES, EDGES)):
        check_ground_truth(truth, {"split": "train"})


@pytest.mark.parametrize(
    ("truth", "field"),
    [
        ("not json", "ground_truth"),
        (json.dumps([1, 2]), "ground_truth"),
        (mutate(GOOD, lambda o: o.update(task="tsp2")), "ground_truth.task"),
        (mutate(GOOD, lambda o: o.pop("optimum")), "ground_truth"),
        (mutate(GOOD, lambda o: o.update(optimum=2.0)), "ground_truth.optimum"),
        (mutate(GOOD, lambda o: o.update(optimum=True)), "ground_truth.optimum"),
        (mutate(GOOD, lambda o: o.update(optimum=4)), "ground_truth.optimum"),  # a path of 4 has alpha = 2
        (mutate(GOOD, lambda o: o.update(optimum=0)), "ground_truth.optimum"),
        (mutate(GOOD, lambda o: o["graph"]["nodes"][1].update(id=5)), "ground_truth.graph.nodes[1].id"),
        (mutate(GOOD, lambda o: o["graph"]["nodes"][1].update(name="Ana Li")), "ground_truth.graph.nodes"),
        (mutate(GOOD, lambda o: o["graph"]["nodes"][1].update(name="Li, Ana")), "ground_truth.graph.nodes[1].name"),
        (mutate(GOOD, lambda o: o["graph"]["nodes"][1].update(name=" Bo")), "ground_truth.graph.nodes[1].name"),
        (mutate(GOOD, lambda o: o["graph"]["nodes"][1].update(name="")), "ground_truth.graph.nodes[1].name"),
        (mutate(GOOD, lambda o: o["graph"]["links"].append({"source": 0, "target": 9})), "ground_truth.graph.links[3]"),
        (mutate(GOOD, lambda o: o["graph"]["links"].append({"source": 1, "target": 0})), "ground_truth.graph.links[3]"),
        (mutate(GOOD, lambda o: o["graph"]["links"].append({"source": 2, "target": 2})), "ground_truth.graph.links[3]"),
        (mutate(GOOD, lambda o: o["graph"].pop("links")), "ground_truth.graph"),
        (mutate(GOOD, lambda o: o["graph"].update(nodes=[], links=[])), "ground_truth.graph.nodes"),
        (mutate(social_truth("mcp", NAMES, EDGES), lambda o: o.update(optimum=3)), "ground_truth.optimum"),
        (mutate(social_truth("mvc", NAMES, EDGES), lambda o: o.update(optimum=4)), "ground_truth.optimum"),
        (mutate(TSP, lambda o: o["graph"]["nodes"][0].update(name="AAAA")), "ground_truth.graph.nodes[0].name"),
        (mutate(TSP, lambda o: o["graph"]["nodes"][0].update(name="aaa")), "ground_truth.graph.nodes[0].name"),
        (mutate(TSP, lambda o: o["graph"]["links"].pop()), "ground_truth.graph.links"),
        (mutate(TSP, lambda o: o["graph"]["links"][0].update(weight=0)), "ground_truth.graph.links[0].weight"),
        (mutate(TSP, lambda o: o["graph"]["links"][0].pop("weight")), "ground_truth.graph.links[0]"),
        (mutate(TSP, lambda o: o.update(optimum=8)), "ground_truth.optimum"),  # the only tour costs 9
        (mutate(TSP, lambda o: o.update(optimum=10)), "ground_truth.optimum"),
        (mutate(GED, lambda o: o.update(graph=o["graph"][:1])), "ground_truth.graph"),
        (mutate(GED, lambda o: o["graph"][1]["nodes"].append({"id": 2, "label": "O"})), "ground_truth.graph"),
        (mutate(GED, lambda o: o.update(optimum=2)), "ground_truth.optimum"),  # identity mapping costs 1
        (mutate(GED, lambda o: o["graph"][0]["nodes"][0].pop("label")), "ground_truth.graph[0].nodes[0]"),
        (mutate(GED, lambda o: o.update(task="mcs", optimum=3)), "ground_truth.optimum"),
    ],
)
def test_malformed_rows_raise_naming_the_field(truth, field):
    with pytest.raises(ValueError, match=field.replace("[", r"\[").replace("]", r"\]").replace(".", r"\.")):
        check_ground_truth(truth, None)


def test_extra_info_must_agree_with_the_ground_truth():
    check_ground_truth(GOOD, {"task": "mis", "exact_answer": 2})
    with pytest.raises(ValueError, match=r"extra_info\.task"):
        check_ground_truth(GOOD, {"task": "mvc"})
    with pytest.raises(ValueError, match=r"extra_info\.exact_answer"):
        check_ground_truth(GOOD, {"exact_answer": 3})
    graph = json.dumps(json.loads(GOOD)["graph"])
    check_ground_truth(GOOD, {"optimum": 2, "instance": graph})
    with pytest.raises(ValueError, match=r"extra_info\.optimum"):
        check_ground_truth(GOOD, {"optimum": 3})
    for bad in ("{}", "not json", json.loads(GOOD)["graph"]):  # another graph, no JSON, a dict rather than a string
        with pytest.raises(ValueError, match=r"extra_info\.instance"):
            check_ground_truth(GOOD, {"instance": bad})


def test_non_string_ground_truth_raises():
    with pytest.raises(ValueError, match="JSON string"):
        check_ground_truth({"task": "mis"}, None)  # type: ignore[arg-type]


def test_parse_is_cached_on_the_string():
    assert parse_ground_truth(GOOD) is parse_ground_truth(GOOD)
