"""Small graph-task instances for the reward tests: hand-made ones and networkx-generated ones with brute-force optima.

The ground-truth JSON follows the contract in ``docs/np-graph-rewards.md`` (node-link data, ``links`` key).
Optima are found by exhaustive search here, independently of the code under test.
"""

from __future__ import annotations

import itertools
import json
import random
import string

import networkx as nx


def social_truth(task: str, names: list[str], edges: list[tuple[int, int]], optimum: int | None = None) -> str:
    """Ground truth of an MCP/MIS/MVC instance; the optimum is brute-forced unless given."""
    if optimum is None:
        optimum = brute_social_optimum(task, len(names), edges)
    graph = {
        "directed": False,
        "multigraph": False,
        "graph": {},
        "nodes": [{"id": i, "name": name} for i, name in enumerate(names)],
        "links": [{"source": u, "target": v} for u, v in edges],
    }
    return json.dumps({"task": task, "graph": graph, "optimum": optimum})


def brute_social_optimum(task: str, n: int, edges: list[tuple[int, int]]) -> int:
    """Largest clique / independent set, or smallest vertex cover, by trying every subset."""
    edge_set = {frozenset(e) for e in edges}
    best_clique = best_independent = 0
    for k in range(n + 1):
        for subset in itertools.combinations(range(n), k):
            pairs = [frozenset(p) for p in itertools.combinations(subset, 2)]
            if all(p in edge_set for p in pairs):
                best_clique = k
            if not any(p in edge_set for p in pairs):
                best_independent = k
    return {"mcp": best_clique, "mis": best_independent, "mvc": n - best_independent}[task]


def tsp_truth(codes: list[str], weights: list[list[int]], optimum: int | None = None) -> str:
    """Ground truth of a TSP instance; the optimum is brute-forced unless given."""
    n = len(codes)
    if optimum is None:
        optimum = min(
            sum(weights[a][b] for a, b in itertools.pairwise((0, *perm, 0)))
            for perm in itertools.permutations(range(1, n))
        )
    graph = {
        "nodes": [{"id": i, "name": code} for i, code in enumerate(codes)],
        "links": [{"source": i, "target": j, "weight": weights[i][j]} for i, j in itertools.combinations(range(n), 2)],
    }
    return json.dumps({"task": "tsp", "graph": graph, "optimum": optimum})


def molecule(labels: list[str], bonds: list[tuple[int, int]]) -> dict:
    """A molecule graph in node-link form (all bonds SINGLE: bond types are never scored)."""
    return {
        "nodes": [{"id": i, "label": label} for i, label in enumerate(labels)],
        "links": [{"source": u, "target": v, "label": "SINGLE"} for u, v in bonds],
    }


def molecule_truth(task: str, first: dict, second: dict, optimum: int | None = None) -> str:
    """Ground truth of a GED/MCS instance; the optimum is brute-forced with networkx unless given."""
    if optimum is None:
        optimum = brute_ged(first, second) if task == "ged" else brute_mcs(first, second)
    return json.dumps({"task": task, "graph": [first, second], "optimum": optimum})


def to_nx(mol: dict) -> nx.Graph:
    """networkx form of a molecule dict."""
    graph = nx.Graph()
    for node in mol["nodes"]:
        graph.add_node(node["id"], label=node["label"])
    graph.add_edges_from((link["source"], link["target"]) for link in mol["links"])
    return graph


def brute_ged(first: dict, second: dict) -> int:
    """networkx's exact GED with GraphArena's costs (relabel 1, node/edge insert/delete 1, bond types ignored)."""
    return int(
        nx.graph_edit_distance(
            to_nx(first), to_nx(second), node_subst_cost=lambda a, b: float(a["label"] != b["label"])
        )
    )


def brute_mcs(first: dict, second: dict) -> int:
    """Largest k such that some k-atom induced subgraphs of the two molecules are isomorphic (unlabelled)."""
    ga, gb = to_nx(first), to_nx(second)
    for k in range(min(len(ga), len(gb)), 0, -1):
        subs_b = [gb.subgraph(s) for s in itertools.combinations(gb.nodes, k)]
        for s in itertools.combinations(ga.nodes, k):
            sub_a = ga.subgraph(s)
            if any(nx.is_isomorphic(sub_a, sub_b) for sub_b in subs_b):
                return k
    return 0


def random_social(rng: random.Random, n: int, p: float) -> tuple[list[str], list[tuple[int, int]]]:
    """A G(n, p) graph with distinct person-like names (one accented)."""
    graph = nx.gnp_random_graph(n, p, seed=rng.randrange(1 << 30))
    names = [f"{rng.choice(['Ana', 'Bo', 'Chen', 'Dana'])} Person{i}" for i in range(n)]
    names[0] = "Manfred Schmidt-Schauß"
    return names, sorted(graph.edges)


def random_tsp(rng: random.Random, n: int) -> tuple[list[str], list[list[int]]]:
    """Random planar points, rounded Euclidean distances (>= 1), distinct three-letter codes."""
    codes: list[str] = []
    while len(codes) < n:
        code = "".join(rng.choice(string.ascii_uppercase) for _ in range(3))
        if code not in codes:
            codes.append(code)
    points = [(rng.uniform(0, 1000), rng.uniform(0, 1000)) for _ in range(n)]
    weights = [[max(1, round(((xa - xb) ** 2 + (ya - yb) ** 2) ** 0.5)) for xb, yb in points] for xa, ya in points]
    return codes, weights


def random_molecule(rng: random.Random, n: int) -> dict:
    """A random connected sparse labelled graph that looks like a small molecule skeleton."""
    tree = nx.random_labeled_tree(n, seed=rng.randrange(1 << 30)) if n > 1 else nx.empty_graph(1)
    bonds = set(tree.edges)
    if n > 3 and rng.random() < 0.7:
        u, v = rng.sample(range(n), 2)
        bonds.add((min(u, v), max(u, v)))
    labels = [rng.choice("CCCNO") for _ in range(n)]
    return molecule(labels, sorted((min(e), max(e)) for e in bonds))
