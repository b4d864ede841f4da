"""What one graph task provides to the data builder: the contract every module in ``rlif/graphs/tasks/`` fills.

The generic code (``items.make_item``, ``truth``, ``exact.solve``, ``prompts``, ``build``, ``grapharena``) never
names a task: it looks the task up in ``rlif.graphs.tasks.TASKS`` and calls these, so adding a task never edits it.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Solution:
    """An optimum and one solution attaining it (node list, closed tour, atom mapping or matched pairs)."""

    optimum: int
    witness: tuple


def sample_size(lo: int, hi: int, rng: random.Random) -> int:
    """GraphArena's size draw: ``int(Exp(mean=(hi - lo) / 2))`` redrawn until it lies in ``[lo, hi]``."""
    while True:
        size = int(rng.expovariate(2.0 / (hi - lo)))
        if lo <= size <= hi:
            return size


def _no_extra_check(instance: Any, where: str) -> None:
    """Most tasks accept every valid instance of their type."""


@dataclass(frozen=True)
class GraphTask:
    """One graph task, as the data builder sees it.

    Attributes:
        id: the official task id, the same as in ``rewards.graph.tasks.TASKS``.
        instance_type: the instance class (``rlif.graphs.instance``): its node-link form is the ground truth's
            ``graph``.
        size_ranges: node range per size name (``small``/``large``, GraphArena's easy/hard).
        generate: ``(lo, hi, rng) -> instance``: a fresh instance whose size is drawn in ``[lo, hi]`` (with
            ``sample_size``) from the item's own ``rng``, so the same seed gives the same instance.
        solve: ``(instance) -> Solution``: the exact optimum and a witness in the form the reward's
            ``witness_answer`` reads.
        problem_text: ``(instance) -> str``: the prompt's problem (without the answer rules).
        min_optimum: instances whose optimum is smaller are redrawn (GraphArena keeps MVC covers of 3 or more).
        check_instance: ``(instance, where) -> None``: invariants beyond the instance type's own ``validate``
            (GED compares molecules of one size); raises ``ValueError`` naming ``where``.
    """

    id: str
    instance_type: type
    size_ranges: Mapping[str, tuple[int, int]]
    generate: Callable[[int, int, random.Random], Any]
    solve: Callable[[Any], Solution]
    problem_text: Callable[[Any], str]
    min_optimum: int = 0
    check_instance: Callable[[Any, str], None] = _no_extra_check

    def fits(self, instance: object) -> bool:
        """Whether ``instance`` is of this task's instance type."""
        return isinstance(instance, self.instance_type)
