"""Staged data downloads: a file reaches verl_data/ only when the whole set passed; rejected files stay in staging.

The Hub is replaced below ``rlif.data.download`` (its ``resolve_files`` and ``download_repo``) by a local folder
standing for one repo commit, so these tests run without a server; the same flow against a real local Hub (olah)
is in ``tests/hub/test_hub_download.py``.
"""

from __future__ import annotations

import copy
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from data_fixtures import if_train_fixture_row, logicif_fixture_row, write_jsonl

from rlif.data import download as data_download
from rlif.data.files import write_rows_atomic
from rlif.data.mixtures import MixtureSpec, build_eval_rows, build_mixture, load_rows
from rlif.hub.download import RemoteFile, git_blob_sha1
from rlif.hub.settings import HubSettings
from rlif.hub_cli import data_download as data_download_cli

MIXTURE = "if3_logicif2.parquet"
EVAL = "ifbench_0_ifeval_0_logicif_3.parquet"


class FakeRepo:
    """A folder standing for one commit of a dataset repo; records which files each download asked for."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.downloads: list[list[str]] = []

    def resolve_files(self, repo_id: str, **_: Any) -> tuple[str, list[RemoteFile]]:
        files = sorted(p.name for p in self.root.iterdir())
        return "c0ffee" * 6 + "abcd", [
            RemoteFile(n, (self.root / n).stat().st_size, git_blob_sha1(self.root / n), None) for n in files
        ]

    def download_repo(self, repo_id: str, *, allow_patterns: Sequence[str], local_dir: Path, **_: Any) -> None:
        self.downloads.append(sorted(allow_patterns))
        for name in allow_patterns:
            (local_dir / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(self.root / name, local_dir / name)


@pytest.fixture
def rows(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict[str, Any]]]:
    src = tmp_path_factory.mktemp("src")
    pool = load_rows(
        [
            write_jsonl(src / "if.jsonl", [if_train_fixture_row(i) for i in range(6)]),
            write_jsonl(src / "logicif.jsonl", [logicif_fixture_row(t, c) for t in range(3) for c in range(2)]),
        ]
    )
    eval_rows = build_eval_rows(logicif=[write_jsonl(src / "ev.jsonl", [logicif_fixture_row(9, c) for c in range(3)])])
    return {"mixture": build_mixture(MixtureSpec(3, 2, seed=0), pool), "eval": eval_rows}


def _repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: dict[str, list[dict[str, Any]]]) -> FakeRepo:
    root = tmp_path / "repo"
    for name, file_rows in files.items():
        write_rows_atomic(file_rows, root / name)
    repo = FakeRepo(root)
    monkeypatch.setattr(data_download, "resolve_files", repo.resolve_files)
    monkeypatch.setattr(data_download, "download_repo", repo.download_repo)
    return repo


def _visible(out: Path) -> list[str]:
    return sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) if out.is_dir() else []


def _download(out: Path) -> data_download.DataDownload:
    return data_download.download_data(HubSettings(), repo_id="org/data", out_dir=out)


def test_accepted_set_is_moved_into_place_and_kept_on_rerun(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rows: dict[str, list[dict[str, Any]]]
) -> None:
    repo = _repo(tmp_path, monkeypatch, {MIXTURE: rows["mixture"], EVAL: rows["eval"]})
    out = tmp_path / "verl_data"
    result = _download(out)
    assert result.accepted and result.fetched == (MIXTURE, EVAL)
    assert _visible(out) == [MIXTURE, EVAL]
    assert (out / MIXTURE).read_bytes() == (repo.root / MIXTURE).read_bytes()
    assert not list((out / ".staging").glob("*.parquet")), "accepted files leave staging"
    assert [s.path for s in result.summaries] == [out / MIXTURE, out / EVAL]
    again = _download(out)
    assert again.accepted and again.fetched == () and len(repo.downloads) == 1  # identical files are kept


def test_rejected_file_stays_in_staging_and_nothing_moves(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    rows: dict[str, list[dict[str, Any]]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    bad = copy.deepcopy(rows["mixture"])
    bad[1]["prompt"][0]["role"] = "robot"
    repo = _repo(tmp_path, monkeypatch, {MIXTURE: bad, EVAL: rows["eval"]})
    out = tmp_path / "verl_data"
    code = data_download_cli.main(["--repo-id", "org/data", "--out-dir", str(out), "--env-file", str(tmp_path / "x")])
    err = capsys.readouterr().err
    assert code == 1
    assert _visible(out) == [], "neither the bad mixture nor the eval file of the rejected set may reach verl_data"
    staged = out / ".staging" / MIXTURE
    assert staged.read_bytes() == (repo.root / MIXTURE).read_bytes()
    assert f"{staged}: row 1: field prompt[0].role: must be one of" in err
    assert f"rejected; kept in staging as {staged}" in err
    assert f"nothing was moved into {out}" in err


def test_a_bad_file_left_in_verl_data_is_moved_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rows: dict[str, list[dict[str, Any]]]
) -> None:
    """A rejected file left in verl_data/ by a tool version that did not stage is identical to the Hub's, so it is
    not downloaded again; it is still checked with the set, and moved out of verl_data/ when it fails."""
    bad = copy.deepcopy(rows["mixture"])
    bad[0]["extra_info"]["difficulty"] = -1.0
    repo = _repo(tmp_path, monkeypatch, {MIXTURE: bad})
    out = tmp_path / "verl_data"
    out.mkdir()
    shutil.copyfile(repo.root / MIXTURE, out / MIXTURE)
    result = _download(out)
    assert not result.accepted and result.fetched == () and repo.downloads == []
    (rejection,) = result.rejected
    assert rejection.path == out / ".staging" / MIXTURE and rejection.path.is_file()
    assert "row 0: field extra_info.difficulty: must be >= 0" in rejection.reason
    assert _visible(out) == []


def test_train_eval_overlap_rejects_the_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rows: dict[str, list[dict[str, Any]]]
) -> None:
    leaky = copy.deepcopy(rows["mixture"])
    leaky[0]["prompt"] = copy.deepcopy(rows["eval"][0]["prompt"])
    _repo(tmp_path, monkeypatch, {MIXTURE: leaky, EVAL: rows["eval"]})
    out = tmp_path / "verl_data"
    result = _download(out)
    assert not result.accepted and _visible(out) == []
    (rejection,) = result.rejected
    assert rejection.path == out / ".staging" / MIXTURE
    assert f"1 rows share a prompt and 0 LogicIF rows share a task_id with {EVAL}" in rejection.reason
    assert [(m.name, e.name, len(o.same_prompt)) for m, e, o in result.overlaps] == [(MIXTURE, EVAL, 1)]


def test_a_different_local_file_is_never_replaced_silently(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    rows: dict[str, list[dict[str, Any]]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A mixture the user built under the Hub file's name stops the download; --keep-local keeps it, and
    --replace-local takes the Hub's file and keeps the user's as a backup."""
    repo = _repo(tmp_path, monkeypatch, {MIXTURE: rows["mixture"]})
    out = tmp_path / "verl_data"
    write_rows_atomic(rows["mixture"][:3], out / MIXTURE)
    mine = (out / MIXTURE).read_bytes()
    args = ["--repo-id", "org/data", "--out-dir", str(out), "--env-file", str(tmp_path / "x")]
    assert data_download_cli.main(args) == 1
    err = capsys.readouterr().err
    assert err.splitlines()[0] == (
        f"error: {out / MIXTURE} differs from org/data@{'c0ffee' * 2}:{MIXTURE} (a file built here, or an earlier "
        "download the Hub has since changed); nothing was downloaded"
    )
    assert "pass --replace-local to take the Hub's files" in err and "--keep-local" in err
    assert (out / MIXTURE).read_bytes() == mine and repo.downloads == []

    assert data_download_cli.main([*args, "--keep-local"]) == 0
    assert (out / MIXTURE).read_bytes() == mine and repo.downloads == []

    assert data_download_cli.main([*args, "--replace-local"]) == 0
    printed = capsys.readouterr().out
    assert (out / MIXTURE).read_bytes() == (repo.root / MIXTURE).read_bytes()
    (backup,) = out.glob(f"{MIXTURE}.*.bak")
    assert backup.read_bytes() == mine
    assert f"the old one is {backup}" in printed


def test_a_file_missing_its_ability_column_is_named_as_such(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rows: dict[str, list[dict[str, Any]]]
) -> None:
    """rlif's own file without one column is validated (the message names the column), not taken for RLIF's
    format, converted, and blamed on its rows' ground truth."""
    import pyarrow.parquet as pq

    repo = _repo(tmp_path, monkeypatch, {MIXTURE: rows["mixture"]})
    table = pq.read_table(repo.root / MIXTURE)
    pq.write_table(table.drop_columns(["ability"]), repo.root / MIXTURE)
    result = _download(tmp_path / "verl_data")
    (rejection,) = result.rejected
    assert result.conversions == ()
    assert rejection.reason.startswith(f"{rejection.path}: column ability missing (found ")


def test_a_full_disk_during_conversion_is_one_line_about_the_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import errno

    from rlif.data import convert

    def full(*_: Any, **__: Any) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(convert, "write_rows_atomic", full)
    source = tmp_path / "rlif.parquet"
    monkeypatch.setattr(convert, "read_source_rows", lambda _: iter([]))
    with pytest.raises(ValueError, match="0 rows"):  # an empty file is the data's fault
        convert.convert_rlif_file(source, tmp_path / "out.parquet", split="train", source_id="x")
    monkeypatch.setattr(convert, "convert_row", lambda raw, where: raw)
    monkeypatch.setattr(
        convert, "read_source_rows", lambda _: iter([{"extra_info": {"item_id": "a"}, "data_source": "ifeval"}])
    )
    with pytest.raises(OSError) as info:
        convert.convert_rlif_file(source, tmp_path / "out.parquet", split="train", source_id="x")
    assert str(info.value) == (
        f"{tmp_path / 'out.parquet'}: cannot write the converted file ([Errno 28] No space left on device); free "
        "space there (or pass another --out-dir) and run again: downloaded files stay in staging and are not "
        "fetched twice"
    )
