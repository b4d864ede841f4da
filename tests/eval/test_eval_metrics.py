"""LogicIF, graph and pass@k metrics of ``python -m rlif.eval score`` on tiny synthetic evaluation files, checked
against values computed by hand from the answers' known verdicts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from eval_testkit import verl_file, verl_row, write_jsonl

from rewards.instruction_following import normalize_ground_truth
from rlif.eval.cli import main
from rlif.eval.metrics import compute_metrics
from rlif.eval.tables import markdown_tables

PEOPLE = ["Ann", "Bob", "Cid", "Dan"]
TRIANGLE_PLUS_TAIL = [(0, 1), (1, 2), (0, 2), (2, 3)]  # max clique {Ann, Bob, Cid}


def _mcp_truth(optimum: int = 3) -> str:
    graph = {
        "directed": False,
        "multigraph": False,
        "graph": {},
        "nodes": [{"id": i, "name": name} for i, name in enumerate(PEOPLE)],
        "links": [{"source": u, "target": v} for u, v in TRIANGLE_PLUS_TAIL],
    }
    return json.dumps({"task": "mcp", "graph": graph, "optimum": optimum})


def _logicif_truth(task_id: str, case: int, output: int) -> str:
    return json.dumps(
        {"code_output": {"output": output, "stats": {"steps": 2}}, "task_id": task_id, "test_case_id": case}
    )


def _logicif_answer(output: int, steps: int = 2) -> str:
    return "Tracing.\n" + json.dumps({"output": output, "stats": {"steps": steps}})


def _score(tmp_path: Path, rows: list[dict], responses: list[dict]) -> dict:
    out = tmp_path / "out"
    code = main(
        [
            "score",
            "--responses",
            str(write_jsonl(tmp_path / "responses.jsonl", responses)),
            "--eval-file",
            str(verl_file(tmp_path / "eval.parquet", rows)),
            "--out",
            str(out),
        ]
    )
    assert code == 0
    return json.loads((out / "metrics.json").read_text(encoding="utf-8"))


def test_logicif_case_and_question_accuracy_by_difficulty(tmp_path: Path) -> None:
    rows = [
        verl_row("logicif", "f1:0", "p1", _logicif_truth("F1", 0, 1), task_id="F1", difficulty_level="easy"),
        verl_row("logicif", "f1:1", "p2", _logicif_truth("F1", 1, 2), task_id="F1", difficulty_level="easy"),
        verl_row("logicif", "f2:0", "p3", _logicif_truth("F2", 0, 3), task_id="F2", difficulty_level="hard"),
    ]
    responses = [
        {"id": "f1:0", "response": _logicif_answer(1)},  # both right
        {"id": "f1:0", "response": _logicif_answer(1, steps=5)},  # output right, stats wrong
        {"id": "f1:1", "response": _logicif_answer(2)},  # both right
        {"id": "f1:1", "response": _logicif_answer(2)},  # both right
        {"id": "f2:0", "response": _logicif_answer(9)},  # output wrong, stats right
        {"id": "f2:0", "response": "<think>never closed"},  # nothing
    ]
    metrics = _score(tmp_path, rows, responses)
    logicif = metrics["sources"]["logicif"]
    assert logicif["prompts"] == 3 and logicif["samples"] == 6 and logicif["functions"] == 2
    assert logicif["both_acc"] == pytest.approx(3 / 6)
    assert logicif["output_acc"] == pytest.approx(4 / 6)
    assert logicif["stats_acc"] == pytest.approx(4 / 6)
    # F1: case rates 1/2 and 1 -> 1/2; F2: 0 -> question-level mean 1/4.
    assert logicif["question_both_acc"] == pytest.approx(0.25)
    assert logicif["question_output_acc"] == pytest.approx(0.5)  # F1: 1 * 1, F2: 0
    easy, hard = logicif["by_difficulty"]["easy"], logicif["by_difficulty"]["hard"]
    assert easy["both_acc"] == pytest.approx(3 / 4) and easy["question_both_acc"] == pytest.approx(0.5)
    assert hard["both_acc"] == 0.0 and hard["stats_acc"] == pytest.approx(0.5)
    assert logicif["pass@k"] == {"1": pytest.approx(0.5), "2": pytest.approx(2 / 3)}  # per case: 1/2, 1, 0
    flat = metrics["metrics"]
    assert flat["logicif/question_both_acc/easy"] == pytest.approx(0.5)
    assert flat["logicif/pass@2"] == pytest.approx(2 / 3)


def test_graph_rates_by_task_and_size_class(tmp_path: Path) -> None:
    rows = [
        verl_row("graph/mcp", "mcp-s", "clique?", _mcp_truth(), size="small"),
        verl_row("graph/mcp", "mcp-l", "clique, large?", _mcp_truth(), size="large"),
    ]
    responses = [
        {"id": "mcp-s", "response": "[Ann, Bob, Cid]"},  # optimal
        {"id": "mcp-s", "response": "[Ann, Bob]"},  # feasible, quality 2/3
        {"id": "mcp-l", "response": "[Ann, Dan]"},  # infeasible: hallucination
        {"id": "mcp-l", "response": "I cannot tell."},  # missing
    ]
    metrics = _score(tmp_path, rows, responses)
    mcp = metrics["sources"]["graph/mcp"]
    assert mcp["feasible_rate"] == pytest.approx(0.5)
    assert mcp["optimal_rate"] == pytest.approx(0.25)
    assert mcp["mean_quality_ratio"] == pytest.approx((1 + 2 / 3) / 4)
    assert mcp["hallucination_rate"] == pytest.approx(0.25) and mcp["missing_rate"] == pytest.approx(0.25)
    small, large = mcp["by_size"]["small"], mcp["by_size"]["large"]
    assert (small["feasible_rate"], small["optimal_rate"]) == (1.0, 0.5)
    assert (large["feasible_rate"], large["hallucination_rate"], large["missing_rate"]) == (0.0, 0.5, 0.5)
    assert metrics["graph_mean_over_tasks"]["by_size"]["small"]["optimal_rate"] == 0.5
    assert metrics["metrics"]["graph/mcp/optimal_rate/small"] == 0.5
    assert metrics["metrics"]["graph/optimal_rate"] == pytest.approx(0.25)
    samples = [json.loads(line) for line in (tmp_path / "out" / "samples.jsonl").read_text().splitlines()]
    assert [(s["id"], s["sample"], s["size"]) for s in samples][:2] == [("mcp-s", 0, "small"), ("mcp-s", 1, "small")]
    assert samples[1]["graph_quality"] == pytest.approx(2 / 3) and "if_prompt_strict" not in samples[1]
    tables = (tmp_path / "out" / "metrics.md").read_text(encoding="utf-8")
    assert "| graph/mcp | small | 1.0000 | 0.5000 |" in tables


def test_if_per_instruction_verdicts_are_in_every_sample(tmp_path: Path) -> None:
    raw = {"instruction_id_list": ["punctuation:no_comma", "change_case:english_lowercase"], "kwargs": [{}, {}]}
    truth = normalize_ground_truth(raw, where="test")
    rows = [verl_row("ifeval", "ifeval:1", "Write a lower-case line without commas.", truth)]
    responses = [
        {"prompt": "Write a lower-case line without commas.", "response": "all lower case and no commas here"},
        {"prompt": "  Write a lower-case line without commas.\n", "response": "Upper, and a comma"},
    ]
    metrics = _score(tmp_path, rows, responses)
    ifeval = metrics["sources"]["ifeval"]
    assert ifeval["prompt_level_strict_acc"] == 0.5 and ifeval["inst_level_strict_acc"] == 0.5
    assert ifeval["per_instruction"]["punctuation:no_comma"] == {"count": 2, "strict_acc": 0.5, "loose_acc": 0.5}
    sample = json.loads((tmp_path / "out" / "samples.jsonl").read_text().splitlines()[1])
    assert sample["instructions"] == [
        {"id": "punctuation:no_comma", "strict": False, "loose": False},
        {"id": "change_case:english_lowercase", "strict": False, "loose": False},
    ]


def test_lm_eval_sample_lines_are_read_as_they_are(tmp_path: Path) -> None:
    raw = {"instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]}
    rows = [verl_row("ifeval", "ifeval:7", "No commas please.", normalize_ground_truth(raw, where="test"))]
    doc = {"key": 7, "prompt": "No commas please.", "instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]}
    lines = [
        {"doc_id": 0, "doc": doc, "resps": [["Fine then"]], "filtered_resps": ["Fine then"], "filter": "none"},
        {"doc_id": 0, "doc": doc, "resps": [["Fine, then"]], "filtered_resps": ["Fine, then"], "filter": "none"},
    ]
    ifeval = _score(tmp_path, rows, lines)["sources"]["ifeval"]
    assert ifeval["samples"] == 2 and ifeval["prompt_level_strict_acc"] == 0.5


def test_lm_eval_repeats_keys_and_question_documents_are_all_read(tmp_path: Path) -> None:
    raw = {"instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]}
    rows = [
        verl_row("ifeval", "ifeval:7", "No commas please.", normalize_ground_truth(raw, where="test")),
        verl_row("ifeval", "ifeval:8", "Still no commas.", normalize_ground_truth(raw, where="test")),
    ]
    keyed = {"key": "ifeval:7", "prompt": "a prompt text lm-eval rewrote", "kwargs": [{}]}
    asked = {"question": "Still no commas.", "kwargs": [{}]}
    lines = [
        {"doc_id": 0, "doc": keyed, "resps": [["Fine then", "Fine, then", "ok"]], "filter": "none"},
        {"doc_id": 1, "doc": asked, "resps": [["a, b", "ab"]], "filter": "none"},
    ]
    metrics = _score(tmp_path, rows, lines)
    ifeval = metrics["sources"]["ifeval"]
    assert ifeval["samples"] == 5 and ifeval["prompts"] == 2
    samples = [json.loads(line) for line in (tmp_path / "out" / "samples.jsonl").read_text().splitlines()]
    assert [(s["id"], s["sample"]) for s in samples] == [
        ("ifeval:7", 0),
        ("ifeval:7", 1),
        ("ifeval:7", 2),
        ("ifeval:8", 0),
        ("ifeval:8", 1),
    ]


def test_logicif_by_training_interval_with_truncation_beside_the_headline(tmp_path: Path) -> None:
    rows = [
        verl_row("logicif", "f1:0", "p1", _logicif_truth("F1", 0, 1), task_id="F1", training_interval=2),
        verl_row("logicif", "f2:0", "p2", _logicif_truth("F2", 0, 3), task_id="F2", training_interval=10),
    ]
    responses = [
        {"id": "f1:0", "response": _logicif_answer(1)},
        {"id": "f1:0", "response": _logicif_answer(1)},
        {"id": "f2:0", "response": _logicif_answer(3)},
        {"id": "f2:0", "response": "<think>cut"},
    ]
    metrics = _score(tmp_path, rows, responses)
    logicif = metrics["sources"]["logicif"]
    assert list(logicif["by_interval"]) == ["2", "10"]  # numeric order, not "10" < "2"
    assert logicif["by_interval"]["2"]["question_both_acc"] == 1.0
    assert logicif["by_interval"]["10"]["question_both_acc"] == pytest.approx(0.5)
    # Generated samples carry finish_reason; the last one was cut at the generation limit.
    lines = (tmp_path / "out" / "samples.jsonl").read_text(encoding="utf-8").splitlines()
    records = [{**json.loads(line), "finish_reason": "stop"} for line in lines]
    records[-1]["finish_reason"] = "length"
    recomputed = compute_metrics(records)
    logicif = recomputed["sources"]["logicif"]
    assert logicif["truncated_rate"] == pytest.approx(0.25)
    assert logicif["by_interval"]["10"]["truncated_rate"] == pytest.approx(0.5)
    table = markdown_tables(recomputed)
    assert "## logicif: accuracy by training interval" in table
    assert "| training interval | both_acc | output_acc | stats_acc | question_both_acc | truncated_rate |" in table
    assert "| all | 0.7500 | 0.7500 | 0.7500 | 0.7500 | 0.2500 |" in table
    assert "| 10 | 0.5000 | 0.5000 | 0.5000 | 0.5000 | 0.5000 |" in table
    assert "## logicif: accuracy by difficulty" not in table  # no row carries a level: no table of one "unknown"


def test_headlines_of_families_with_a_mean_over_tasks_get_their_intervals() -> None:
    """reasoning-gym's ``accuracy``, per task and over tasks, is a mean over prompts with a 95% interval."""
    records = [
        {"data_source": f"reasoning_gym/{task}", "id": str(i), "sample": s, "acc": float((i + s) % 2), "score": 0.0}
        for task in ("maze", "base_conversion")
        for i in range(12)
        for s in range(1 + i % 2)  # unequal samples per prompt: prompts weigh the same
    ]
    metrics = compute_metrics(records)
    for key in ("reasoning_gym/maze/accuracy", "reasoning_gym/accuracy"):
        assert key in metrics["intervals"], key
    flat = metrics["metrics"]
    assert flat["reasoning_gym/maze/accuracy"] == pytest.approx(flat["reasoning_gym/maze/acc"])
