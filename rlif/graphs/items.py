"""Generate one solved item of a graph task: instance, prompt and exact optimum, reproducible from its seed.

Sizes follow GraphArena: ``small`` ("easy") and ``large`` ("hard") node ranges per task (``GraphTask.size_ranges``),
a size drawn as ``int(exponential((max - min) / 2))`` and redrawn until it falls in the range, which skews sizes
low. Each item has its own ``random.Random`` seeded by ``(seed, task, size, index)``, so any item can be rebuilt
alone, in any order, on any worker.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from rewards.lookup import unknown_name
from rlif.graphs.instance import Instance
from rlif.graphs.prompts import MAX_PROMPT_CHARS, user_message
from rlif.graphs.tasks import task_named

SIZES: tuple[str, ...] = ("small", "large")
"""Size names, GraphArena's easy and hard; every task gives a node range for each."""

_MAX_REDRAWS = 100


@dataclass(frozen=True)
class SolvedItem:
    """One generated instance with everything a row needs.

    ``witness`` is the solver's solution attaining ``optimum`` (``rlif.graphs.task.Solution``), stored in the row
    so validation can prove the optimum is reachable without solving again.
    """

    task: str
    size: str
    item_id: str
    instance: Instance
    prompt: str
    optimum: int
    witness: tuple


def check_task_size(task: str, size: str) -> None:
    """Raises ValueError for an unknown task or size name."""
    task_named(task)
    if size not in SIZES:
        raise unknown_name("size", size, SIZES, where="size")


def item_rng(seed: int, task: str, size: str, index: int) -> random.Random:
    """The item's own generator (string seeds hash with SHA-512, so this is stable across runs and machines)."""
    return random.Random(f"rlif-graphs/{seed}/{task}/{size}/{index}")


def make_item(task: str, size: str, seed: int, index: int) -> SolvedItem:
    """Generate and solve item ``index`` of ``task`` at ``size``.

    Instances whose prompt exceeds ``MAX_PROMPT_CHARS`` (and instances whose optimum is below the task's
    ``min_optimum``: MVC covers under 3) are redrawn from the same item generator, as GraphArena does.

    Raises:
        ValueError: unknown task/size, or no acceptable instance in many redraws.
    """
    check_task_size(task, size)
    spec = task_named(task)
    lo, hi = spec.size_ranges[size]
    rng = item_rng(seed, task, size, index)
    for _ in range(_MAX_REDRAWS):
        instance = spec.generate(lo, hi, rng)
        prompt = user_message(task, instance)
        if len(prompt) > MAX_PROMPT_CHARS:
            continue
        solution = spec.solve(instance)
        if solution.optimum < spec.min_optimum:
            continue
        item_id = f"{task}-{size}-{seed}-{index}"
        return SolvedItem(task, size, item_id, instance, prompt, solution.optimum, solution.witness)
    raise ValueError(f"{task}-{size}-{seed}-{index}: no acceptable instance in {_MAX_REDRAWS} draws")
