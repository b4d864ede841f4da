"""Conversion of every accepted upstream format into rlif rows, and its errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from data_fixtures import IFBENCH_FILE, IFEVAL_FILE, if_train_fixture_row, logicif_fixture_row

from rewards import check_row
from rlif.data.files import read_source_rows, write_rows_atomic
from rlif.data.logicif_complexity import complexity_extra_info
from rlif.data.mixtures import load_rows
from rlif.data.schema import validate_parquet
from rlif.data.sources import convert_row, prompt_key


def test_real_ifeval_row() -> None:
    raw = next(read_source_rows(IFEVAL_FILE))
    row = convert_row(raw, where="ifeval.jsonl: row 0", benchmark="ifeval")
    assert row["data_source"] == "ifeval"
    assert row["extra_info"]["item_id"] == f"ifeval:{raw['key']}"
    assert row["prompt"] == [{"role": "user", "content": raw["prompt"]}]
    truth = json.loads(row["reward_model"]["ground_truth"])
    assert truth["instruction_ids"] == raw["instruction_id_list"]
    check_row(row["data_source"], row["reward_model"]["ground_truth"], row["extra_info"])


def test_real_ifbench_rows_with_null_padded_float_kwargs() -> None:
    rows = load_rows([IFBENCH_FILE], benchmark="ifbench")
    assert len(rows) == 300
    assert len({r["extra_info"]["item_id"] for r in rows}) == 300
    by_key = {r["extra_info"]["key"]: r for r in rows}
    truth = json.loads(by_key["22"]["reward_model"]["ground_truth"])
    assert truth["kwargs"] == [{"N": 15}, {"small_n": 5}]  # nulls dropped, 15.0 -> 15


def test_open_instruct_row_drops_reference_answer() -> None:
    raw = if_train_fixture_row(7)
    raw["messages"] = [*raw["messages"], {"role": "assistant", "content": "Seven is odd"}]
    row = convert_row(raw, where="x")
    assert row["data_source"] == "iftrain"
    assert [m["role"] for m in row["prompt"]] == ["user"]
    assert row["extra_info"]["item_id"] == "iftrain:fixture-7"
    assert json.loads(row["reward_model"]["ground_truth"]) == {
        "instruction_ids": ["punctuation:no_comma"],
        "kwargs": [{}],
    }


def test_logicif_eval_row_gets_complexity_difficulty() -> None:
    row = convert_row(logicif_fixture_row(2, 5), where="x")
    assert row["data_source"] == "logicif"
    assert row["extra_info"]["item_id"] == "logicif:FIXTURE_002:5"
    assert row["extra_info"]["task_id"] == "FIXTURE_002"
    # one for + one if, nesting 2, one call (sum is not called; range is not used): 1+2 + 3*2 + 2*0 + 0.5*8
    assert row["extra_info"]["difficulty"] == pytest.approx(13.0)
    check_row(row["data_source"], row["reward_model"]["ground_truth"], row["extra_info"])


def test_logicif_rows_carry_the_full_complexity_extra_info(tmp_path: Path) -> None:
    """The curriculum fields of ``complexity_extra_info`` survive conversion, the parquet file and validation."""
    raw = logicif_fixture_row(2, 5)
    expected = complexity_extra_info(raw["function"], where="x")
    row = convert_row(raw, where="x")
    assert {k: row["extra_info"][k] for k in expected} == expected
    assert expected["complexity_score"] == pytest.approx(13.0) and expected["difficulty_level"] == "easy"
    # RLIF rows: the function source, when present, wins over a stored score and supplies the level.
    rlif = {
        "prompt": [{"role": "user", "content": "trace it"}],
        "reward_model": {"ground_truth": {"task_id": "T1", "code_output": {"output": 1, "stats": {}}}},
        "extra_info": {"complexity_score": 99.0, "function": raw["function"]},
    }
    with_source = convert_row(rlif, where="x")["extra_info"]
    assert {k: with_source[k] for k in expected} == expected
    # Without the source the stored score is kept and the level stays unknown (it needs the source's metrics).
    rlif["extra_info"] = {"complexity_score": 99.0}
    stored = convert_row(rlif, where="x")["extra_info"]
    assert (stored["complexity_score"], stored["difficulty"], stored["difficulty_level"]) == (99.0, 99.0, None)
    rlif["extra_info"] = {"complexity_score": 40.0, "difficulty_level": "hard"}
    assert convert_row(rlif, where="x")["extra_info"]["difficulty_level"] == "hard"
    path = write_rows_atomic([row, if_row := convert_row(if_train_fixture_row(1), where="y")], tmp_path / "m.parquet")
    validate_parquet(path)
    back = list(read_source_rows(path))
    assert {k: back[0]["extra_info"][k] for k in expected} == expected
    assert (back[1]["extra_info"]["complexity_score"], back[1]["extra_info"]["difficulty_level"]) == (None, None)
    assert if_row["extra_info"]["difficulty"] == 0.0


def test_rlif_rows_are_classified_by_ground_truth() -> None:
    logic = {
        "data_source": "logicif_train",
        "prompt": [{"role": "user", "content": "trace it"}],
        "ability": "logic",
        "reward_model": {
            "style": "rule",
            "ground_truth": json.dumps({"task_id": "T1", "code_output": {"output": 1, "stats": {"n": 2}}}),
        },
        "extra_info": {"complexity_score": 21.5, "index": 3},
    }
    row = convert_row(logic, where="x")
    assert (row["data_source"], row["extra_info"]["difficulty"], row["extra_info"]["task_id"]) == (
        "logicif",
        21.5,
        "T1",
    )
    if_row = {
        **logic,
        "reward_model": {
            "style": "rule",
            "ground_truth": '{"instruction_ids": ["punctuation:no_comma"], "kwargs": [null]}',
        },
    }
    converted = convert_row(if_row, where="x")
    assert converted["data_source"] == "iftrain"
    assert converted["extra_info"]["difficulty"] == 0.0
    assert convert_row(if_row, where="x")["extra_info"]["item_id"] == converted["extra_info"]["item_id"]  # stable


def test_rlif_logicif_row_without_difficulty_is_rejected() -> None:
    logic = {
        "prompt": [{"role": "user", "content": "trace it"}],
        "reward_model": {"ground_truth": {"task_id": "T1", "code_output": {"output": 1, "stats": {}}}},
    }
    with pytest.raises(ValueError, match=r"^f: row 4: field extra_info\.complexity_score: missing"):
        convert_row(logic, where="f: row 4")


@pytest.mark.parametrize(
    ("raw", "bench", "message"),
    [
        ({"foo": 1}, None, r"unrecognised row format"),
        ({"key": 1, "prompt": "p", "instruction_id_list": [], "kwargs": []}, None, r"not given as ifeval or ifbench"),
        (
            {"prompt": "p", "instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]},
            "ifeval",
            r"field key: missing",
        ),
        ({**logicif_fixture_row(1, 1), "task_id": None}, None, r"field task_id: missing"),
        ({**logicif_fixture_row(1, 1), "instruction": ""}, None, r"field instruction: must be a non-empty string"),
        ({**logicif_fixture_row(1, 1), "function": "def f(:"}, None, r"field function: "),
        ({**logicif_fixture_row(1, 1), "code_output": {"output": 1}}, None, r"field code_output"),
        (
            {**if_train_fixture_row(1), "ground_truth": "[{'instruction_id': ['nope:x'], 'kwargs': [None]}]"},
            None,
            "nope:x",
        ),
        ({**if_train_fixture_row(1), "messages": [{"role": "assistant", "content": "a"}]}, None, r"no user message"),
    ],
)
def test_malformed_rows_name_where_and_field(raw: dict, bench: str | None, message: str) -> None:
    with pytest.raises(ValueError, match=message) as info:
        convert_row(raw, where="src.jsonl: row 9", benchmark=bench)
    assert str(info.value).startswith("src.jsonl: row 9")


def test_prompt_key_ignores_whitespace_only() -> None:
    a = [{"role": "user", "content": "Write  a poem\nabout cats."}]
    b = [{"role": "user", "content": "Write a poem about cats. "}]
    c = [{"role": "user", "content": "Write a poem about dogs."}]
    assert prompt_key(a) == prompt_key(b) != prompt_key(c)


def test_jsonl_errors_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.jsonl"
    path.write_text('{"a": 1}\n\n[1, 2]\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"broken\.jsonl: line 3: expected a JSON object"):
        list(read_source_rows(path))


def test_atomic_write_leaves_nothing_when_interrupted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rlif.data import files

    def crash(table: object, where: Path) -> None:
        Path(where).write_bytes(b"PAR1 half a file")
        raise KeyboardInterrupt

    monkeypatch.setattr(files.pq, "write_table", crash)
    row = convert_row(if_train_fixture_row(1), where="x")
    with pytest.raises(KeyboardInterrupt):
        write_rows_atomic([row], tmp_path / "if1_logicif0.parquet")
    assert list(tmp_path.iterdir()) == []
