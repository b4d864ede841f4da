"""The two graph task registries: the reward's (``rewards.graph.tasks``) and the builder's (``rlif.graphs.tasks``).

Both must list the same ids in the same order, every task module must be registered and fill its contract, and
no code outside the task modules may name a task id (dispatch goes through the registries).
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import re
from pathlib import Path

import pytest

from rewards import check_row
from rewards.graph import tasks as reward_tasks
from rewards.graph.checks import witness_value
from rewards.graph.task import GraphTask as RewardTask
from rewards.graph.truth import parse_ground_truth
from rlif.data.graph_rows import item_row
from rlif.graphs import tasks as build_tasks
from rlif.graphs.items import SIZES, make_item
from rlif.graphs.task import GraphTask as BuildTask

REPO = Path(__file__).resolve().parents[2]
IDS = list(reward_tasks.TASKS)


def test_both_registries_list_the_same_ids_in_the_same_order():
    assert list(build_tasks.TASKS) == IDS
    assert IDS  # an empty registry would make every other check here vacuous


@pytest.mark.parametrize(
    ("registry", "package"),
    [(reward_tasks, "rewards/graph/tasks"), (build_tasks, "rlif/graphs/tasks")],
    ids=["rewards", "rlif"],
)
def test_every_task_module_is_registered_under_its_own_id(registry, package):
    modules = sorted(p.stem for p in (REPO / package).glob("*.py") if p.stem != "__init__")
    assert modules == sorted(registry.TASKS)
    for task_id, task in registry.TASKS.items():
        module = importlib.import_module(f"{package.replace('/', '.')}.{task_id}")
        assert module.TASK is task and task.id == task_id


def _required_callables(cls: type) -> list[str]:
    return [f.name for f in dataclasses.fields(cls) if "Callable" in str(f.type)]


@pytest.mark.parametrize("task_id", IDS)
def test_reward_task_provides_its_functions(task_id):
    task = reward_tasks.TASKS[task_id]
    names = _required_callables(RewardTask)
    assert {"parse_problem", "parse_answer", "feasible", "objective", "witness_answer", "optimum_bounds"} <= set(names)
    assert all(callable(getattr(task, name)) for name in names)
    assert task.sense in ("max", "min")


@pytest.mark.parametrize("task_id", IDS)
def test_build_task_provides_sizes_and_functions(task_id):
    task = build_tasks.TASKS[task_id]
    names = _required_callables(BuildTask)
    assert {"generate", "solve", "problem_text", "check_instance"} <= set(names)
    assert all(callable(getattr(task, name)) for name in names)
    assert set(task.size_ranges) == set(SIZES)
    assert all(1 <= lo <= hi for lo, hi in task.size_ranges.values())
    kind = task.instance_type
    for method in ("to_node_link", "from_node_link", "validate", "grapharena_link"):
        assert callable(getattr(kind, method)), method
    assert isinstance(kind.n, property) and kind.GRAPHS >= 1 and kind.NODE_ATTRIBUTE in ("name", "label")


@pytest.mark.parametrize("task_id", IDS)
def test_the_two_sides_agree_on_a_built_item(task_id):
    """The builder's row passes the reward's checks, and the reward values the builder's witness at the optimum."""
    row = item_row(make_item(task_id, "small", 3, 0), "train")
    check_row(row["data_source"], row["reward_model"]["ground_truth"], row["extra_info"])
    truth = parse_ground_truth(row["reward_model"]["ground_truth"])
    assert truth.task == task_id
    assert witness_value(truth, json.loads(row["extra_info"]["witness"])) == truth.optimum


def test_unknown_ids_raise_naming_the_field_and_the_known_ids():
    for registry in (reward_tasks, build_tasks):
        with pytest.raises(ValueError, match=r"^ground_truth\.task: unknown task 'clique'; known: \['mcp'"):
            registry.task_named("clique", "ground_truth.task")
        with pytest.raises(ValueError, match="unknown task"):
            registry.task_named(["mcp"])


def test_a_task_with_a_bad_sense_is_refused():
    fields = {f.name: print for f in dataclasses.fields(RewardTask) if f.name not in ("id", "sense", "squared_quality")}
    with pytest.raises(ValueError, match="sense"):
        RewardTask(id="xyz", sense="maximise", **fields)


_TASK_ID = re.compile(r"[\"'](?:" + "|".join(IDS) + r")[\"']")


@pytest.mark.parametrize("package", ["rewards", "rlif/graphs", "rlif/data"])
def test_no_code_outside_the_task_modules_names_a_task(package):
    """A quoted task id outside ``tasks/`` is a dispatch the registries should make: adding a task must not edit it.

    GraphArena as published (``rewards/grapharena``, ``rlif/data/grapharena.py``) is exempt: it reproduces a fixed
    benchmark of ten tasks under GraphArena's own names, and a task added to rlif's registries never joins it.
    """
    offenders = [
        f"{path.relative_to(REPO)}:{n}"
        for path in sorted((REPO / package).rglob("*.py"))
        if "tasks" not in path.relative_to(REPO).parts
        and not any(part.startswith("grapharena") for part in path.relative_to(REPO).parts)
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if _TASK_ID.search(line)
    ]
    assert offenders == []
