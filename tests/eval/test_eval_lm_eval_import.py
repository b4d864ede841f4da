"""``python -m rlif.eval import``: lm-eval's results and ``--log_samples`` files become an evaluation folder that
keeps every repeat, names documents by ``key``, reads ``question``/``problem`` documents, and that the report reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from eval_testkit import read_jsonl, write_jsonl

from rlif.eval.cli import main
from rlif.eval.lm_eval_import import find_results, import_lm_eval, task_metrics
from rlif.report.runs import load_run

DATE = "2026-11-30T10-00-00.123456"


def _results(folder: Path) -> Path:
    document = {
        "results": {
            "tiny_math": {
                "alias": "tiny_math",
                "exact_match,first": 0.5,
                "exact_match_stderr,first": 0.25,
                "exact_match,maj": 0.25,
                "exact_match_stderr,maj": "N/A",
            },
            "ifeval": {
                "alias": "ifeval",
                "prompt_level_strict_acc,none": 1.0,
                "prompt_level_strict_acc_stderr,none": 0.0,
            },
        },
        "n-samples": {"tiny_math": {"original": 10, "effective": 4}, "ifeval": {"original": 541, "effective": 1}},
        "config": {"model": "local-chat-completions", "model_args": "model=m,base_url=http://x/v1/chat/completions"},
        "model_name": "m",
        "date": 1.0,
    }
    path = folder / "m" / f"results_{DATE}.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(document))
    return path


def _math_line(doc_id: int, filter_name: str, field: str) -> dict:
    responses = [f"answer {doc_id}.{r}" for r in range(3)]
    return {
        "doc_id": doc_id,
        "doc": {field: f"What is {doc_id}+{doc_id}?", "answer": str(2 * doc_id)},
        "target": str(2 * doc_id),
        "arguments": {"gen_args_0": {"arg_0": "[chat]", "arg_1": {"until": []}}},
        "resps": [responses],
        "filtered_resps": [responses[0]],
        "filter": filter_name,
        "metrics": ["exact_match"],
        "exact_match": float(doc_id % 2 == 0 if filter_name == "first" else doc_id == 0),
    }


@pytest.fixture
def lm_eval_output(tmp_path: Path) -> Path:
    folder = tmp_path / "lm_eval_out"
    results = _results(folder)
    lines = [_math_line(d, f, "question" if d < 2 else "problem") for d in range(4) for f in ("first", "maj")]
    write_jsonl(results.with_name(f"samples_tiny_math_{DATE}.jsonl"), lines)
    ifeval = {
        "doc_id": 0,
        "doc": {"key": 1000, "prompt": "Write a haiku.", "instruction_id_list": [], "kwargs": []},
        "target": "0",
        "resps": [["a haiku"]],
        "filtered_resps": ["a haiku"],
        "filter": "none",
        "metrics": ["prompt_level_strict_acc"],
        "prompt_level_strict_acc": True,
    }
    write_jsonl(results.with_name(f"samples_ifeval_{DATE}.jsonl"), [ifeval])
    return folder


def test_every_repeat_is_a_sample_and_documents_keep_their_key(lm_eval_output: Path, tmp_path: Path) -> None:
    out = tmp_path / "eval" / "imported"
    metrics = import_lm_eval(lm_eval_output, out)
    samples = read_jsonl(out / "samples.jsonl")
    math = [s for s in samples if s["data_source"] == "lm_eval/tiny_math"]
    assert len(math) == 12  # 3 repeats of 4 documents, each logged once per filter
    assert [(s["id"], s["sample"]) for s in math] == [(str(d), r) for d in range(4) for r in range(3)]
    assert math[4]["response"] == "answer 1.1" and math[4]["prompt"] == "What is 1+1?"
    assert math[10]["prompt"] == "What is 3+3?"  # a `problem` document
    assert math[0]["filtered"] == {"first": ["answer 0.0"], "maj": ["answer 0.0"]}
    assert math[2]["exact_match/first"] == 1.0 and math[2]["exact_match/maj"] == 1.0
    ifeval = [s for s in samples if s["data_source"] == "lm_eval/ifeval"]
    assert [(s["id"], s["prompt"], s["response"]) for s in ifeval] == [("1000", "Write a haiku.", "a haiku")]

    source = metrics["sources"]["lm_eval/tiny_math"]
    assert (source["documents"], source["samples"]) == (4, 12)
    flat = metrics["metrics"]
    assert flat["lm_eval/tiny_math/exact_match/first"] == 0.5 and flat["lm_eval/tiny_math/exact_match/maj"] == 0.25
    interval = metrics["intervals"]["lm_eval/tiny_math/exact_match/first"]
    assert interval["n"] == 4 and interval["low"] == pytest.approx(0.5 - 1.96 * 0.25, abs=1e-3)
    assert "lm_eval/tiny_math/exact_match/maj" not in metrics["intervals"]  # lm-eval said N/A
    assert flat["lm_eval/ifeval/prompt_level_strict_acc"] == 1.0
    assert "| lm_eval/tiny_math | exact_match/first | 0.5000 |" in (out / "metrics.md").read_text()


def test_the_report_reads_the_imported_folder(lm_eval_output: Path, tmp_path: Path) -> None:
    out = tmp_path / "eval" / "qwen" / "7"
    assert main(["import", str(lm_eval_output), "--out", str(out)]) == 0
    run = load_run(f"qwen={out}")
    assert run.evals[0].step == 7
    assert run.evals[0].metrics["lm_eval/tiny_math/exact_match/first"] == 0.5


def test_results_file_given_directly_and_the_newest_is_taken(lm_eval_output: Path) -> None:
    newest = next(lm_eval_output.rglob("results_*.json"))
    older = newest.with_name("results_2026-01-01T00-00-00.json")
    older.write_text(newest.read_text())
    assert find_results(lm_eval_output) == newest
    assert find_results(older) == older


def test_task_metrics_split_values_and_stderr() -> None:
    metrics, errors = task_metrics({"alias": "t", "acc,none": 0.5, "acc_stderr,none": 0.1, "f1,strict": "N/A"})
    assert metrics == {"acc": 0.5} and errors == {"acc": 0.1}


def test_errors_name_the_problem(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["import", str(tmp_path / "missing"), "--out", str(tmp_path / "o")]) == 2
    assert "no such lm-eval results file" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["import", str(tmp_path / "empty"), "--out", str(tmp_path / "o")]) == 2
    assert "no lm-eval results_<date>.json" in capsys.readouterr().err
    bad = tmp_path / "results_x.json"
    bad.write_text("{}")
    assert main(["import", str(bad), "--out", str(tmp_path / "o")]) == 2
    assert "not an lm-eval results file" in capsys.readouterr().err


def test_a_folder_with_several_models_results_is_refused(lm_eval_output: Path) -> None:
    newest = next(lm_eval_output.rglob("results_*.json"))
    other = lm_eval_output / "another__model" / newest.name
    other.parent.mkdir()
    other.write_text(newest.read_text())
    with pytest.raises(ValueError, match=r"results of several models \(.*another__model.*\); name the model's"):
        find_results(lm_eval_output)
    assert find_results(other.parent) == other
