"""The contract with the data builder: rows made by ``rlif.graphs`` pass the check, and their solver witnesses,
written as the prompt asks, score as optimal through the router."""

from __future__ import annotations

import pytest

from rewards import check_row, compute_score
from rlif.data.graph_rows import item_row
from rlif.graphs.exact import solve
from rlif.graphs.items import make_item


def witness_answer(task: str, instance, witness: tuple) -> str:
    """The solver's witness in the answer format of rlif's prompt (``rlif.graphs.prompts``)."""
    if task in ("mcp", "mis", "mvc"):
        return "[" + ", ".join(instance.names[i] for i in witness) + "]"
    if task == "tsp":
        return "[" + ", ".join(instance.codes[i] for i in witness) + "]"
    if task == "ged":
        return str(list(witness))
    return f"{[a for a, _ in witness]}, {[b for _, b in witness]}"


@pytest.mark.parametrize("task", ["mcp", "mis", "mvc", "tsp", "ged", "mcs"])
@pytest.mark.parametrize("index", range(2))
def test_builder_rows_score_their_witness_as_optimal(task, index):
    item = make_item(task, "small", 11, index)
    row = item_row(item, "train")
    ground_truth = row["reward_model"]["ground_truth"]
    check_row(row["data_source"], ground_truth, row["extra_info"])
    answer = witness_answer(task, item.instance, solve(task, item.instance).witness)
    out = compute_score(row["data_source"], f"<think>\nok\n</think>\n\n{answer}", ground_truth, row["extra_info"])
    assert out["acc"] == 1.0 and out["score"] == 1.0 and out["reward_error"] == 0
