"""User mistakes in ``python -m rlif.eval score`` end with one line naming the file and line (or row and field)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from eval_testkit import verl_file, verl_row, write_jsonl

from rlif.eval.cli import main

TRUTH = json.dumps({"code_output": {"output": 1, "stats": {}}})


def _run(tmp_path: Path, lines: list[str], rows: list[dict] | None = None, *extra: str) -> tuple[int, str]:
    responses = tmp_path / "responses.jsonl"
    responses.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    rows = rows or [verl_row("logicif", "a", "Prompt A", TRUTH), verl_row("logicif", "b", "Prompt A", TRUTH)]
    eval_file = verl_file(tmp_path / "eval.parquet", rows)
    args = ["score", "--responses", str(responses), "--eval-file", str(eval_file), "--out", str(tmp_path / "o")]
    return main([*args, *extra]), str(responses)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"id": "zzz", "response": "x"}', "line 2: field id: no evaluation row has item_id 'zzz' (ids look like 'a')"),
        ('{"prompt": "Prompt B", "response": "x"}', "line 2: field prompt: no evaluation row has this prompt"),
        ('{"prompt": "Prompt A", "response": "x"}', "line 2: field prompt: 2 evaluation rows share this prompt (a, b)"),
        ('{"id": "a"}', "line 2: field response: must be a string, got NoneType"),
        ('{"response": "x"}', "line 2: names no evaluation row: give id"),
        ("not json", "line 2: not valid JSON"),
        ("[1, 2]", "line 2: expected a JSON object, got list"),
    ],
)
def test_a_bad_response_line_is_one_error_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture, line: str, message: str
) -> None:
    code, responses = _run(tmp_path, ['{"id": "a", "response": "fine"}', line, line])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(f"error: {responses}: {message}")
    assert err.rstrip().endswith("(and 1 more failing line)")
    assert err.count("\n") == 1
    assert not (tmp_path / "o").exists()


def test_a_bad_eval_row_names_the_file_row_and_field(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    rows = [verl_row("logicif", "a", "P", TRUTH), verl_row("logicif", "b", "Q", json.dumps({"code_output": 3}))]
    code, _ = _run(tmp_path, ['{"id": "a", "response": "x"}'], rows)
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert "eval.parquet: row 1: field reward_model.ground_truth: " in err
    rows = [verl_row("logicif", "a", "P", TRUTH), verl_row("nope", "b", "Q", TRUTH)]
    code, _ = _run(tmp_path, ['{"id": "a", "response": "x"}'], rows)
    assert code == 2 and "row 1: field reward_model.ground_truth: unknown data_source 'nope'" in capsys.readouterr().err
    rows = [verl_row("logicif", "a", "P", TRUTH), verl_row("logicif", "a", "Q", TRUTH)]
    code, _ = _run(tmp_path, ['{"id": "a", "response": "x"}'], rows)
    assert code == 2 and "row 1: field extra_info.item_id: 'a' repeats" in capsys.readouterr().err


def test_bad_reward_options_and_missing_files(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    code, _ = _run(tmp_path, ['{"id": "a", "response": "x"}'], None, "--reward-option", "graph_reward=binery")
    assert code == 2 and "graph_reward" in capsys.readouterr().err
    code, _ = _run(tmp_path, ['{"id": "a", "response": "x"}'], None, "--reward-option", "no_such_option=1")
    assert code == 2 and "unknown reward option(s) ['no_such_option']" in capsys.readouterr().err
    missing = ["--responses", str(tmp_path / "none.jsonl"), "--eval-file", str(tmp_path / "none.parquet")]
    code = main(["score", *missing, "--out", str(tmp_path / "o")])
    assert code == 2 and "none.parquet: evaluation file not found" in capsys.readouterr().err


def test_reward_options_reach_the_scorer(tmp_path: Path) -> None:
    rows = [verl_row("logicif", "a", "P", json.dumps({"code_output": {"output": 1, "stats": {"k": 1, "j": 2}}}))]
    answer = json.dumps({"output": 1, "stats": {"k": 1, "j": 0}})
    write_jsonl(tmp_path / "r.jsonl", [{"id": "a", "response": answer}])
    args = [
        "score",
        "--responses",
        str(tmp_path / "r.jsonl"),
        "--eval-file",
        str(verl_file(tmp_path / "e.parquet", rows)),
    ]
    assert main([*args, "--out", str(tmp_path / "o1")]) == 0
    assert main([*args, "--out", str(tmp_path / "o2"), "--reward-option", "logicif_partial_credit=true"]) == 0
    first = json.loads((tmp_path / "o1" / "samples.jsonl").read_text())
    second = json.loads((tmp_path / "o2" / "samples.jsonl").read_text())
    assert (first["score"], second["score"]) == (0.0, 0.75)
    assert json.loads((tmp_path / "o2" / "metrics.json").read_text())["reward_options"]["logicif_partial_credit"]


def test_invalid_utf8_in_responses_names_the_file_and_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    _, responses = _run(tmp_path, ['{"id": "a", "response": "fine"}'])
    capsys.readouterr()
    Path(responses).write_bytes(b'{"id": "a", "response": "fine"}\n{"id": "b", "response": "\xff"}\n')
    rows = [verl_row("logicif", "a", "Prompt A", TRUTH), verl_row("logicif", "b", "Prompt B", TRUTH)]
    eval_file = verl_file(tmp_path / "eval2.parquet", rows)
    code = main(["score", "--responses", responses, "--eval-file", str(eval_file), "--out", str(tmp_path / "o2")])
    assert code == 2
    assert capsys.readouterr().err.endswith(f"error: {responses}: line 2: not valid UTF-8 (byte 26 of the line)\n")


def test_out_that_is_a_file_or_unwritable_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    taken = tmp_path / "o"
    taken.write_text("my notes\n")
    code, _ = _run(tmp_path, ['{"id": "a", "response": "fine"}'])
    assert code == 2
    assert capsys.readouterr().err == (
        f"error: --out {taken}: is a file; --out names a directory for the three outputs (pick a new name)\n"
    )
    assert taken.read_text() == "my notes\n"


def test_a_full_disk_while_writing_results_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    from rlif.eval import cli

    def full(path: Path, *_: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(cli, "write_lines_atomic", full)
    code, _ = _run(tmp_path, ['{"id": "a", "response": "fine"}'])
    assert code == 1
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"error: cannot write {tmp_path / 'o' / 'samples.jsonl'}: No space left on device; free space there or "
        "pass another --out"
    )


def test_a_file_error_that_is_not_the_disk_s_names_the_file_and_its_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    from rlif.eval import cli

    def denied(path: Path, *_: object) -> None:
        raise OSError(errno.EACCES, "Permission denied", str(path))

    monkeypatch.setattr(cli, "write_lines_atomic", denied)
    code, _ = _run(tmp_path, ['{"id": "a", "response": "fine"}'])
    assert code == 1
    assert capsys.readouterr().err.splitlines()[-1] == f"error: {tmp_path / 'o' / 'samples.jsonl'}: Permission denied"
