"""The user message of a graph row: rlif's answer rules, then the task's problem text (GraphArena's style).

Like GraphArena, each prompt names the entities (people, airport codes, atom indices), lists the graph under
``**Problem to Solve**`` and asks for the answer as a bracketed list; each task writes its own problem text
(``GraphTask.problem_text`` in ``rlif/graphs/tasks/<id>.py``). GraphArena sends a separate system message; verl
rows here carry one user message, so the instruction that would be the system prompt opens the user message
(``ANSWER_RULES``). Deviations: the "Fiendship" typo is fixed, and the answer format is spelled out once per task
with a tiny example of its shape. MCS keeps GraphArena's two lists ``[A atoms], [B atoms]``.
"""

from __future__ import annotations

from rlif.graphs.instance import Instance
from rlif.graphs.tasks import task_named

ANSWER_RULES = (
    "You are an expert in graph problems. Work the problem out yourself without writing or running code. "
    "Give your final answer in square brackets [] exactly as requested, and use square brackets nowhere else."
)
MAX_PROMPT_CHARS = 6000
"""GraphArena drops instances whose prompt is longer; the builder redraws them."""


def problem_text(task: str, instance: Instance) -> str:
    """The task prompt for one instance (without the answer rules).

    Raises:
        ValueError: unknown task or wrong instance type.
    """
    spec = task_named(task)
    if not spec.fits(instance):
        raise ValueError(f"task: no prompt for task {task!r} with a {type(instance).__name__}")
    return spec.problem_text(instance)


def user_message(task: str, instance: Instance) -> str:
    """The single user message of a row: the answer rules, a blank line, then the problem."""
    return f"{ANSWER_RULES}\n\n{problem_text(task, instance)}"
