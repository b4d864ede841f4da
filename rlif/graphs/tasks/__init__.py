"""The graph tasks the data builder makes, keyed by official task id (the same ids as ``rewards.graph.tasks``).

| id | task | instance | small / large |
|---|---|---|---|
| ``mcp`` | maximum clique | ``SocialGraph`` (co-authorship) | 4-14 / 15-30 authors |
| ``mis`` | maximum independent set | ``SocialGraph`` (friendship) | 4-14 / 15-30 users |
| ``mvc`` | minimum vertex cover | ``SocialGraph`` (friendship) | 4-14 / 15-30 users |
| ``tsp`` | travelling salesman | ``TspInstance`` | 4-9 / 10-20 airports |
| ``ged`` | graph edit distance | ``MoleculePair`` (one size) | 4-9 / 10-20 atoms |
| ``mcs`` | maximum common induced subgraph | ``MoleculePair`` | 4-9 / 10-20 atoms |

Each module holds its whole task as the builder sees it: size ranges, generator, exact solver and prompt text,
bundled as ``TASK`` (``rlif.graphs.task.GraphTask``). The order of ``TASKS`` is the order used everywhere (the
default task list, shard plans, manifests).

To add a task ``xyz``, write ``rewards/graph/tasks/xyz.py`` first (its docstring gives the steps), then
``rlif/graphs/tasks/xyz.py`` with ``TASK = GraphTask(id="xyz", ...)``, reusing an instance type of
``rlif.graphs.instance`` or defining one with the same methods, and add it to ``TASKS`` below.
``python -m rlif.data.graph_build --tasks xyz`` then builds it; ``tests/graph_rewards/test_graph_task_registry.py``
checks both registries list the same ids.
"""

from __future__ import annotations

from rewards.lookup import look_up
from rlif.graphs.task import GraphTask
from rlif.graphs.tasks import ged, mcp, mcs, mis, mvc, tsp

TASKS: dict[str, GraphTask] = {
    "mcp": mcp.TASK,
    "mis": mis.TASK,
    "mvc": mvc.TASK,
    "tsp": tsp.TASK,
    "ged": ged.TASK,
    "mcs": mcs.TASK,
}
"""Task id -> task, in the order used everywhere."""


def task_named(task_id: object, field: str = "task") -> GraphTask:
    """The task called ``task_id``.

    Args:
        task_id: the id to look up.
        field: the field path the id came from, for the error message.

    Raises:
        ValueError: unknown id; the message names ``field`` and lists the known ids.
    """
    return look_up(TASKS, task_id, "task", where=field)


__all__ = ["TASKS", "GraphTask", "task_named"]
