"""Decide whether a parsed answer is feasible and compute its objective, strictly.

GraphArena's checkers (and NPG-Muse, which reuses them) count duplicates, skip unknown names and never range-check
MCS indices, which lets a padded answer score as optimal (``docs/np-graph-rewards.md``, "Exploits"). Here every
answer must be a well-formed solution of the instance or it is infeasible:

* MCP/MIS/MVC: distinct known names (exact spelling); a clique, an independent set, a vertex cover.
* TSP: a closed tour, ``n + 1`` codes, first == last, every airport exactly once; start and direction are free.
* GED: ``n`` integers forming a permutation of B's atoms; objective is ``truth.edit_cost``.
* MCS: two lists of equal length, distinct in-range indices on each side, and the *given* pairing (position k of
  A's list with position k of B's list) an isomorphism of the induced subgraphs: two atoms of A are bonded exactly
  when their partners in B are. This is stricter than GraphArena, which accepts the two atom sets when their
  induced subgraphs are isomorphic under any pairing; rlif's prompt (``rlif.graphs.prompts``) asks for "their
  partners in the same order", so the answer is a certificate and checking it is O(k^2) with no graph search.
"""

from __future__ import annotations

import enum
import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rewards.graph.answer import last_code_list, last_int_lists, last_name_list
from rewards.graph.truth import Airports, GraphTruth, Molecule, NamedGraph, edit_cost


class Category(enum.Enum):
    """GraphArena's four outcome categories (its "hallucinatory" is our infeasible)."""

    OPTIMAL = "optimal"
    SUBOPTIMAL = "suboptimal"
    INFEASIBLE = "infeasible"
    MISSING = "missing"


@dataclass(frozen=True)
class Verdict:
    """The outcome of one answer.

    Attributes:
        category: optimal, suboptimal, infeasible or missing.
        value: the objective of a feasible answer, None otherwise.
        quality: ``min(v, E) / E`` (maximise) or ``E / max(v, E)`` (minimise) for a feasible answer, else 0;
            it is 1 exactly for optimal answers and never exceeds 1.
    """

    category: Category
    value: int | None
    quality: float

    @property
    def feasible(self) -> bool:
        """Whether the answer is a valid solution (optimal or not)."""
        return self.value is not None


MISSING = Verdict(Category.MISSING, None, 0.0)
INFEASIBLE = Verdict(Category.INFEASIBLE, None, 0.0)


def judge(truth: GraphTruth, answer: str) -> Verdict:
    """Parse ``answer`` for ``truth.task`` and grade it.

    Args:
        truth: the parsed ground truth.
        answer: the answer section of the response (never the thinking).

    Returns:
        The verdict. An answer at least as good as the recorded optimum is optimal (it can only be better when the
        recorded optimum is wrong; GraphArena's accuracy uses the same ``>=``/``<=`` test).
    """
    value = _objective(truth, answer)
    if isinstance(value, Verdict):
        return value
    optimum = truth.optimum
    if truth.maximise:
        optimal = value >= optimum
        quality = min(value, optimum) / optimum if optimum > 0 else 1.0
    else:
        optimal = value <= optimum
        quality = optimum / max(value, optimum) if value > 0 else 1.0
    return Verdict(Category.OPTIMAL if optimal else Category.SUBOPTIMAL, value, 1.0 if optimal else quality)


def _objective(truth: GraphTruth, answer: str) -> int | Verdict:
    problem = truth.problem
    if isinstance(problem, NamedGraph):
        names = last_name_list(answer)
        return MISSING if names is None else _named_set(truth.task, problem, names)
    if isinstance(problem, Airports):
        codes = last_code_list(answer)
        return MISSING if codes is None else _tour(problem, codes)
    first, second = problem
    if truth.task == "ged":
        lists = last_int_lists(answer, 1)
        return MISSING if lists is None else _mapping(first, second, lists[0])
    lists = last_int_lists(answer, 2)
    return MISSING if lists is None else _common_subgraph(first, second, lists[0], lists[1])


def _named_set(task: str, graph: NamedGraph, names: Sequence[str]) -> int | Verdict:
    ids = [graph.ids.get(name, -1) for name in names]
    chosen = set(ids)
    if -1 in chosen or len(chosen) != len(ids):
        return INFEASIBLE
    if task == "mcp":
        ok = all(chosen - {u} <= graph.neighbours[u] for u in chosen)
    elif task == "mis":
        ok = all(not (graph.neighbours[u] & chosen) for u in chosen)
    else:
        ok = all(u in chosen or v in chosen for u, v in graph.edges)
    return len(ids) if ok else INFEASIBLE


def _tour(airports: Airports, codes: Sequence[str]) -> int | Verdict:
    n = len(airports.codes)
    route = [airports.ids.get(code, -1) for code in codes]
    if len(route) != n + 1 or route[0] != route[-1] or -1 in route or len(set(route[:-1])) != n:
        return INFEASIBLE
    weights = airports.weights
    return sum(weights[a][b] for a, b in itertools.pairwise(route))


def _mapping(first: Molecule, second: Molecule, mapping: Sequence[int]) -> int | Verdict:
    n = len(second.labels)
    if len(mapping) != len(first.labels) or sorted(mapping) != list(range(n)):
        return INFEASIBLE
    return edit_cost(first, second, tuple(mapping))


def _common_subgraph(first: Molecule, second: Molecule, left: Sequence[int], right: Sequence[int]) -> int | Verdict:
    k = len(left)
    if (
        len(right) != k
        or len(set(left)) != k
        or len(set(right)) != k
        or not all(0 <= i < len(first.labels) for i in left)
        or not all(0 <= j < len(second.labels) for j in right)
    ):
        return INFEASIBLE
    paired = all(
        (left[b] in first.neighbours[left[a]]) == (right[b] in second.neighbours[right[a]])
        for a in range(k)
        for b in range(a + 1, k)
    )
    return k if paired else INFEASIBLE


def witness_value(truth: GraphTruth, witness: Any) -> int | None:
    """The objective of a solution given by node ids, judged by the same feasibility checks as an answer.

    The data builder stores the solver's solution beside the optimum (``extra_info.witness``), in the form the
    solver returns it: node ids for MCP/MIS/MVC, a closed tour of ids for TSP (first == last), the atom mapping for
    GED and ``[atom of A, atom of B]`` pairs for MCS. Running it through the answer checks proves the stored
    optimum is reachable under exactly the rules the reward applies.

    Returns:
        The objective, or None when the witness is malformed or not a feasible solution.
    """
    if not isinstance(witness, list) or not all(_is_id(x) or isinstance(x, list) for x in witness):
        return None
    problem = truth.problem
    try:
        if isinstance(problem, NamedGraph):
            value = _named_set(truth.task, problem, [problem.names[i] for i in _ids(witness, len(problem.names))])
        elif isinstance(problem, Airports):
            value = _tour(problem, [problem.codes[i] for i in _ids(witness, len(problem.codes))])
        elif truth.task == "ged":
            value = _mapping(problem[0], problem[1], _ids(witness, len(problem[1].labels)))
        else:
            if not all(isinstance(p, list) and len(p) == 2 for p in witness):
                return None
            value = _common_subgraph(problem[0], problem[1], [p[0] for p in witness], [p[1] for p in witness])
    except (IndexError, TypeError, ValueError):
        return None
    return None if isinstance(value, Verdict) else value


def _is_id(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _ids(witness: list[Any], n: int) -> list[int]:
    if not all(_is_id(i) and 0 <= i < n for i in witness):
        raise ValueError("witness ids out of range")
    return witness
