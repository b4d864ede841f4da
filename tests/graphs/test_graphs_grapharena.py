"""Importing GraphArena's problem sets: its text, its source, its reference answers, cross-checked."""

from __future__ import annotations

import json
import pickle

import pandas as pd
import pytest
from grapharena_files import PEOPLE, named_graph, write_problem_set

from rewards.router import check_row
from rlif.data.grapharena import FILE_TASKS, SYSTEM_PROMPT, import_rows, insert_examples, main


@pytest.mark.parametrize("task", sorted(FILE_TASKS))
def test_every_task_keeps_its_text_and_own_source(tmp_path, task):
    path = write_problem_set(tmp_path, task, "easy", 3)
    with path.open("rb") as handle:
        records = pickle.load(handle)
    rows = import_rows(path, FILE_TASKS[task], "easy")
    for k, (row, record) in enumerate(zip(rows, records, strict=True)):
        assert row["data_source"] == f"grapharena/{FILE_TASKS[task]}"
        assert row["prompt"] == [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": record["problem_text"]},
        ]
        assert row["extra_info"]["item_id"] == f"grapharena-{FILE_TASKS[task]}-easy-{k}"
        assert row["extra_info"]["difficulty"] == "easy"
        check_row(row["data_source"], row["reward_model"]["ground_truth"], row["extra_info"])
        if record.get("exact_answer") is not None:
            assert row["extra_info"]["exact_answer"] == record["exact_answer"]


def test_examples_are_inserted_as_grapharena_does():
    text = "Task.\n\n**Problem to Solve**\n\n- x"
    examples = [f"e{k}" for k in range(100)]
    assert insert_examples(text, examples, 99, 2) == (
        "Task.\n\n**Example 1**\n\ne0\n\n**Example 2**\n\ne99\n\n**Problem to Solve**\n\n- x"
    )
    assert insert_examples(text, examples, 5, 0) == text
    with pytest.raises(ValueError, match="marker"):
        insert_examples("no marker", examples, 0, 1)


def test_cli_reads_task_and_difficulty_from_the_name_and_inserts_one_example(tmp_path):
    path = write_problem_set(tmp_path, "Neighbor", "hard", 2)
    out_dir = tmp_path / "out"
    assert main([str(path), "--out-dir", str(out_dir)]) == 0
    rows = pd.read_parquet(out_dir / "grapharena_neighbor_hard.parquet").to_dict("records")
    assert "**Example 1**\n\nexample 1 of Neighbor: [A]\n" in rows[1]["prompt"][1]["content"]
    assert {row["data_source"] for row in rows} == {"grapharena/neighbor"}


def test_missing_examples_file_says_how_to_go_without(tmp_path):
    path = write_problem_set(tmp_path, "MCP", "easy", 1)
    (tmp_path / "MCP_examples.pkl").unlink()
    with pytest.raises(ValueError, match="--examples 0"):
        main([str(path), "--out-dir", str(tmp_path / "out")])
    assert main([str(path), "--examples", "0", "--out-dir", str(tmp_path / "out")]) == 0


def test_wrong_exact_answer_is_reported_with_file_and_record(tmp_path):
    import random

    graph = named_graph(random.Random(0), 5, 0.5)
    path = tmp_path / "Connected_easy.pkl"
    records = [{"graph": graph, "problem_text": "t", "exact_answer": 99}]
    path.write_bytes(pickle.dumps(records))
    with pytest.raises(ValueError, match=r"Connected_easy.pkl: record 0: exact_answer 99 != exact optimum"):
        import_rows(path, "connected", "easy")


def test_json_records_and_bad_records(tmp_path):
    data = {
        "nodes": [{"id": 7, "name": PEOPLE[0]}, {"id": 3, "name": PEOPLE[1]}],
        "links": [{"source": 7, "target": 3}],
    }
    path = tmp_path / "Distance_easy.json"
    path.write_text(json.dumps([{"graph": json.dumps(data), "problem_text": "t", "source": 7, "target": 3}]))
    [row] = import_rows(path, "distance", "easy")
    truth = json.loads(row["reward_model"]["ground_truth"])
    assert (truth["source"], truth["target"], truth["answer"]) == (0, 1, 1)
    path.write_text(json.dumps([{"graph": data, "problem_text": "t", "source": 7, "target": 99}]))
    with pytest.raises(ValueError, match="record 0: target 99 is not a node"):
        import_rows(path, "distance", "easy")
    path.write_text(json.dumps([{"graph": data}]))
    with pytest.raises(ValueError, match="'problem_text'"):
        import_rows(path, "distance", "easy")
