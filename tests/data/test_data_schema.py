"""Schema validation: good files pass with the real reward router; every error names file, row and field."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from data_fixtures import IFEVAL_FILE, head_jsonl, logicif_fixture_row, write_jsonl

from rlif.data.files import write_rows_atomic
from rlif.data.mixtures import load_rows
from rlif.data.schema import validate_parquet, validate_row


@pytest.fixture(scope="module")
def good_rows(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("schema")
    ifeval = load_rows([head_jsonl(IFEVAL_FILE, tmp / "ifeval.jsonl", 4)], benchmark="ifeval")
    logicif = load_rows([write_jsonl(tmp / "logicif.jsonl", [logicif_fixture_row(1, c) for c in range(3)])])
    rows = ifeval + logicif
    return [{**r, "extra_info": {**r["extra_info"], "index": i}} for i, r in enumerate(rows)]


def test_valid_file_passes_with_the_reward_router(tmp_path: Path, good_rows: list[dict[str, Any]]) -> None:
    path = write_rows_atomic(good_rows, tmp_path / "good.parquet")
    summary = validate_parquet(path)
    assert summary.rows == 7
    assert summary.sources == {"ifeval": 4, "logicif": 3}
    assert summary.splits == {"train": 7}


def _set(row: dict[str, Any], dotted: str, value: Any) -> None:
    *parents, last = dotted.split(".")
    node = row
    for part in parents:
        node = node[part]
    node[last] = value


BAD_ROWS = [
    ("data_source", "nosuchsource", "data_source"),
    ("prompt", [], "prompt"),
    ("prompt", [{"role": "robot", "content": "hi"}], "prompt[0].role"),
    ("prompt", [{"role": "user", "content": "  "}], "prompt[0].content"),
    ("prompt", [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}], "prompt[1].role"),
    ("ability", "", "ability"),
    ("reward_model.style", "model", "reward_model.style"),
    ("reward_model.ground_truth", "{not json", "reward_model.ground_truth"),
    ("reward_model.ground_truth", '{"instruction_ids":["no:such_id"],"kwargs":[{}]}', "reward_model.ground_truth"),
    ("extra_info.item_id", None, "extra_info.item_id"),
    ("extra_info.split", "dev", "extra_info.split"),
    ("extra_info.difficulty", -1.0, "extra_info.difficulty"),
    ("extra_info.difficulty", float("nan"), "extra_info.difficulty"),
    ("extra_info.complexity_score", float("inf"), "extra_info.complexity_score"),
    ("extra_info.difficulty_level", "brutal", "extra_info.difficulty_level"),
]


@pytest.mark.parametrize(("field", "value", "named"), BAD_ROWS)
def test_bad_row_names_file_row_and_field(
    tmp_path: Path, good_rows: list[dict[str, Any]], field: str, value: Any, named: str
) -> None:
    rows = copy.deepcopy(good_rows)
    _set(rows[2], field, value)
    path = write_rows_atomic(rows, tmp_path / "bad.parquet")
    with pytest.raises(ValueError, match=r"bad\.parquet: row 2: field ") as info:
        validate_parquet(path)
    assert f"row 2: field {named}:" in str(info.value)


def test_logicif_ground_truth_is_checked_by_its_family(tmp_path: Path, good_rows: list[dict[str, Any]]) -> None:
    rows = copy.deepcopy(good_rows)
    rows[5]["reward_model"]["ground_truth"] = '{"code_output":{"output":1}}'  # no stats
    path = write_rows_atomic(rows, tmp_path / "bad.parquet")
    with pytest.raises(ValueError, match=r"row 5: field reward_model\.ground_truth: .*stats"):
        validate_parquet(path)


def test_duplicate_item_id_names_both_rows(tmp_path: Path, good_rows: list[dict[str, Any]]) -> None:
    rows = copy.deepcopy(good_rows)
    rows[3]["extra_info"]["item_id"] = rows[1]["extra_info"]["item_id"]
    path = write_rows_atomic(rows, tmp_path / "dup.parquet")
    with pytest.raises(ValueError, match=r"row 3: field extra_info\.item_id: .* repeats row 1"):
        validate_parquet(path)


def test_wrong_column_type_names_the_column(tmp_path: Path) -> None:
    table = pa.table(
        {
            "data_source": ["ifeval"],
            "prompt": ["a plain string instead of chat messages"],
            "ability": ["x"],
            "reward_model": [{"style": "rule", "ground_truth": "{}"}],
            "extra_info": [{"split": "train", "index": 0, "item_id": "a", "difficulty": 0.0}],
        }
    )
    pq.write_table(table, tmp_path / "typed.parquet")
    with pytest.raises(ValueError, match=r"typed\.parquet: column prompt has type string"):
        validate_parquet(tmp_path / "typed.parquet")


def test_missing_column_and_unreadable_file(tmp_path: Path) -> None:
    pq.write_table(pa.table({"data_source": ["ifeval"]}), tmp_path / "narrow.parquet")
    with pytest.raises(ValueError, match=r"narrow\.parquet: column prompt missing"):
        validate_parquet(tmp_path / "narrow.parquet")
    (tmp_path / "junk.parquet").write_bytes(b"not parquet at all")
    with pytest.raises(ValueError, match=r"junk\.parquet: not a readable parquet file"):
        validate_parquet(tmp_path / "junk.parquet")


def test_injected_checker_errors_are_wrapped(good_rows: list[dict[str, Any]]) -> None:
    def reject(source: str, ground_truth: str, extra_info: Any) -> None:
        raise ValueError("kwarg num_words missing")

    with pytest.raises(ValueError, match=r"^f\.parquet: row 0: field reward_model\.ground_truth: kwarg num_words"):
        validate_row(good_rows[0], where="f.parquet: row 0", check_ground_truth=reject)


def test_the_projects_own_demo_and_graph_files_validate(tmp_path: Path) -> None:
    """Files written by the CPU demo and the graph builder (``val`` split, graph task fields) pass validation."""
    from rlif.data.graph_build import BuildConfig, build
    from rlif.demo_assets import demo_rows

    demo = write_rows_atomic(demo_rows("val"), tmp_path / "demo_val.parquet")
    assert validate_parquet(demo).rows == len(demo_rows("val"))
    build(
        BuildConfig(out=tmp_path / "graph", tasks=("mcp", "tsp"), sizes=("small",), count=2, val_per_size=1, levels=1)
    )
    for name in ("train_mixed.parquet", "val_easy.parquet"):
        assert validate_parquet(tmp_path / "graph" / name).rows > 0
