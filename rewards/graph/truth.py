"""Read and validate a graph row's ground truth once, into the lookup tables the answer checks need.

A row's ``reward_model.ground_truth`` is the JSON ``{"task", "graph", "optimum"}`` written by ``rlif/graphs``
(networkx node-link data, see ``docs/np-graph-rewards.md``). verl scores 8-16 responses per prompt, so the parsed
form is cached on the exact string. Anything that cannot be scored raises ``ValueError`` naming the field, so bad
data fails when the data set is built (``check_ground_truth``), not as a silent zero during training.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from rewards.canonical import canonical_form
from rewards.graph.instances import get
from rewards.graph.task import GraphTask
from rewards.graph.tasks import TASKS, task_named

CACHE_SIZE = 1024
"""Parsed ground truths kept per process: a verl batch holds at most a few hundred distinct prompts."""


@dataclass(frozen=True)
class GraphTruth:
    """A parsed ground truth.

    Attributes:
        task: a task id of ``rewards.graph.tasks.TASKS``.
        problem: the instance in the form the task's answer checks read (its ``parse_problem``).
        optimum: the exact optimal objective value.
    """

    task: str
    problem: Any
    optimum: int

    @property
    def spec(self) -> GraphTask:
        """The task's registry entry."""
        return TASKS[self.task]

    @property
    def maximise(self) -> bool:
        """Whether a bigger objective is better."""
        return self.spec.maximise


def check_ground_truth(ground_truth: str, extra_info: Mapping[str, Any] | None = None) -> None:
    """Build-time check that a graph row can be scored (the family's ``check_ground_truth``).

    Args:
        ground_truth: the row's ``reward_model.ground_truth``.
        extra_info: the row's ``extra_info``; scoring does not read it, but when it carries ``task``,
            ``exact_answer``, ``optimum`` or ``instance`` (node-link JSON, as ``rlif.data.graph_rows`` writes) they must
            agree with the ground truth, so analysis that reads ``extra_info`` sees what the reward scores. A
            ``witness`` (the solver's solution as JSON, see ``checks.witness_value``) must be feasible and reach the
            optimum exactly: a witness that beats it proves the stored optimum wrong (the reward would pay 1.0 for
            a suboptimal answer), one that falls short proves nothing and is as wrong.

    Raises:
        ValueError: malformed JSON, unknown task, bad ids/names/weights/labels, an optimum that no solution of
            this instance can have, ``extra_info`` disagreeing with the ground truth, or a witness that is not a
            feasible solution of exactly the stored optimum.
    """
    truth = parse_ground_truth(ground_truth)
    if extra_info is None:
        return
    if "task" in extra_info and extra_info["task"] != truth.task:
        raise ValueError(f"extra_info.task: {extra_info['task']!r} but the ground truth is a {truth.task!r} instance")
    for key in ("exact_answer", "optimum"):
        if key in extra_info and extra_info[key] != truth.optimum:
            raise ValueError(f"extra_info.{key}: {extra_info[key]!r} but the optimum is {truth.optimum}")
    if "instance" in extra_info:
        instance = extra_info["instance"]
        try:
            same = isinstance(instance, str) and json.loads(instance) == json.loads(ground_truth)["graph"]
        except ValueError:
            same = False
        if not same:
            raise ValueError("extra_info.instance: not the ground truth's graph as a node-link JSON string")
    if "witness" in extra_info:
        _check_witness(truth, extra_info["witness"])


def _check_witness(truth: GraphTruth, witness_json: Any) -> None:
    """Judge the stored solution with the answer checks; its value must equal the stored optimum."""
    from rewards.graph.checks import witness_value  # checks imports this module

    try:
        witness = json.loads(witness_json) if isinstance(witness_json, str) else None
    except ValueError:
        witness = None
    value = None if witness is None else witness_value(truth, witness)
    if value is None:
        raise ValueError(f"extra_info.witness: not a feasible {truth.task} solution of this instance")
    if value != truth.optimum:
        better = value > truth.optimum if truth.maximise else value < truth.optimum
        if better:
            raise ValueError(
                f"optimum: stored {truth.optimum}, but extra_info.witness is a feasible {truth.task} solution "
                f"of value {value}: the stored optimum is wrong"
            )
        raise ValueError(f"extra_info.witness: value {value}, not the stored optimum {truth.optimum}")


def normalize_ground_truth(raw: str | Mapping[str, Any], *, where: str) -> str:
    """The canonical string of a graph ground truth given as JSON text or as its ``{"task", "graph", "optimum"}``
    mapping (the family's normaliser); ``rlif.graphs`` writes this form already.

    Raises:
        ValueError: not JSON, or a ground truth ``parse_ground_truth`` rejects; the message starts with ``where``.
    """
    return canonical_form(raw, where=where, check=parse_ground_truth)


def parse_ground_truth(ground_truth: str) -> GraphTruth:
    """Parse and validate ``ground_truth`` (cached on the exact string).

    Raises:
        ValueError: see ``check_ground_truth``.
    """
    if not isinstance(ground_truth, str):
        raise ValueError(f"ground_truth: expected a JSON string, got {type(ground_truth).__name__}")
    return _parse_cached(ground_truth)


@lru_cache(maxsize=CACHE_SIZE)
def _parse_cached(text: str) -> GraphTruth:
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"ground_truth: not valid JSON ({exc})") from exc
    if not isinstance(obj, dict):
        raise ValueError("ground_truth: expected a JSON object")
    task = task_named(get(obj, "task", "ground_truth"), "ground_truth.task")
    optimum = get(obj, "optimum", "ground_truth")
    if isinstance(optimum, bool) or not isinstance(optimum, int):
        raise ValueError(f"ground_truth.optimum: expected an int, got {optimum!r}")
    problem = task.parse_problem(get(obj, "graph", "ground_truth"), "ground_truth.graph")
    truth = GraphTruth(task=task.id, problem=problem, optimum=optimum)
    _check_optimum(truth)
    return truth


def _check_optimum(truth: GraphTruth) -> None:
    """Reject an optimum that no solution of the instance can reach (cheap necessary conditions, not a solve).

    Raises:
        ValueError: the optimum is outside the bounds every solution of this instance obeys.
    """
    low, high = truth.spec.optimum_bounds(truth.problem)
    if not low <= truth.optimum <= high:
        raise ValueError(
            f"ground_truth.optimum: {truth.optimum} is impossible for this {truth.task} instance "
            f"(every solution lies in [{low}, {high}])"
        )
