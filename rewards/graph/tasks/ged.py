"""Graph edit distance (GED): the cheapest atom mapping between two molecules of the same size.

Answer: ``[1, 0, 2, ...]``, position i holding the atom of B that atom i of A maps to; feasible iff it is a
permutation of B's atoms. Objective: ``edit_cost`` (smaller is better).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from rewards.graph.answer import last_int_lists
from rewards.graph.instances import Molecule, read_molecule_pair, witness_ids
from rewards.graph.task import GraphTask

Pair = tuple[Molecule, Molecule]


def edit_cost(first: Molecule, second: Molecule, mapping: tuple[int, ...]) -> int:
    """GraphArena's edit cost of turning ``first`` into ``second`` when atom ``i`` of ``first`` becomes ``mapping[i]``.

    Each relabelled atom costs 1, each bond of ``first`` with no image in ``second`` costs 1 (deletion) and each bond
    of ``second`` with no preimage costs 1 (insertion). Bond types are not shown in the prompt and not scored.

    Args:
        first: molecule A.
        second: molecule B, with as many atoms as A.
        mapping: a permutation of ``range(len(second.labels))``.

    Returns:
        The edit cost.
    """
    relabels = sum(first.labels[i] != second.labels[j] for i, j in enumerate(mapping))
    images = {(a, b) if a < b else (b, a) for a, b in ((mapping[u], mapping[v]) for u, v in first.edges)}
    return relabels + len(images - second.edges) + len(second.edges - images)


def parse_problem(graph: Any, where: str) -> Pair:
    """The two molecules ``[A, B]``."""
    return read_molecule_pair("ged", graph, where)


def parse_answer(answer: str) -> list[int] | None:
    """The last integer list."""
    lists = last_int_lists(answer, 1)
    return None if lists is None else lists[0]


def feasible(pair: Pair, mapping: Sequence[int]) -> bool:
    """A permutation of B's atoms, one per atom of A."""
    first, second = pair
    return len(mapping) == len(first.labels) and sorted(mapping) == list(range(len(second.labels)))


def objective(pair: Pair, mapping: Sequence[int]) -> int:
    """The mapping's edit cost."""
    return edit_cost(pair[0], pair[1], tuple(mapping))


def witness_answer(pair: Pair, witness: Sequence[Any]) -> list[int]:
    """The solver's mapping, as the answer lists it."""
    return witness_ids(witness, len(pair[1].labels))


def optimum_bounds(pair: Pair) -> tuple[int, int]:
    """Unmatched labels plus the bond-count difference, and the identity mapping's cost.

    Raises:
        ValueError: the molecules differ in size (GED here maps atoms one to one).
    """
    first, second = pair
    if len(first.labels) != len(second.labels):
        raise ValueError(
            f"ground_truth.graph: ged molecules must have the same number of atoms "
            f"({len(first.labels)} vs {len(second.labels)})"
        )
    identity_cost = edit_cost(first, second, tuple(range(len(first.labels))))
    unmatched_labels = len(first.labels) - sum((Counter(first.labels) & Counter(second.labels)).values())
    return unmatched_labels + abs(len(first.edges) - len(second.edges)), identity_cost


TASK = GraphTask(
    id="ged",
    sense="min",
    parse_problem=parse_problem,
    parse_answer=parse_answer,
    feasible=feasible,
    objective=objective,
    witness_answer=witness_answer,
    optimum_bounds=optimum_bounds,
)
