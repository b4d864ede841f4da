"""The one atomic writer: a reader sees the old file or the new one, and an interrupted write leaves nothing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rlif.atomic_files import atomic_write, write_lines_atomic, write_text_atomic


def test_an_interrupted_write_keeps_the_old_file_and_leaves_nothing(tmp_path: Path) -> None:
    target = write_text_atomic(tmp_path / "metrics.json", "old\n")

    def crash(partial: Path) -> None:
        partial.write_text("half")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        atomic_write(target, crash)
    assert target.read_text() == "old\n" and [p.name for p in tmp_path.iterdir()] == ["metrics.json"]


def test_lines_are_streamed_into_a_new_folder(tmp_path: Path) -> None:
    path = write_lines_atomic(tmp_path / "a" / "b" / "samples.jsonl", (f"{i}\n" for i in range(3)))
    assert path.read_text(encoding="utf-8") == "0\n1\n2\n"


def test_the_mode_follows_the_umask(tmp_path: Path) -> None:
    previous = os.umask(0o027)
    try:
        path = atomic_write(tmp_path / "x.bin", lambda partial: partial.write_bytes(b"x"))
    finally:
        os.umask(previous)
    assert oct(path.stat().st_mode & 0o777) == oct(0o640)
