"""Maximum independent set (MIS) on a friendship network: sizes, generator, exact solver and prompt.

Solver: a maximum clique of the complement, as GraphArena does.
"""

from __future__ import annotations

import random

import networkx as nx

from rlif.graphs.instance import SocialGraph
from rlif.graphs.social import friendship_network, friendship_prompt, sample_social_graph, social_nx
from rlif.graphs.task import GraphTask, Solution, sample_size

SIZE_RANGES = {"small": (4, 14), "large": (15, 30)}
"""GraphArena's easy/hard user counts."""


def generate(lo: int, hi: int, rng: random.Random) -> SocialGraph:
    """The most visited users of a restart walk on a fresh friendship network; connected, as in GraphArena."""
    return sample_social_graph(sample_size(lo, hi, rng), rng, friendship_network, connected=True)


def max_independent_set(graph: SocialGraph) -> Solution:
    """A maximum independent set (a maximum clique of the complement)."""
    independent = max(nx.find_cliques(nx.complement(social_nx(graph))), key=len)
    return Solution(len(independent), tuple(sorted(independent)))


def problem_text(graph: SocialGraph) -> str:
    """The users, their friendships and the answer format."""
    return friendship_prompt(
        graph,
        "Find a maximum independent set: the largest group of users in which no two users are friends.",
        "Write the users of the largest independent set as one list, e.g. [User A, User B, User C].",
    )


TASK = GraphTask(
    id="mis",
    instance_type=SocialGraph,
    size_ranges=SIZE_RANGES,
    generate=generate,
    solve=max_independent_set,
    problem_text=problem_text,
)
