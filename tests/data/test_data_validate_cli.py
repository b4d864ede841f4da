"""``python -m rlif.data validate``: every unreadable or empty file is one error line naming it, no traceback, and
one bad file does not hide the others."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest
from data_fixtures import if_train_fixture_row, write_jsonl

from rlif.data.__main__ import main as data_main
from rlif.data.files import write_rows_atomic
from rlif.data.mixtures import load_rows


@pytest.fixture
def good(tmp_path: Path) -> Path:
    rows = load_rows([write_jsonl(tmp_path / "src.jsonl", [if_train_fixture_row(i) for i in range(40)])])
    return write_rows_atomic(rows, tmp_path / "if40_logicif0.parquet")


def _corrupt_page(good: Path, target: Path) -> Path:
    """The footer (schema) intact, the first page header overwritten: readable schema, unreadable rows."""
    data = bytearray(good.read_bytes())
    data[4:40] = b"\xff" * 36
    target.write_bytes(bytes(data))
    return target


def test_each_bad_file_is_one_line_naming_it(good: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corrupt = _corrupt_page(good, tmp_path / "corrupt.parquet")
    assert pq.read_schema(corrupt).names  # the footer still reads: the failure comes from the data page
    empty = write_rows_atomic([], tmp_path / "if0_logicif0.parquet")
    not_parquet = tmp_path / "notes.parquet"
    not_parquet.write_text("just text\n")
    missing = tmp_path / "missing.parquet"
    folder = tmp_path / "a_folder.parquet"
    folder.mkdir()
    code = data_main(["validate", str(good), str(corrupt), str(empty), str(not_parquet), str(missing), str(folder)])
    printed = capsys.readouterr()
    assert code == 1
    assert "if40_logicif0.parquet" in printed.out and "40" in printed.out  # the good file is still reported
    lines = printed.err.splitlines()
    assert len(lines) == 5 and "Traceback" not in printed.err
    expected = [
        (corrupt, "not a readable parquet file"),
        (empty, "0 rows (an empty data file"),
        (not_parquet, "not a readable parquet file"),
        (missing, "not a readable parquet file"),
        (folder, "not a readable parquet file"),
    ]
    for line, (path, message) in zip(lines, expected, strict=True):
        assert line.startswith(f"error: {path}: ") and message in line, line


def test_corrupt_page_in_overlap_and_mixture_sources_names_the_file(
    good: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corrupt = _corrupt_page(good, tmp_path / "corrupt.parquet")
    assert data_main(["overlap", str(corrupt), str(good)]) == 1
    assert capsys.readouterr().err.startswith(f"error: {corrupt}: not a readable parquet file")
    out = tmp_path / "out"
    assert data_main(["mixture", "if1_logicif0", "--sources", str(corrupt), "--out-dir", str(out)]) == 1
    assert f"error: {corrupt}: not a readable parquet file" in capsys.readouterr().err
    assert not out.exists() or not list(out.iterdir())


def test_help_shows_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        data_main(["validate", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "(default: 100)" in text and "(default: 0)" in text
    with pytest.raises(SystemExit):
        data_main(["mixture", "--help"])
    assert "(default: verl_data)" in " ".join(capsys.readouterr().out.split())
