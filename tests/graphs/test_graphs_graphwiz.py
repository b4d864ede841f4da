"""GraphWiz's tasks: exact checkers against networkx, the importer, and GraphWiz's rule beside the exact one."""

from __future__ import annotations

import json
import random

import networkx as nx
import pandas as pd
import pytest
from graphwiz_files import edges_text, has_hamiltonian_path, random_graph, record, write_test_file

from rewards.graphwiz import algorithms as alg
from rewards.graphwiz import score_graphwiz
from rewards.graphwiz.exact import exact_answer
from rewards.graphwiz.problem import TASKS, parse_ground_truth, parse_question
from rewards.graphwiz.published import graphwiz_correct
from rewards.router import check_row
from rewards.thinking import split_thinking
from rlif.data.graphwiz import import_rows, main

AGREEMENT_GRAPHS = 300


@pytest.mark.parametrize("task", TASKS)
def test_exact_answers_agree_with_networkx(task):
    rng = random.Random(hash(task) % 1000)
    for _ in range(AGREEMENT_GRAPHS):
        rec, graph = record(task, rng)
        question = parse_question(task, rec["input_prompt"])
        assert question.n == graph.number_of_nodes()
        assert len(question.edges) == graph.number_of_edges()
        reference = rec["answer"].removeprefix("### ")
        if reference == "None":
            with pytest.raises(ValueError, match="no path"):
                exact_answer(question, rec["answer"])
            continue
        exact = exact_answer(question, rec["answer"])
        if task == "topology":
            (order,) = json.loads(reference)
            assert alg.is_topological_order(question.n, question.edges, order)
            assert not alg.is_topological_order(question.n, question.edges, order[::-1]) or len(order) == 1
        elif isinstance(exact, bool):
            assert exact == (reference == "Yes"), rec["input_prompt"]
        else:
            assert exact == int(reference), rec["input_prompt"]


def test_hamiltonian_search_returns_real_paths():
    rng = random.Random(7)
    for _ in range(AGREEMENT_GRAPHS):
        n = rng.randint(1, 11)
        graph = random_graph(rng, n, rng.uniform(0.1, 0.5)) if n > 1 else nx.path_graph(1)
        path = alg.hamiltonian_path(n, list(graph.edges()))
        assert (path is not None) == has_hamiltonian_path(graph)
        if path is not None:
            assert alg.is_hamiltonian_path(n, list(graph.edges()), path)


def test_hamiltonian_search_settles_test_set_sizes():
    rng = random.Random(3)
    for n, p in [(50, 0.2), (50, 0.4), (40, 0.3), (30, 0.8), (45, 0.05)]:
        graph = random_graph(rng, n, p)
        path = alg.hamiltonian_path(n, list(graph.edges()))
        if path is not None:
            assert alg.is_hamiltonian_path(n, list(graph.edges()), path)


@pytest.mark.parametrize("task", TASKS)
def test_importer_keeps_text_and_source(tmp_path, task):
    path, records = write_test_file(tmp_path, task, 5)
    rows = import_rows(path)
    for k, (row, rec) in enumerate(zip(rows, records, strict=True)):
        assert row["data_source"] == f"graphwiz/{task}"
        assert row["prompt"] == [{"role": "user", "content": rec["input_prompt"]}]
        assert row["extra_info"]["item_id"] == f"graphwiz-{task}-{k}"
        truth = row["reward_model"]["ground_truth"]
        check_row(row["data_source"], truth, row["extra_info"])
        problem = parse_ground_truth(truth)
        assert problem.answer == rec["answer"] and problem.text == rec["input_prompt"]
        # GraphWiz's own reference, written as a response, is right under both verdicts.
        scores = score_graphwiz(split_thinking(rec["answer"]), truth)
        assert scores["graphwiz_published"] == 1.0
        assert scores["acc"] == (1.0 if row["extra_info"]["reference_agrees"] or task != "hamilton" else 0.0)


def test_importer_reads_hub_style_lists_and_refuses_unreadable_questions(tmp_path):
    _, records = write_test_file(tmp_path, "cycle", 3)
    listed = tmp_path / "graphinstruct.json"
    listed.write_text(
        json.dumps([{"query": r["input_prompt"], "answer": r["answer"], "task": "cycle"} for r in records])
    )
    assert [r["data_source"] for r in import_rows(listed)] == ["graphwiz/cycle"] * 3
    bad = [dict(records[0]), dict(records[1])]
    bad[1]["input_prompt"] = bad[1]["input_prompt"].replace("the edges are: (", "the edges are: x (")
    broken = tmp_path / "cycle_test.json"
    broken.write_text("".join(json.dumps(r) + "\n" for r in bad))
    with pytest.raises(ValueError, match=r"cycle_test.json: record 1: graphwiz cycle: unexpected text"):
        import_rows(broken)
    wrong = dict(records[0], answer="### Yes" if records[0]["answer"] == "### No" else "### No")
    broken.write_text(json.dumps(wrong) + "\n")
    with pytest.raises(ValueError, match="record 0: reference answer"):
        import_rows(broken)


def test_directed_notation_is_refused_for_an_undirected_task():
    text = "Q: The nodes are numbered from 0 to 2, and the edges are: (0->1) (1->2). Is there a cycle in this graph?"
    with pytest.raises(ValueError, match=r"not of the form \(i,j\)"):
        parse_question("cycle", text)


def test_hamilton_reference_that_misses_a_path_is_kept_and_flagged(tmp_path):
    # GraphWiz's generator walks from node 0 to its first unvisited neighbour and never backtracks: here 0-1, then
    # stuck at 1, so it says No, but 1-0-2-3 is a Hamiltonian path.
    text = (
        "Q: The nodes are numbered from 0 to 3, and the edges are: (0, 1) (0, 2) (2, 3). "
        "Is there a Hamiltonian path in this graph?"
    )
    path = tmp_path / "hamilton_test.json"
    path.write_text(json.dumps({"input_prompt": text, "answer": "### No"}) + "\n")
    (row,) = import_rows(path)
    assert row["extra_info"]["reference_agrees"] is False
    truth = row["reward_model"]["ground_truth"]
    assert parse_ground_truth(truth).exact is True
    assert score_graphwiz(split_thinking("### Yes, [1, 0, 2, 3]"), truth) == {
        "score": 1.0,
        "acc": 1.0,
        "graphwiz_published": 0.0,
    }
    assert score_graphwiz(split_thinking("### Yes, [0, 1, 2, 3]"), truth)["acc"] == 0.0  # 1-2 is no edge


def test_cli_writes_one_file_per_task(tmp_path):
    files = [write_test_file(tmp_path, task, 4)[0] for task in ("flow", "topology")]
    assert main([*map(str, files), "--out-dir", str(tmp_path / "out")]) == 0
    for task in ("flow", "topology"):
        frame = pd.read_parquet(tmp_path / "out" / f"graphwiz_{task}.parquet")
        assert list(frame["data_source"]) == [f"graphwiz/{task}"] * 4


def _truth(task: str, text: str, answer: str) -> str:
    question = parse_question(task, text)
    return json.dumps({"task": task, "question": text, "answer": answer, "exact": exact_answer(question, answer)})


CONNECTIVITY = (
    "Q: The nodes are numbered from 0 to 3, and the edges are: (0, 1) (2, 3). Is there a path between node 0 and "
    "node 3?"
)
TRIANGLE_FREE = (
    "Q: The nodes are numbered from 0 to 2, weights of nodes are: [0, 4] [1, 5] [2, 6], and the edges are: (0, 1) "
    "(1, 2). What is the maximum sum of the weights of three nodes?"
)
TOPOLOGY = (
    "Q: The nodes are numbered from 0 to 2, and the edges are: (2->0) (0->1). Give one topology sorting path of "
    "this graph."
)
FLOW = (
    "Q: The nodes are numbered from 0 to 2, and the edges are: (0->1,4) (1->2,3). What is the maximum flow from "
    "node 0 to node 2?"
)

DIFFERENCES = [
    # (task, question, reference, response, exact, GraphWiz's rule, why they differ)
    ("connectivity", CONNECTIVITY, "### No", "### There is a path from node 0 to node 3.", 0.0, 1.0, "'no' in 'node'"),
    ("connectivity", CONNECTIVITY, "### No", "### Yes or no: no.", 0.0, 1.0, "first word after ### decides"),
    ("connectivity", CONNECTIVITY, "### No", "### No.", 1.0, 1.0, "agree"),
    ("triplet", TRIANGLE_FREE, "### 0", "### There is no such triplet.", 0.0, 1.0, "no number reads as 0.0"),
    ("triplet", TRIANGLE_FREE, "### 0", "### 0", 1.0, 1.0, "agree"),
    ("flow", FLOW, "### 3", "### 3 units, not 4", 0.0, 0.0, "both read the last number"),
    ("flow", FLOW, "### 3", "### 3.004", 0.0, 1.0, "GraphWiz allows 0.01"),
    ("topology", TOPOLOGY, "### [[2, 0, 1]]", "### [2, 0, 1]", 1.0, 1.0, "agree"),
    ("topology", TOPOLOGY, "### [[2, 0, 1]]", "###", 0.0, 1.0, "an empty conclusion is a substring"),
    ("topology", TOPOLOGY, "### [[2, 0, 1]]", "The order is 0, 1, 2.", 0.0, 1.0, "any piece of the reference"),
]


@pytest.mark.parametrize("case", DIFFERENCES, ids=[case[-1] for case in DIFFERENCES])
def test_graphwiz_rule_and_exact_verdict(case):
    task, text, reference, response, exact, published, _why = case
    truth = _truth(task, text, reference)
    scores = score_graphwiz(split_thinking(response), truth)
    assert (scores["acc"], scores["graphwiz_published"]) == (exact, published)
    assert graphwiz_correct(task, reference, response) == bool(published)


def test_unclosed_thinking_is_wrong_under_both():
    truth = _truth("flow", FLOW, "### 3")
    assert score_graphwiz(split_thinking("<think>### 3"), truth) == {
        "score": 0.0,
        "acc": 0.0,
        "graphwiz_published": 0.0,
    }


def test_rewards_never_import_networkx():
    import subprocess
    import sys

    code = "import sys, rewards.graphwiz, rlif; assert 'networkx' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_edge_text_forms_are_graphwiz_own():
    graph = nx.Graph([(0, 1)])
    assert edges_text(graph) == "(0, 1)"
