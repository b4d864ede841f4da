"""What one graph task provides to the scorer: the contract every module in ``rewards/graph/tasks/`` fills.

The generic code (``truth.py`` ground truth, ``checks.py`` verdicts, ``variants.py`` reward variants) never names a
task: it looks the task up in ``rewards.graph.tasks.TASKS`` and calls these functions, so adding a task never
edits it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

Sense = Literal["max", "min"]


@dataclass(frozen=True)
class GraphTask:
    """One graph task, as the reward sees it.

    Attributes:
        id: the official task id (``data_source`` is ``graph/<id>``, ``ground_truth.task`` is ``<id>``).
        sense: ``max`` when a bigger objective is better, ``min`` otherwise.
        parse_problem: ``(graph, where) -> problem``: read and validate the ground truth's node-link ``graph``
            into the form the answer checks read; raises ``ValueError`` naming ``where`` and the field.
        parse_answer: ``(answer_section) -> answer | None``: the task's answer list(s), None when there is none
            (a missing answer). Pure string work that never raises.
        feasible: ``(problem, answer) -> bool``: whether the answer is a well-formed solution of the instance.
        objective: ``(problem, answer) -> int``: the objective of a feasible answer.
        witness_answer: ``(problem, witness) -> answer``: the data builder's solver witness (node ids, see
            ``checks.witness_value``) in the form ``parse_answer`` returns, so the same checks judge it; raises
            ``ValueError``, ``IndexError`` or ``TypeError`` when the witness is malformed.
        optimum_bounds: ``(problem) -> (low, high)``: bounds every solution's objective obeys (cheap necessary
            conditions on a stored optimum, not a solve); raises ``ValueError`` for an instance no solution fits.
        squared_quality: NPG-Muse's ``complicated`` variant squares this task's quality ratio (TSP).
    """

    id: str
    sense: Sense
    parse_problem: Callable[[Any, str], Any]
    parse_answer: Callable[[str], Any]
    feasible: Callable[[Any, Any], bool]
    objective: Callable[[Any, Any], int]
    witness_answer: Callable[[Any, list[Any]], Any]
    optimum_bounds: Callable[[Any], tuple[int, int]]
    squared_quality: bool = False

    def __post_init__(self) -> None:
        if self.sense not in ("max", "min"):
            raise ValueError(f"sense: task {self.id!r} needs 'max' or 'min', got {self.sense!r}")

    @property
    def maximise(self) -> bool:
        """Whether a bigger objective is better."""
        return self.sense == "max"
