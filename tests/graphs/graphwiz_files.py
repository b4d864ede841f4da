"""GraphWiz test-set records built with networkx, worded and answered as GraphWiz's generator does
(``generation/task_config.yaml`` test prompts, ``utils.graph_details*``)."""

from __future__ import annotations

import json
import random
import string
from pathlib import Path

import networkx as nx
from networkx.algorithms import isomorphism

HEAD = {
    "connectivity": "Determine whether two nodes are connected in an undirected graph. \nIn an undirected graph, "
    "(i,j) means that node i and node j are connected with an undirected edge.\nGiven a graph and a pair of nodes, "
    "you need to output Yes or No, indicating whether the node i and node j are connected. \n",
    "cycle": "Determine whether or not there is a cycle in an undirected graph. \n",
    "bipartite": "Determine whether or not a graph is bipartite. \n",
    "hamilton": "Determine whether or not there is a Hamiltonian path in an undirected graph. \n",
    "shortest": "Find the shortest path between two nodes in an undirected graph.\n",
    "flow": "Find the maximum flow between two nodes in a directed graph. \n",
    "topology": "Find one of the topology sorting paths of the given graph.\n",
    "triplet": "Find the maximum sum of the weights of three interconnected nodes. \n",
    "substructure": "Determine if a smaller graph is present as an exact match within a larger graph. \n",
}


def random_graph(rng: random.Random, n: int, p: float, directed: bool = False, weight: bool = False) -> nx.Graph:
    """GraphWiz's ``create_random_graph``: nodes 0..n-1, pairs i<j drawn, weights 1..10."""
    graph = nx.DiGraph() if directed else nx.Graph()
    graph.add_nodes_from(range(n))
    pairs = [(u, v) for u in range(n) for v in range(u + 1, n)]
    chosen = [e for e in pairs if rng.random() < p] or [pairs[0]]
    for u, v in chosen:
        graph.add_edge(u, v, weight=rng.randint(1, 10) if weight else 0)
    return graph


def edges_text(graph: nx.Graph, weight: bool = False) -> str:
    """The edge list as GraphWiz prints it."""
    directed = graph.is_directed()
    out = []
    for u, v, d in graph.edges(data=True):
        if weight:
            out.append(f"({u}->{v},{d['weight']})" if directed else f"({u},{v},{d['weight']})")
        else:
            out.append(f"({u}->{v})" if directed else str((u, v)))
    return " ".join(out)


def record(task: str, rng: random.Random, n: int | None = None) -> tuple[dict, nx.Graph]:
    """One record of ``task`` and its networkx graph."""
    n = n or rng.randint(3, 12)
    p = rng.uniform(0.1, 0.6)
    head = HEAD[task] + "Q: The nodes are numbered from 0 to {}, and the edges are: {}. "
    if task in ("connectivity", "shortest", "flow"):
        directed, weight = task == "flow", task != "connectivity"
        graph = random_graph(rng, n, p, directed, weight)
        s, t = rng.sample(range(n), 2)
        question = {
            "connectivity": f"Is there a path between node {s} and node {t}?",
            "shortest": f"Give the weight of the shortest path from node {s} to node {t}.",
            "flow": f"What is the maximum flow from node {s} to node {t}?",
        }[task]
        text = head.format(n - 1, edges_text(graph, weight)) + question
        if task == "connectivity":
            answer = "Yes" if nx.has_path(graph, s, t) else "No"
        elif task == "shortest":
            answer = nx.shortest_path_length(graph, s, t, weight="weight") if nx.has_path(graph, s, t) else None
        else:
            answer = nx.maximum_flow_value(graph, s, t, capacity="weight")
        graph.graph["ends"] = (s, t)
    elif task in ("cycle", "hamilton", "bipartite"):
        graph = random_graph(rng, n, p, directed=task == "bipartite")
        question = {
            "cycle": "Is there a cycle in this graph?",
            "hamilton": "Is there a Hamiltonian path in this graph?",
            "bipartite": "Is this graph bipartite?",
        }[task]
        if task == "bipartite":
            lines = list(graph.edges())
            rng.shuffle(lines)
            edges = " ".join(f"({u}->{v})" for u, v in lines)
        else:
            edges = edges_text(graph)
        text = head.format(n - 1, edges) + question
        if task == "cycle":
            answer = "Yes" if nx.cycle_basis(graph) else "No"
        elif task == "bipartite":
            answer = "Yes" if nx.is_bipartite(graph) else "No"
        else:
            answer = "Yes" if has_hamiltonian_path(graph) else "No"
    elif task == "topology":
        graph = nx.DiGraph()
        order = list(range(n))
        rng.shuffle(order)
        graph.add_nodes_from(order)
        nx.add_path(graph, order)
        for _ in range(rng.randint(0, n)):
            u, v = sorted(rng.sample(range(n), 2), key=order.index)
            graph.add_edge(u, v)
        text = head.format(n - 1, edges_text(graph)) + "Give one topology sorting path of this graph."
        answer = str(list(nx.all_topological_sorts(graph)))
    elif task == "triplet":
        graph = random_graph(rng, n, p + 0.2)
        for node in graph:
            graph.nodes[node]["weight"] = rng.randint(1, 10)
        nodes = " ".join(str([u, graph.nodes[u]["weight"]]) for u in graph)
        text = (
            HEAD[task] + f"Q: The nodes are numbered from 0 to {n - 1}, weights of nodes are: {nodes}, and the edges "
            f"are: {edges_text(graph)}. What is the maximum sum of the weights of three nodes?"
        )
        triangles = [sum(graph.nodes[u]["weight"] for u in c) for c in nx.enumerate_all_cliques(graph) if len(c) == 3]
        answer = max(triangles, default=0)
    else:
        graph = random_graph(rng, n, p + 0.2, directed=True)
        m = rng.randint(2, 4)
        pattern = random_graph(rng, m, 0.6, directed=True)
        pattern = nx.relabel_nodes(pattern, dict(zip(range(m), string.ascii_lowercase, strict=False)))
        text = (
            HEAD[task] + f"Q: The nodes of graph G are numbered from 0 to {n - 1}, and the edges are: "
            f"{edges_text(graph)}.\nThe nodes of subgraph G' are numbered from a to {string.ascii_lowercase[m - 1]},"
            f" and the edges are: {edges_text(pattern)}.\nIs subgraph G' present within graph G as a direct "
            "substructure?"
        )
        found = isomorphism.DiGraphMatcher(graph, pattern).subgraph_is_monomorphic()
        answer = "Yes" if found else "No"
    return {"input_prompt": text, "answer": f"### {answer}"}, graph


def has_hamiltonian_path(graph: nx.Graph) -> bool:
    """Exact answer by dynamic programming over subsets (small graphs only)."""
    n = graph.number_of_nodes()
    if n <= 1:
        return True
    reach = [0] * (1 << n)
    for u in range(n):
        reach[1 << u] = 1 << u
    for mask in range(1, 1 << n):
        ends = reach[mask]
        if not ends:
            continue
        for u in range(n):
            if ends >> u & 1:
                for v in graph.neighbors(u):
                    if not mask >> v & 1:
                        reach[mask | 1 << v] |= 1 << v
    return bool(reach[(1 << n) - 1])


def write_test_file(tmp: Path, task: str, count: int, seed: int = 0) -> tuple[Path, list[dict]]:
    """``<task>_test.json`` in GraphWiz's JSON-lines form, every record answerable."""
    rng = random.Random(seed)
    records = []
    while len(records) < count:
        rec, _ = record(task, rng)
        if rec["answer"] == "### None":
            continue
        rec["index"] = len(records)
        records.append(rec)
    path = tmp / f"{task}_test.json"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path, records
