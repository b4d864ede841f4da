"""Travelling salesman (TSP) on a flight network's metric closure: sizes, generator, exact solver and prompt.

Solver: fast-tsp's exact Held-Karp dynamic programme (fine up to 20 cities).
"""

from __future__ import annotations

import itertools
import random

from rlif.graphs.airports import sample_tsp
from rlif.graphs.instance import TspInstance
from rlif.graphs.task import GraphTask, Solution, sample_size

SIZE_RANGES = {"small": (4, 9), "large": (10, 20)}
"""GraphArena's easy/hard airport counts."""


def generate(lo: int, hi: int, rng: random.Random) -> TspInstance:
    """Airports drawn from a fresh synthetic flight network (``rlif.graphs.airports``)."""
    return sample_tsp(sample_size(lo, hi, rng), rng)


def shortest_tour(tsp: TspInstance) -> Solution:
    """A shortest closed tour (witness starts and ends at the same city)."""
    import fast_tsp

    tour = fast_tsp.solve_tsp_exact([list(row) for row in tsp.weights])
    closed = (*tour, tour[0])
    return Solution(sum(tsp.weights[u][v] for u, v in itertools.pairwise(closed)), closed)


def problem_text(tsp: TspInstance) -> str:
    """The airports, every pairwise distance and the answer format."""
    lines = [
        "Solve the Travelling Salesman Problem on an undirected flight network: find the shortest round trip "
        "that visits every listed airport exactly once and returns to the airport it started from. Distances "
        "for pairs without a direct flight are those of the shortest connection.",
        "",
        "**Problem to Solve**",
        "",
        "- Airports to visit: " + ", ".join(tsp.codes),
        "- Travel distances (in kilometers) between each pair of airports:",
    ]
    lines += [
        f"{tsp.codes[i]} to {tsp.codes[j]}: {tsp.weights[i][j]}" for i, j in itertools.combinations(range(tsp.n), 2)
    ]
    lines += ["", "Write the shortest tour as one list that ends where it starts, e.g. [AAA, BBB, CCC, ..., AAA]."]
    return "\n".join(lines)


TASK = GraphTask(
    id="tsp",
    instance_type=TspInstance,
    size_ranges=SIZE_RANGES,
    generate=generate,
    solve=shortest_tour,
    problem_text=problem_text,
)
