"""The graph tasks the reward knows, keyed by official task id (GraphArena's NP tasks).

| id | task | sense |
|---|---|---|
| ``mcp`` | maximum clique | max |
| ``mis`` | maximum independent set | max |
| ``mvc`` | minimum vertex cover | min |
| ``tsp`` | travelling salesman | min |
| ``ged`` | graph edit distance | min |
| ``mcs`` | maximum common induced subgraph | max |

Each module holds its whole task as the reward sees it: reading the ground truth's graph, parsing the answer,
feasibility, objective, sense and the bounds a stored optimum must obey, bundled as ``TASK``
(``rewards.graph.task.GraphTask``). The order of ``TASKS`` is the order used everywhere (seeds, manifests).

To add a task ``xyz``:

1. ``rewards/graph/tasks/xyz.py``: the functions ``GraphTask`` asks for and ``TASK = GraphTask(id="xyz", ...)``
   (reuse ``rewards.graph.instances`` and ``rewards.graph.answer`` where the instance or answer looks like an
   existing task's); add it to ``TASKS`` below.
2. ``rlif/graphs/tasks/xyz.py``: sizes, generator, exact solver and prompt (see ``rlif.graphs.tasks``); add it to
   that registry too. ``tests/graph_rewards/test_graph_task_registry.py`` checks both lists agree.
3. Tests: hand-made answers (optimal, suboptimal, infeasible, missing) in ``tests/graph_rewards/`` and a
   solver check in ``tests/graphs/``.
"""

from __future__ import annotations

from rewards.graph.task import GraphTask
from rewards.graph.tasks import ged, mcp, mcs, mis, mvc, tsp
from rewards.lookup import look_up

TASKS: dict[str, GraphTask] = {
    "mcp": mcp.TASK,
    "mis": mis.TASK,
    "mvc": mvc.TASK,
    "tsp": tsp.TASK,
    "ged": ged.TASK,
    "mcs": mcs.TASK,
}
"""Task id -> task; a data row's ``data_source`` is ``graph/<id>``."""


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
