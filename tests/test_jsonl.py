"""``rlif.jsonl.read_json_lines``: numbered values, blank lines, and errors that name the file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlif.jsonl import read_json_lines


def test_lines_are_numbered_from_one_and_blank_lines_skipped(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(b'{"a": 1}\n\n  \r\n[2]\r\n"x"')
    assert list(read_json_lines(path)) == [(1, {"a": 1}), (4, [2]), (5, "x")]


def test_a_blank_line_is_an_error_when_not_skipped(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text('{"a": 1}\n\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"a\.jsonl: line 2: not valid JSON"):
        list(read_json_lines(path, skip_blank=False))


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"a": 1}\n{not json\n', "line 2: not valid JSON (Expecting property name"),
        (b'{"a": 1}\n{"a": "\xff"}\n', "line 2: not valid UTF-8 (byte 8 of the line)"),
    ],
)
def test_a_bad_line_names_file_and_line(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(content)
    with pytest.raises(ValueError) as info:
        list(read_json_lines(path))
    assert str(info.value).startswith(f"{path}: {message}")


def test_on_error_reports_every_bad_line_and_goes_on(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(b"nope\n1\n\xff\n2\n")
    errors: list[ValueError] = []
    assert list(read_json_lines(path, on_error=errors.append)) == [(2, 1), (4, 2)]
    assert [str(e).split(": ", 2)[1] for e in errors] == ["line 1", "line 3"]
