"""GraphArena's checks as rlif runs them, against the published code's logic written with networkx, and the
documented differences from rlif's strict verdict."""

from __future__ import annotations

import itertools
import json
import pickle
import random
import re

import networkx as nx
import pytest
from grapharena_files import molecule_nx, problem_text, record, tsp_nx

from rewards import family_named
from rewards.grapharena.problem import parse_ground_truth
from rewards.grapharena.published import value
from rewards.thinking import split_thinking
from rlif.data.grapharena import import_rows
from rlif.graphs.molecules import sample_molecule_pair


def _find(graph: nx.Graph, name: str):
    for node, data in graph.nodes(data=True):
        if data.get("name") == name:
            return node
    return None


def _nodes(graph, content):
    return [n for n in (_find(graph, name.strip()) for name in content.split(",")) if n is not None]


def reference(task: str, rec: dict, response: str) -> int:
    """GraphArena's ``check_solution`` of ``task`` (f460b25), on networkx, as published."""
    g = rec["graph"]
    if task in ("MCP", "MIS", "MVC", "Connected", "Diameter", "Distance", "Neighbor"):
        found = re.findall(r"\[(.*?)\]", response)
        if not found:
            return -1
        if task in ("MCP", "MIS", "MVC"):
            nodes = _nodes(g, found[-1])
            sub = nx.induced_subgraph(g, nodes)
            if task == "MCP":
                return len(nodes) if sub.number_of_edges() >= len(nodes) * (len(nodes) - 1) / 2 else -2
            if task == "MIS":
                return len(nodes) if sub.number_of_edges() == 0 else -2
            return -2 if any(u not in nodes and v not in nodes for u, v in g.edges()) else len(nodes)
        for content in reversed(found):
            nodes = _nodes(g, found[-1] if task == "Diameter" else content)
            if task == "Connected":
                if all(not nx.has_path(g, a, b) for i, a in enumerate(nodes) for b in nodes[i + 1 :]):
                    return len(nodes)
                continue
            if task == "Neighbor":
                first, second = rec["node1"], rec["node2"]
                if all(n not in (first, second) and n in g[first] and n in g[second] for n in nodes):
                    return len(set(nodes))
                continue
            if not nodes:
                continue
            walk = all(g.has_edge(nodes[k], nodes[k + 1]) for k in range(len(nodes) - 1))
            if task == "Diameter" and walk and len(nx.shortest_path(g, nodes[0], nodes[-1])) == len(nodes):
                return len(nodes) - 1
            if task == "Distance" and walk and nodes[0] == rec["source"] and nodes[-1] == rec["target"]:
                return len(nodes) - 1
        return -2
    if task == "MCS":
        found = re.findall(r"\[\s*([\d\s,]+)\s*\]", response)
        if len(found) < 2:
            return -1
        try:
            a = tuple(map(int, re.split(r"[\s,]+", found[-2].strip())))
            b = tuple(map(int, re.split(r"[\s,]+", found[-1].strip())))
        except ValueError:
            return -1
        if a and b and len(a) == len(b):
            g1, g2 = g
            if nx.is_isomorphic(g1.subgraph(a), g2.subgraph(b)):
                return len(a)
        return -2
    if task == "GED":
        found = re.findall(r"\[\s*([\d\s,]+)\s*\]", response)
        if not found:
            return -1
        g1, g2 = g
        try:
            for content in reversed(found):
                gmap = tuple(map(int, re.split(r"[\s,]+", content.strip())))
                n = g1.number_of_nodes()
                if set(gmap) == set(range(n)) and len(gmap) == n:
                    h = nx.relabel_nodes(g1, dict(zip(range(n), gmap, strict=True)))
                    cost = sum(h.nodes[i]["label"] != g2.nodes[i]["label"] for i in range(n))
                    cost += sum(e not in g2.edges() for e in h.edges()) + sum(e not in h.edges() for e in g2.edges())
                    return cost
        except ValueError:
            return -2
        return -2
    found = re.findall(r"\[\s*([A-Z\s,]*)\s*\]", response)  # TSP
    if not found:
        return -1
    route = [_find(g, name.strip()) for name in found[-1].split(",")]
    n = g.number_of_nodes()
    if set(route) == set(g.nodes()) and len(route) == n + 1 and route[0] == route[-1]:
        return sum(g[route[k]][route[k + 1]]["weight"] for k in range(n))
    return -2


def _name_answer(rng: random.Random, rec: dict) -> str:
    g = rec["graph"]
    names = [g.nodes[n]["name"] for n in g]
    pick = rng.sample(names, rng.randint(0, len(names)))
    if rng.random() < 0.3 and pick:
        pick.append(rng.choice(pick))
    if rng.random() < 0.3:
        pick.insert(rng.randint(0, len(pick)), "Nobody Here")
    if rng.random() < 0.2 and pick:
        pick.append(pick[0])
    answer = "[" + ", ".join(pick) + "]"
    if rng.random() < 0.3:
        answer = "[" + ", ".join(rng.sample(names, 2)) + "] then " + answer
    return rng.choice(["", "No brackets here. ", "Answer: "]) + answer if rng.random() > 0.05 else "none"


def _int_answer(rng: random.Random, rec: dict, task: str) -> str:
    g1, g2 = rec["graph"]
    if task == "GED":
        mapping = list(range(g1.number_of_nodes()))
        rng.shuffle(mapping)
        if rng.random() < 0.2:
            mapping[0] = mapping[-1]
        decoy = "[9, 9]" if rng.random() < 0.3 else ""
        return f"{decoy} [{', '.join(map(str, mapping))}]" + (" [0 1]" if rng.random() < 0.2 else "")
    k = rng.randint(1, min(len(g1), len(g2)))
    a, b = rng.sample(list(g1), k), rng.sample(list(g2), k)
    if rng.random() < 0.2:
        b = b[:-1]
    return f"[{', '.join(map(str, a))}], [{' '.join(map(str, b))}]"


def _correct_answer(task: str, rec: dict) -> str | None:
    """An answer GraphArena and rlif both accept as optimal, from networkx (None for the NP tasks)."""
    g = rec["graph"]

    def names(nodes):
        return "[" + ", ".join(g.nodes[n]["name"] for n in nodes) + "]"

    if task == "Connected":
        return names(min(c) for c in nx.connected_components(g))
    if task == "Diameter":
        lengths = dict(nx.all_pairs_shortest_path_length(g))
        u, v = max(((u, v) for u in g for v in g), key=lambda p: lengths[p[0]][p[1]])
        return names(nx.shortest_path(g, u, v))
    if task == "Distance":
        return names(nx.shortest_path(g, rec["source"], rec["target"]))
    if task == "Neighbor":
        return names(sorted(set(g[rec["node1"]]) & set(g[rec["node2"]])))
    return None


TASKS = ["Connected", "Diameter", "Distance", "Neighbor", "MCP", "MIS", "MVC", "TSP", "GED", "MCS"]


@pytest.mark.parametrize("task", TASKS)
def test_published_checks_agree_with_grapharena_on_networkx(tmp_path, task):
    rng = random.Random(TASKS.index(task))
    records = [record(task, rng) for _ in range(8 if task in ("GED", "MCS") else 25)]
    path = tmp_path / f"{task}_easy.pkl"
    path.write_bytes(pickle.dumps(records))
    rows = import_rows(path, task.lower(), "easy")
    scorer = family_named("grapharena").score
    checked = 0
    for rec, row in zip(records, rows, strict=True):
        truth = row["reward_model"]["ground_truth"]
        problem = parse_ground_truth(truth)
        answers = [_correct_answer(task, rec)]
        for _ in range(12):
            if task in ("GED", "MCS"):
                answers.append(_int_answer(rng, rec, task))
            elif task == "TSP":
                codes = [rec["graph"].nodes[n]["name"] for n in rec["graph"]]
                rng.shuffle(codes)
                tour = codes + codes[:1] if rng.random() < 0.8 else codes
                answers.append(f"[{', '.join(tour if rng.random() < 0.8 else [c.lower() for c in tour])}]")
            else:
                answers.append(_name_answer(rng, rec))
        for answer in filter(None, answers):
            assert value(problem, answer) == reference(task, rec, answer), answer
            checked += 1
        correct = _correct_answer(task, rec)
        if correct is not None:
            scores = scorer(split_thinking(f"<think>\n[x]</think>\n\n{correct}"), truth)
            assert scores["acc"] == 1.0 and scores["grapharena_strict"] == 1.0
    assert checked >= 8 * 12


def _row(task: str, rec: dict, tmp_path) -> str:
    path = tmp_path / f"{task}_easy.pkl"
    path.write_bytes(pickle.dumps([rec]))
    [row] = import_rows(path, task.lower(), "easy")
    return row["reward_model"]["ground_truth"]


def _triangle_plus_one() -> dict:
    graph = nx.Graph()
    for node, name in ((10, "Ana"), (20, "Bo"), (30, "Cy"), (40, "Di")):
        graph.add_node(node, name=name)
    graph.add_edges_from([(10, 20), (20, 30), (10, 30), (30, 40)])
    return {"graph": graph, "problem_text": problem_text("MCP", graph), "exact_answer": None}


# (task, response, GraphArena accuracy, GraphArena value, rlif strict): docs/evaluation.md, "GraphArena as published".
DIFFERENCES = [
    ("MCP", "[Ana, Bo, Cy]", 1, 3, 1),
    ("MCP", "[Ana, Bo, Cy, Nobody]", 1, 3, 0),  # unknown names are dropped
    ("MCP", "[]", 0, 0, 0),  # an empty answer is a feasible 0
    ("MCP", "[Ana, Bo, Cy] [see above]", 0, 0, 0),  # the last bracket wins; all-unknown is an empty clique
    ("MIS", "[Ana, Di, Di]", 0, 3, 0),  # duplicates count (optimum 2: value 3 is not == 2)
    ("MIS", "[Ana, Di]", 1, 2, 1),
    ("MVC", "[Bo, Cy, Nobody]", 1, 2, 0),
    ("MVC", "<think>\n[Ana, Bo, Cy, Di]</think>\n\n[Cy, Bo]", 1, 2, 1),  # only the answer section is read
    ("MVC", "<think>\n[Cy, Bo]", 0, -1, 0),  # unclosed thinking: missing
]


@pytest.mark.parametrize("case", DIFFERENCES)
def test_documented_differences_from_the_strict_verdict(tmp_path, case):
    task, response, acc, ga_value, strict = case
    rec = _triangle_plus_one()
    truth = _row(task, rec, tmp_path)
    scores = family_named("grapharena").score(split_thinking(response), truth)
    assert (scores["acc"], scores["grapharena_value"], scores["grapharena_strict"]) == (acc, ga_value, strict)


def test_lowercase_tsp_codes_are_missing_for_grapharena_and_fine_for_rlif(tmp_path):
    rng = random.Random(3)
    graph = tsp_nx(5, rng)
    truth = _row("TSP", {"graph": graph, "problem_text": "t"}, tmp_path)
    optimum = json.loads(truth)["answer"]
    codes = [graph.nodes[n]["name"] for n in graph]
    tours = [codes[:1] + list(p) + codes[:1] for p in itertools.permutations(codes[1:])]
    best = min(
        tours, key=lambda t: sum(graph[_find(graph, a)][_find(graph, b)]["weight"] for a, b in itertools.pairwise(t))
    )
    score = family_named("grapharena").score
    upper = score(split_thinking(f"[{', '.join(best)}]"), truth)
    lower = score(split_thinking(f"[{', '.join(c.lower() for c in best)}]"), truth)
    assert (upper["acc"], upper["grapharena_value"], upper["grapharena_strict"]) == (1, optimum, 1)
    assert (lower["acc"], lower["grapharena_missing"], lower["grapharena_strict"]) == (0, 1, 1)


def test_mcs_counts_induced_isomorphism_without_a_mapping(tmp_path):
    pair = sample_molecule_pair(5, 6, random.Random(4))
    graphs = (molecule_nx(pair.a), molecule_nx(pair.b))
    truth = _row("MCS", {"graph": graphs, "problem_text": "t"}, tmp_path)
    scores = family_named("grapharena").score(split_thinking("[0], [0, 0]"), truth)
    assert scores["grapharena_value"] == -2  # unequal lengths
    one = family_named("grapharena").score(split_thinking("[0], [1]"), truth)
    assert one["grapharena_value"] == 1 and one["grapharena_strict"] == 0
