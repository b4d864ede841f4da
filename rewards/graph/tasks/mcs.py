"""Maximum common induced subgraph (MCS): the most atoms of A paired one to one with atoms of B so that bonds match.

Answer: ``[atoms of A], [their partners in B]``, the last two integer lists. Feasible iff both lists have the same
length, distinct in-range indices on each side, and the *given* pairing (position k with position k) is an
isomorphism of the induced subgraphs: two atoms of A are bonded exactly when their partners in B are. This is
stricter than GraphArena, which accepts the two atom sets when their induced subgraphs are isomorphic under any
pairing; rlif's prompt asks for "their partners in the same order", so the answer is a certificate and checking
it is O(k^2) with no graph search. Objective: the number of pairs (bigger is better).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rewards.graph.answer import last_int_lists
from rewards.graph.instances import Molecule, read_molecule_pair
from rewards.graph.task import GraphTask

Pair = tuple[Molecule, Molecule]
Matching = tuple[Sequence[int], Sequence[int]]


def parse_problem(graph: Any, where: str) -> Pair:
    """The two molecules ``[A, B]``."""
    return read_molecule_pair("mcs", graph, where)


def parse_answer(answer: str) -> Matching | None:
    """The last two integer lists: atoms of A, then their partners in B."""
    lists = last_int_lists(answer, 2)
    return None if lists is None else (lists[0], lists[1])


def feasible(pair: Pair, matching: Matching) -> bool:
    """Equal lengths, distinct in-range atoms per side, and bonds preserved both ways under the given pairing."""
    (first, second), (left, right) = pair, matching
    k = len(left)
    if (
        len(right) != k
        or len(set(left)) != k
        or len(set(right)) != k
        or not all(0 <= i < len(first.labels) for i in left)
        or not all(0 <= j < len(second.labels) for j in right)
    ):
        return False
    return all(
        (left[b] in first.neighbours[left[a]]) == (right[b] in second.neighbours[right[a]])
        for a in range(k)
        for b in range(a + 1, k)
    )


def objective(pair: Pair, matching: Matching) -> int:
    """The number of matched atoms."""
    return len(matching[0])


def witness_answer(pair: Pair, witness: Sequence[Any]) -> Matching:
    """The solver's ``[atom of A, atom of B]`` pairs as the two lists of an answer.

    Raises:
        ValueError: an item is not a pair.
    """
    if not all(isinstance(p, list) and len(p) == 2 for p in witness):
        raise ValueError("witness: mcs needs [atom of A, atom of B] pairs")
    return [p[0] for p in witness], [p[1] for p in witness]


def optimum_bounds(pair: Pair) -> tuple[int, int]:
    """One atom always matches; no more pairs than the smaller molecule has atoms."""
    return 1, min(len(pair[0].labels), len(pair[1].labels))


TASK = GraphTask(
    id="mcs",
    sense="max",
    parse_problem=parse_problem,
    parse_answer=parse_answer,
    feasible=feasible,
    objective=objective,
    witness_answer=witness_answer,
    optimum_bounds=optimum_bounds,
)
