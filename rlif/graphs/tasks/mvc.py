"""Minimum vertex cover (MVC) on a friendship network: sizes, generator, exact solver and prompt.

Solver: everything outside a maximum independent set (Gallai: MVC = n - MIS), as GraphArena does. GraphArena
keeps only instances whose optimum is at least 3 (``MIN_VERTEX_COVER``); smaller ones are redrawn.
"""

from __future__ import annotations

import random

from rlif.graphs.instance import SocialGraph
from rlif.graphs.social import friendship_network, friendship_prompt, sample_social_graph
from rlif.graphs.task import GraphTask, Solution, sample_size
from rlif.graphs.tasks.mis import max_independent_set

SIZE_RANGES = {"small": (4, 14), "large": (15, 30)}
"""GraphArena's easy/hard user counts."""

MIN_VERTEX_COVER = 3
"""GraphArena keeps only MVC instances whose optimum is at least 3."""


def generate(lo: int, hi: int, rng: random.Random) -> SocialGraph:
    """The most visited users of a restart walk on a fresh friendship network; connected, as in GraphArena."""
    return sample_social_graph(sample_size(lo, hi, rng), rng, friendship_network, connected=True)


def min_vertex_cover(graph: SocialGraph) -> Solution:
    """A minimum vertex cover: everything outside a maximum independent set."""
    independent = set(max_independent_set(graph).witness)
    cover = tuple(v for v in range(graph.n) if v not in independent)
    return Solution(len(cover), cover)


def problem_text(graph: SocialGraph) -> str:
    """The users, their friendships and the answer format."""
    return friendship_prompt(
        graph,
        "Find a minimum vertex cover: the smallest group of users such that every friendship connection has "
        "at least one of its two users in the group.",
        "Write the users of the smallest vertex cover as one list, e.g. [User A, User B, User C].",
    )


TASK = GraphTask(
    id="mvc",
    instance_type=SocialGraph,
    size_ranges=SIZE_RANGES,
    generate=generate,
    solve=min_vertex_cover,
    problem_text=problem_text,
    min_optimum=MIN_VERTEX_COVER,
)
