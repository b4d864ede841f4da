"""Maximum clique (MCP) on a co-authorship network: sizes, generator, exact solver and prompt.

Solver: the largest maximal clique (networkx's Bron-Kerbosch ``find_cliques``), as GraphArena does.
"""

from __future__ import annotations

import random

import networkx as nx

from rlif.graphs.instance import SocialGraph
from rlif.graphs.social import coauthorship_network, edge_list, sample_social_graph, social_nx
from rlif.graphs.task import GraphTask, Solution, sample_size

SIZE_RANGES = {"small": (4, 14), "large": (15, 30)}
"""GraphArena's easy/hard author counts."""


def generate(lo: int, hi: int, rng: random.Random) -> SocialGraph:
    """The most visited authors of a restart walk on a fresh co-authorship network (connectivity not required)."""
    return sample_social_graph(sample_size(lo, hi, rng), rng, coauthorship_network, connected=False)


def max_clique(graph: SocialGraph) -> Solution:
    """A maximum clique."""
    clique = max(nx.find_cliques(social_nx(graph)), key=len)
    return Solution(len(clique), tuple(sorted(clique)))


def problem_text(graph: SocialGraph) -> str:
    """The authors, their collaborations and the answer format."""
    return "\n".join(
        [
            "Consider an undirected academic network in which an edge means two authors have written a paper "
            "together. Find a maximum clique: the largest group of authors in which every two authors have "
            "collaborated.",
            "",
            "**Problem to Solve**",
            "",
            "- Authors in the network: " + ", ".join(graph.names),
            "- Research collaborations between these authors: " + edge_list(graph),
            "",
            "Write the authors of the largest clique as one list, e.g. [Author A, Author B, Author C].",
        ]
    )


TASK = GraphTask(
    id="mcp",
    instance_type=SocialGraph,
    size_ranges=SIZE_RANGES,
    generate=generate,
    solve=max_clique,
    problem_text=problem_text,
)
