"""Per-task size ranges and the generation of one solved item: instance, prompt and exact optimum.

Sizes follow GraphArena: ``small`` ("easy") and ``large`` ("hard") node ranges per task, with a size drawn as
``int(exponential((max - min) / 2))`` and redrawn until it falls in the range, which skews sizes low. MCS draws
its two molecule sizes independently in the range; GED uses one size for both molecules. Each item has its own
``random.Random`` seeded by ``(seed, task, size, index)``, so any item can be rebuilt alone, in any order, on any
worker.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from rlif.graphs.airports import sample_tsp
from rlif.graphs.exact import solve
from rlif.graphs.instance import TASKS, Instance
from rlif.graphs.molecules import sample_molecule_pair
from rlif.graphs.prompts import MAX_PROMPT_CHARS, user_message
from rlif.graphs.social import sample_social_graph

SIZES: tuple[str, ...] = ("small", "large")
SIZE_RANGES: dict[str, dict[str, tuple[int, int]]] = {
    "mcp": {"small": (4, 14), "large": (15, 30)},
    "mis": {"small": (4, 14), "large": (15, 30)},
    "mvc": {"small": (4, 14), "large": (15, 30)},
    "tsp": {"small": (4, 9), "large": (10, 20)},
    "ged": {"small": (4, 9), "large": (10, 20)},
    "mcs": {"small": (4, 9), "large": (10, 20)},
}
"""GraphArena's easy/hard node ranges (for GED/MCS: atoms per molecule)."""

MIN_VERTEX_COVER = 3
"""GraphArena keeps only MVC instances whose optimum is at least 3."""

_MAX_REDRAWS = 100


@dataclass(frozen=True)
class SolvedItem:
    """One generated instance with everything a row needs.

    ``witness`` is the solver's solution attaining ``optimum`` (``rlif.graphs.exact.Solution``), stored in the row
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
    if task not in TASKS:
        raise ValueError(f"task: unknown task {task!r}; known: {list(TASKS)}")
    if size not in SIZES:
        raise ValueError(f"size: unknown size {size!r}; known: {list(SIZES)}")


def sample_size(lo: int, hi: int, rng: random.Random) -> int:
    """GraphArena's size draw: ``int(Exp(mean=(hi - lo) / 2))`` redrawn until it lies in ``[lo, hi]``."""
    while True:
        size = int(rng.expovariate(2.0 / (hi - lo)))
        if lo <= size <= hi:
            return size


def item_rng(seed: int, task: str, size: str, index: int) -> random.Random:
    """The item's own generator (string seeds hash with SHA-512, so this is stable across runs and machines)."""
    return random.Random(f"rlif-graphs/{seed}/{task}/{size}/{index}")


def _draw_instance(task: str, lo: int, hi: int, rng: random.Random) -> Instance:
    if task in ("mcp", "mis", "mvc"):
        return sample_social_graph(task, sample_size(lo, hi, rng), rng)
    if task == "tsp":
        return sample_tsp(sample_size(lo, hi, rng), rng)
    if task == "ged":
        n = sample_size(lo, hi, rng)
        return sample_molecule_pair(n, n, rng)
    return sample_molecule_pair(sample_size(lo, hi, rng), sample_size(lo, hi, rng), rng)


def make_item(task: str, size: str, seed: int, index: int) -> SolvedItem:
    """Generate and solve item ``index`` of ``task`` at ``size``.

    Instances whose prompt exceeds ``MAX_PROMPT_CHARS`` (and MVC instances with an optimum below 3) are redrawn
    from the same item generator, as GraphArena does.

    Raises:
        ValueError: unknown task/size, or no acceptable instance in many redraws.
    """
    check_task_size(task, size)
    lo, hi = SIZE_RANGES[task][size]
    rng = item_rng(seed, task, size, index)
    for _ in range(_MAX_REDRAWS):
        instance = _draw_instance(task, lo, hi, rng)
        prompt = user_message(task, instance)
        if len(prompt) > MAX_PROMPT_CHARS:
            continue
        solution = solve(task, instance)
        if task == "mvc" and solution.optimum < MIN_VERTEX_COVER:
            continue
        item_id = f"{task}-{size}-{seed}-{index}"
        return SolvedItem(task, size, item_id, instance, prompt, solution.optimum, solution.witness)
    raise ValueError(f"{task}-{size}-{seed}-{index}: no acceptable instance in {_MAX_REDRAWS} draws")
