"""What the people-graph tasks (MCP, MIS, MVC) share: social-like graphs sampled the way GraphArena samples its real
networks, their networkx view and the prompt lines that list them.

GraphArena takes a random walk with restart (restart probability 0.2, 1000 steps) on DBLP co-authorship (MCP) or
a social network (MIS, MVC), keeps the ``n`` most visited people and uses their induced subgraph. We do the same
walk on a synthetic base network made per instance:

* co-authorship (MCP): papers are cliques of 2-6 authors drawn mostly inside one research community, with
  prolific authors more likely, so the graph has the overlapping cliques a max-clique task needs;
* friendship (MIS, MVC): networkx's Holme-Kim power-law graph with triadic closure (heavy-tailed degrees and
  clustering, like real friendship networks).

Deviation from GraphArena: the base network is synthetic (we ship no DBLP or social data).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable

import networkx as nx

from rlif.graphs.instance import SocialGraph
from rlif.graphs.names import person_names

RESTART = 0.2
WALK_LENGTH = 1000
BASE_SIZE = 240
_MAX_ATTEMPTS = 200


def coauthorship_network(rng: random.Random, authors: int = BASE_SIZE) -> nx.Graph:
    """A co-authorship network: each paper links all its authors; authors cluster into communities."""
    communities = max(2, authors // 30)
    member = [rng.randrange(communities) for _ in range(authors)]
    by_community: dict[int, list[int]] = {}
    for author, community in enumerate(member):
        by_community.setdefault(community, []).append(author)
    productivity = [rng.paretovariate(1.6) for _ in range(authors)]
    graph = nx.Graph()
    graph.add_nodes_from(range(authors))
    for _ in range(authors * 2):
        team_size = rng.choices((2, 3, 4, 5, 6), weights=(30, 30, 20, 12, 8))[0]
        pool = by_community[rng.randrange(communities)] if rng.random() < 0.85 else list(range(authors))
        team: set[int] = set()
        weights = [productivity[a] for a in pool]
        while len(team) < min(team_size, len(pool)):
            team.add(rng.choices(pool, weights=weights)[0])
        graph.add_edges_from((u, v) for u in team for v in team if u < v)
    return graph


def friendship_network(rng: random.Random, people: int = BASE_SIZE) -> nx.Graph:
    """A friendship network with heavy-tailed degrees and triadic closure (Holme-Kim model)."""
    return nx.powerlaw_cluster_graph(people, rng.choice((1, 2, 2, 3)), rng.uniform(0.1, 0.6), seed=rng.randrange(2**31))


def most_visited(graph: nx.Graph, start: int, size: int, rng: random.Random) -> list[int]:
    """The ``size`` nodes a restart walk from ``start`` visits most (ties: first visited first); fewer if it can't."""
    neighbours = {node: list(graph.neighbors(node)) for node in graph}
    visits: Counter[int] = Counter({start: 1})
    node = start
    for _ in range(WALK_LENGTH):
        node = start if rng.random() < RESTART or not neighbours[node] else rng.choice(neighbours[node])
        visits[node] += 1
    return [node for node, _ in visits.most_common(size)]


def sample_social_graph(
    n: int, rng: random.Random, network: Callable[[random.Random], nx.Graph], connected: bool
) -> SocialGraph:
    """A named social graph of ``n`` people: the most visited people of a restart walk on a fresh ``network``.

    Args:
        n: number of people.
        rng: the item's generator.
        network: the base network (``coauthorship_network`` for MCP, ``friendship_network`` for MIS and MVC).
        connected: keep only connected graphs (GraphArena's MIS and MVC). MVC also needs a cover of at least 3
            people, which the item builder checks with the exact solver (``GraphTask.min_optimum``).

    Raises:
        ValueError: no acceptable walk found after many attempts.
    """
    for _ in range(_MAX_ATTEMPTS):
        base = network(rng)
        chosen = most_visited(base, rng.randrange(base.number_of_nodes()), n, rng)
        if len(chosen) < n:
            continue
        sub = base.subgraph(chosen)
        if connected and not nx.is_connected(sub):
            continue
        rng.shuffle(chosen)
        index = {node: i for i, node in enumerate(chosen)}
        edges = sorted(tuple(sorted((index[u], index[v]))) for u, v in sub.edges())
        return SocialGraph(person_names(rng, n), tuple(edges))
    raise ValueError(f"no {network.__name__} sample with {n} nodes found in {_MAX_ATTEMPTS} attempts")


def social_nx(graph: SocialGraph) -> nx.Graph:
    """The people network as a networkx graph on ``0..n-1``."""
    g = nx.Graph()
    g.add_nodes_from(range(graph.n))
    g.add_edges_from(graph.edges)
    return g


def edge_list(graph: SocialGraph) -> str:
    """The links as the prompt lists them: ``A and B, C and D, ...``."""
    return ", ".join(f"{graph.names[u]} and {graph.names[v]}" for u, v in graph.edges)


def friendship_prompt(graph: SocialGraph, objective: str, example: str) -> str:
    """The MIS/MVC problem text: the network, the ``objective`` sentence and the answer ``example``."""
    return "\n".join(
        [
            "Consider an undirected social network in which an edge means two users are friends. " + objective,
            "",
            "**Problem to Solve**",
            "",
            "- Users in the network: " + ", ".join(graph.names),
            "- Friendship connections: " + edge_list(graph),
            "",
            example,
        ]
    )
