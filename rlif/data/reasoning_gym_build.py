"""Build verl rows of reasoning-gym tasks at chosen curriculum levels.

``python -m rlif.data reasoning-gym --tasks maze string_insertion --size 200 --levels 0 1 2 --out F.parquet``

For each task and level, the task's reasoning-gym curriculum is set to that global level
(``BaseCurriculum.set_global_level``: every attribute at the level, or at its last one) and its configuration
generated with reasoning-gym's default context (a range attribute at level k spans its levels 0 to k+1); the
dataset of that configuration gives ``--size`` items. Item i of level k comes from ``Random(seed + k * size + i)``
(reasoning-gym's ``Random(config.seed + idx)`` with the level's seed ``seed + k * size``), so no two rows of one
task share a generator seed, and an evaluation file built with another ``--seed`` (at least ``levels * size``
away) shares none with training.

Each row is one ``reasoning_gym/<task>`` source row: the prompt is reasoning-gym's default system prompt (it asks
for the answer in ``<answer>`` tags) and the item's question; the ground truth carries the task name and the item
(``rewards.reasoning_gym_tasks``); ``extra_info`` holds ``difficulty`` and ``level`` (both the level: the
reward-gated curriculum splits by ``difficulty``, the staged one steps through ``level``), ``task`` and
``source_index``.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rewards import normalize_ground_truth
from rewards.reasoning_gym_tasks import PREFIX, TASKS
from rlif.data.files import write_rows_atomic
from rlif.data.rows import verl_row

SYSTEM_PROMPT_NAME = "default"
"""The key of reasoning-gym's ``SYSTEM_PROMPTS`` the rows use (step-by-step, answer in ``<answer>`` tags)."""


def level_count(task: str) -> int:
    """The number of global levels of ``task``'s curriculum (its longest attribute's levels).

    Raises:
        ValueError: ``task`` is not a supported task.
    """
    from reasoning_gym.factory import create_curriculum

    check_task(task)
    return max(len(attr.levels) for attr in create_curriculum(task).attributes.values())


def level_items(task: str, level: int, size: int, seed: int) -> list[dict[str, Any]]:
    """``size`` items of ``task`` at curriculum ``level`` (the module docstring gives the seeds).

    Raises:
        ValueError: an unsupported task, a level outside the task's curriculum, or a size below 1.
    """
    from reasoning_gym import create_dataset
    from reasoning_gym.factory import create_curriculum

    check_task(task)
    if size < 1:
        raise ValueError(f"size must be >= 1, got {size}")
    levels = level_count(task)
    if not 0 <= level < levels:
        raise ValueError(f"{task}: level {level} is outside its curriculum's levels 0 to {levels - 1}")
    curriculum = create_curriculum(task)
    curriculum.set_global_level(level)
    config = curriculum.generate_configuration({"seed": seed + level * size, "size": size})
    dataset = create_dataset(task, **dataclasses.asdict(config))
    return [dataset[i] for i in range(size)]


def build_rows(
    tasks: Sequence[str], size: int, levels: Sequence[int], *, seed: int = 0, split: str = "train"
) -> list[dict[str, Any]]:
    """The rows of every task at every level, task by task, level by level.

    Raises:
        ValueError: see ``level_items``; an item the family cannot score names its task, level and index.
    """
    from reasoning_gym.utils import SYSTEM_PROMPTS

    rows = []
    for task in tasks:
        source = PREFIX + task
        for level in levels:
            for i, item in enumerate(level_items(task, level, size, seed)):
                where = f"{task} level {level} item {i}"
                truth = normalize_ground_truth(source, {"task": task, "entry": item}, where=where)
                prompt = [
                    {"role": "system", "content": SYSTEM_PROMPTS[SYSTEM_PROMPT_NAME]},
                    {"role": "user", "content": item["question"]},
                ]
                extra_info = {
                    "split": split,
                    "index": len(rows),
                    "item_id": f"reasoning_gym-{task}-L{level}-s{seed}-{i}",
                    "difficulty": level,
                    "level": level,
                    "task": task,
                    "source_index": i,
                }
                rows.append(verl_row(source, prompt, truth, extra_info))
    return rows


def check_task(task: str) -> None:
    """Refuse a task rlif does not score (its scorer not read, ``rewards.reasoning_gym_tasks.TASKS``).

    Raises:
        ValueError: ``task`` is not supported; the message lists the tasks that are.
    """
    if task not in TASKS:
        raise ValueError(f"unknown reasoning-gym task {task!r}; supported: {', '.join(TASKS)}")


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point: one parquet file of every task and level."""
    parser = argparse.ArgumentParser(
        prog="python -m rlif.data reasoning-gym",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--tasks", nargs="+", required=True, choices=TASKS, metavar="TASK", help=", ".join(TASKS))
    parser.add_argument("--size", type=int, required=True, help="items per task and level")
    parser.add_argument(
        "--levels", type=int, nargs="+", default=[0], help="curriculum levels, from 0 (default: %(default)s)"
    )
    parser.add_argument("--seed", type=int, default=0, help="base seed (default: %(default)s)")
    parser.add_argument("--split", default="train", help="extra_info.split of the rows (default: %(default)s)")
    parser.add_argument("--out", type=Path, required=True, help="output .parquet file")
    args = parser.parse_args(argv)
    try:
        rows = build_rows(args.tasks, args.size, sorted(set(args.levels)), seed=args.seed, split=args.split)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    write_rows_atomic(rows, args.out, schema=None)
    print(f"{args.out}: {len(rows)} rows ({len(args.tasks)} tasks x {len(set(args.levels))} levels x {args.size})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
