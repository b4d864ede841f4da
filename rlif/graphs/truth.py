"""A row's ground-truth JSON by task id: writing it, reading it back and validating it (the builder's side).

``reward_model.ground_truth`` is the canonical JSON of ``{"task", "graph", "optimum"}``; ``graph`` is the node-link
form of the task's instance type (``rlif.graphs.instance``). The reward reads the same JSON
(``rewards.graph.truth``). Reading validates everything and raises ``ValueError`` naming the field, because bad
ground truth must fail when the data is built, not during training.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from rewards.canonical import canonical_json
from rlif.graphs.instance import Instance, field, int_field, str_field
from rlif.graphs.tasks import task_named


@dataclass(frozen=True)
class GroundTruth:
    """A parsed ground truth: the task, its instance and the exact optimum."""

    task: str
    instance: Instance
    optimum: int


def to_node_link(task: str, instance: Instance) -> dict[str, Any] | list[dict[str, Any]]:
    """Convert an instance to its node-link ``graph`` (a list of two graphs for GED/MCS).

    Raises:
        ValueError: unknown task, or an instance of the wrong type for it.
    """
    if not task_named(task).fits(instance):
        raise ValueError(f"instance: a {type(instance).__name__} is not an instance of task {task!r}")
    return instance.to_node_link()


def from_node_link(task: str, graph: Any, where: str = "graph") -> Instance:
    """Read an instance back from its node-link ``graph``.

    Args:
        task: a task id of ``rlif.graphs.tasks.TASKS``.
        graph: node-link data as written by ``to_node_link`` (extra keys such as ``directed`` are ignored).
        where: the field path used in error messages.

    Returns:
        The validated instance.

    Raises:
        ValueError: the graph does not have the task's format, naming the offending field.
    """
    instance = task_named(task).instance_type.from_node_link(graph, where)
    validate_instance(task, instance, where)
    return instance


def validate_instance(task: str, instance: Instance, where: str = "graph") -> None:
    """Check the invariants every instance of ``task`` must hold: its type's, then the task's own.

    Raises:
        ValueError: duplicate names/edges, unknown bond type, distances out of range, unequal GED sizes, ...
    """
    instance.validate(where)
    task_named(task).check_instance(instance, where)


def ground_truth_json(task: str, instance: Instance, optimum: int) -> str:
    """The canonical ground-truth string of one row.

    Raises:
        ValueError: unknown task, wrong instance type, or an invalid instance or optimum.
    """
    graph = to_node_link(task, instance)
    validate_instance(task, instance)
    if isinstance(optimum, bool) or not isinstance(optimum, int) or optimum < 0:
        raise ValueError(f"optimum: expected a non-negative int, got {optimum!r}")
    return canonical_json({"task": task, "graph": graph, "optimum": optimum})


def parse_ground_truth(text: str) -> GroundTruth:
    """Parse and validate a row's ground-truth JSON.

    Raises:
        ValueError: not JSON, missing/ill-typed field, or an invalid instance.
    """
    try:
        obj = json.loads(text)
    except (TypeError, json.JSONDecodeError) as exc:
        raise ValueError(f"ground_truth: not valid JSON ({exc})") from exc
    task = str_field(obj, "task", "ground_truth")
    task_named(task)
    optimum = int_field(obj, "optimum", "ground_truth")
    if optimum < 0:
        raise ValueError(f"ground_truth.optimum: must be >= 0, got {optimum}")
    instance = from_node_link(task, field(obj, "graph", "ground_truth"), "ground_truth.graph")
    return GroundTruth(task, instance, optimum)


def difficulty(instance: Instance) -> int:
    """The row's difficulty: its node count (for GED/MCS the larger molecule's)."""
    return instance.n
