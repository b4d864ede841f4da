"""Exact optima of graph instances, computed once when the data is built (never during training).

Each task's solver lives in its module (``rlif/graphs/tasks/<id>.py``): MCP the largest maximal clique, MIS a
maximum clique of the complement, MVC its complement, TSP fast-tsp's Held-Karp, GED the HiGHS MILP of
``rlif.graphs.ged_milp``, MCS the McSplit branch and bound of ``rlif.graphs.mcs_search``. Each returns the optimum
with a witness (clique, tour, mapping, ...) so tests and row validation can check both.
"""

from __future__ import annotations

from rlif.graphs.instance import Instance
from rlif.graphs.task import Solution
from rlif.graphs.tasks import task_named


def solve(task: str, instance: Instance) -> Solution:
    """The exact optimum of ``instance`` for ``task``.

    Raises:
        ValueError: unknown task or an instance of the wrong type.
    """
    spec = task_named(task)
    if not spec.fits(instance):
        raise ValueError(f"task: no exact solver for task {task!r} with a {type(instance).__name__}")
    return spec.solve(instance)
