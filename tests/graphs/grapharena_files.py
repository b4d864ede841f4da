"""Small GraphArena problem sets in its published layout (pickled records of networkx graphs), for the tests.

The text is built as GraphArena's ``generate_problem`` lays it out (a task paragraph, ``**Problem to Solve**``, the
instance lines, the answer format), shortened; molecules carry bond names as strings because RDKit is not a test
dependency (GraphArena's own pickles hold RDKit ``BondType`` objects).
"""

from __future__ import annotations

import pickle
import random
from pathlib import Path

import networkx as nx

from rlif.graphs.airports import sample_tsp
from rlif.graphs.molecules import sample_molecule_pair

PEOPLE = ["Ana Silva", "Bo Kim", "Cy Ode", "Di Eng", "Ed Fox", "Flo Gu", "Gil Ha", "Hu Ito", "Ivo Ju", "Jo Ka"]


def named_graph(rng: random.Random, n: int, p: float, *, connected: bool = False) -> nx.Graph:
    """A random graph on ``n`` people with GraphArena-like scattered node ids (and DBPedia-style relations)."""
    while True:
        graph = nx.gnp_random_graph(n, p, seed=rng.randrange(10**9))
        if not connected or nx.is_connected(graph):
            break
    ids = rng.sample(range(1000, 99999), n)
    graph = nx.relabel_nodes(graph, dict(enumerate(ids)))
    for k, node in enumerate(ids):
        graph.nodes[node]["name"] = PEOPLE[k] if k < len(PEOPLE) else f"Person {k}"
    for u, v in graph.edges():
        graph[u][v]["relation"] = "knows"
    return graph


def problem_text(task: str, graph: nx.Graph) -> str:
    """GraphArena's layout, shortened: task paragraph, marker, names and edges, answer format."""
    names = ", ".join(str(graph.nodes[n].get("name", n)) for n in graph.nodes())
    edges = ", ".join(f"{u}-{v}" for u, v in graph.edges())
    return (
        f"Solve {task} in the network.\n\n**Problem to Solve**\n\n- Nodes: {names}\n- Edges: {edges}.\n"
        "Present your answer in the following format: [A, B, ...]."
    )


def molecule_nx(molecule) -> nx.Graph:
    graph = nx.Graph()
    graph.add_nodes_from((i, {"label": label}) for i, label in enumerate(molecule.atoms))
    graph.add_edges_from((u, v, {"label": bond}) for u, v, bond in molecule.bonds)
    return graph


def tsp_nx(n: int, rng: random.Random) -> nx.Graph:
    tsp = sample_tsp(n, rng)
    graph = nx.complete_graph(n)
    for i in range(n):
        graph.nodes[i]["name"] = tsp.codes[i]
        for j in range(i + 1, n):
            graph[i][j]["weight"] = tsp.weights[i][j]
    return graph


def record(task: str, rng: random.Random) -> dict:
    """One record of ``task`` (GraphArena's task name) with its exact answer, as ``generate_dataset`` stores it."""
    if task in ("GED", "MCS"):
        pair = sample_molecule_pair(5, 5 if task == "GED" else 6, rng)
        graphs = (molecule_nx(pair.a), molecule_nx(pair.b))
        return {"id": 0, "problem_text": problem_text(task, graphs[0]), "graph": graphs, "exact_answer": None}
    if task == "TSP":
        graph = tsp_nx(5, rng)
        return {"problem_text": problem_text(task, graph), "graph": graph, "exact_answer": None}
    graph = named_graph(rng, 7, 0.35, connected=task in ("Diameter", "MIS", "MVC"))
    out = {"problem_text": problem_text(task, graph), "graph": graph}
    if task == "Connected":
        out["exact_answer"] = nx.number_connected_components(graph)
    elif task == "Diameter":
        out["exact_answer"] = nx.diameter(graph)
    elif task == "Distance":
        component = max(nx.connected_components(graph), key=len)
        source, target = rng.sample(sorted(component), 2)
        out.update(source=source, target=target, exact_answer=nx.shortest_path_length(graph, source, target))
    elif task == "Neighbor":
        first, second, third = list(graph)[:3]
        graph.add_edges_from([(first, third), (second, third)], relation="knows")
        out.update(
            node1=first, node2=second, exact_answer=len((set(graph[first]) & set(graph[second])) - {first, second})
        )
    elif task == "MCP":
        out["exact_answer"] = max(len(c) for c in nx.find_cliques(graph))
    return out


def write_problem_set(folder: Path, task: str, difficulty: str, count: int, seed: int = 0) -> Path:
    """``<Task>_<difficulty>.pkl`` and ``<Task>_examples.pkl`` in ``folder``; returns the problem set's path."""
    rng = random.Random(seed)
    path = folder / f"{task}_{difficulty}.pkl"
    with path.open("wb") as handle:
        pickle.dump([record(task, rng) for _ in range(count)], handle)
    with (folder / f"{task}_examples.pkl").open("wb") as handle:
        pickle.dump([f"example {k} of {task}: [A]" for k in range(100)], handle)
    return path
