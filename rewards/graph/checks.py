"""Decide whether a parsed answer is feasible and compute its objective, strictly, through the task's registry entry.

GraphArena's checkers (and NPG-Muse, which reuses them) count duplicates, skip unknown names and never range-check
MCS indices, which lets a padded answer score as optimal (``docs/np-graph-rewards.md``, "Exploits"). Here every
answer must be a well-formed solution of the instance or it is infeasible; what that means per task is in the
task's module (``rewards/graph/tasks/<id>.py``).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from rewards.graph.truth import GraphTruth


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
    task = truth.spec
    parsed = task.parse_answer(answer)
    if parsed is None:
        return MISSING
    return task.objective(truth.problem, parsed) if task.feasible(truth.problem, parsed) else INFEASIBLE


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
    task = truth.spec
    try:
        answer = task.witness_answer(truth.problem, witness)
        return task.objective(truth.problem, answer) if task.feasible(truth.problem, answer) else None
    except (IndexError, TypeError, ValueError):
        return None


def _is_id(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
