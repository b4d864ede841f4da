"""verl rows for graph items: the parquet schema shared by the builder and the GraphArena importer.

One row per instance, verl's RL dataset layout (made by ``rlif.data.rows.verl_row``)::

    data_source   "graph/<task>"
    prompt        [{"role": "user", "content": <answer rules + problem>}]
    ability       the graph family's (``graph_reasoning``)
    reward_model  {"style": "rule", "ground_truth": <canonical JSON of {"task", "graph", "optimum"}>}
    extra_info    {"split", "index", "item_id", "task", "difficulty", "size", "level", "exact_answer",
                   "instance", "optimum", "witness"}

``index`` and ``level`` depend on the whole data set (file position, curriculum rank), so ``item_row`` leaves
them unset (-1) and the builder fills them in when it writes the files.

``instance`` (the ground truth's node-link ``graph``, as a canonical JSON string) and ``optimum`` repeat what the
ground truth holds, so analysis and samplers can read a row's instance and optimum from ``extra_info`` alone; the
reward reads only ``reward_model.ground_truth``. ``instance`` is a string, not a nested struct, because the
instance shapes differ per task (one graph, or a list of two for GED/MCS) and parquet needs one column type per
file. ``exact_answer`` (NPG-Muse's name) equals ``optimum``.

``witness`` is the solver's solution attaining the optimum, as a canonical JSON string (node ids for MCP/MIS/MVC,
a closed tour of ids for TSP, the atom mapping for GED, ``[atom of A, atom of B]`` pairs for MCS; one string
column for all tasks). Validation runs it through the reward's answer checks (``rewards.graph.checks``), so a
stored optimum that is unreachable, or beaten by its own witness, is caught without solving again.
"""

from __future__ import annotations

from typing import Any

from rewards import family_named
from rewards.canonical import canonical_json
from rlif.data.rows import verl_row
from rlif.graphs.items import SolvedItem
from rlif.graphs.truth import difficulty, ground_truth_json, to_node_link

(GRAPH_PREFIX,) = family_named("graph").prefixes
"""``data_source`` prefix of graph rows (``graph/``), as the graph reward family declares it."""


def data_source(task: str) -> str:
    """The row's ``data_source`` for a task (``graph/tsp``, ...): the graph family's prefix and the task id."""
    return GRAPH_PREFIX + task


def witness_json(witness: tuple) -> str:
    """The solver's witness as canonical JSON: tuples become lists, numpy-style integers plain ints."""

    def plain(value: object) -> object:
        return [plain(v) for v in value] if isinstance(value, tuple | list) else int(value)  # type: ignore[call-overload]

    return canonical_json(plain(witness))


def item_row(item: SolvedItem, split: str) -> dict[str, Any]:
    """The verl row of one solved item, with ``index`` and ``level`` still unset (-1).

    Raises:
        ValueError: ``split`` is not ``train`` or ``val``, or the item's instance or optimum is invalid.
    """
    if split not in ("train", "val"):
        raise ValueError(f"split: expected 'train' or 'val', got {split!r}")
    ground_truth = ground_truth_json(item.task, item.instance, item.optimum)
    extra_info = {
        "split": split,
        "index": -1,
        "item_id": item.item_id,
        "task": item.task,
        "difficulty": difficulty(item.instance),
        "size": item.size,
        "level": -1,
        "exact_answer": item.optimum,
        "instance": canonical_json(to_node_link(item.task, item.instance)),
        "optimum": item.optimum,
        "witness": witness_json(item.witness),
    }
    return verl_row(data_source(item.task), item.prompt, ground_truth, extra_info)
