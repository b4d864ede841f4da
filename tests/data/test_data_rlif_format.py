"""The group's existing data: files in RLIF's verl row format are converted (download and ``convert``) through the
mixture builder's converter, validated and put in place; what cannot be converted is rejected with file, row and
field. The Hub is replaced by a folder as in ``test_data_download.py``; the olah version is in tests/hub."""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from data_fixtures import (
    IFEVAL_FILE,
    read_first_jsonl,
    rlif_format_if_row,
    rlif_format_logicif_row,
    write_rlif_format_parquet,
)

from rlif.data import download as data_download
from rlif.data.__main__ import main as data_main
from rlif.data.convert import CONVERTED_FROM, converted_from, needs_conversion
from rlif.data.files import read_source_rows
from rlif.data.mixtures import load_rows
from rlif.hub.download import RemoteFile, git_blob_sha1
from rlif.hub_cli import data_download as data_download_cli

MIXTURE = "if4_logicif3.parquet"
EVAL = "ifbench_0_ifeval_2_logicif_2.parquet"


def rlif_mixture_rows() -> list[dict[str, Any]]:
    return [rlif_format_if_row(i) for i in range(4)] + [rlif_format_logicif_row(t, 1) for t in range(3)]


def rlif_eval_rows() -> list[dict[str, Any]]:
    """RLIF's evaluation file spells LogicIF ``logicifevalmini`` and IFEval rows ``ifeval``."""
    ifeval = []
    for i, raw in enumerate(read_first_jsonl(IFEVAL_FILE, 2)):
        truth = {"instruction_ids": raw["instruction_id_list"], "kwargs": raw["kwargs"], "prompt": raw["prompt"]}
        ifeval.append(
            {
                "data_source": "ifeval",
                "prompt": [{"role": "user", "content": raw["prompt"]}],
                "ability": "instruction_following",
                "reward_model": {"style": "rule", "ground_truth": json.dumps(truth)},
                "extra_info": {"split": "test", "index": i, "complexity_score": None},
            }
        )
    return ifeval + [rlif_format_logicif_row(9, c, source="logicifevalmini") for c in range(2)]


class FolderRepo:
    """A folder standing for one commit of a dataset repo (see ``test_data_download.FakeRepo``)."""

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
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FolderRepo:
    root = tmp_path / "repo"
    write_rlif_format_parquet(root / MIXTURE, rlif_mixture_rows())
    write_rlif_format_parquet(root / EVAL, rlif_eval_rows())
    folder = FolderRepo(root)
    monkeypatch.setattr(data_download, "resolve_files", folder.resolve_files)
    monkeypatch.setattr(data_download, "download_repo", folder.download_repo)
    return folder


def _key(row: dict[str, Any]) -> tuple:
    info = row["extra_info"]
    return (
        row["data_source"],
        row["reward_model"]["ground_truth"],
        info["item_id"],
        info["difficulty"],
        info.get("complexity_score"),
        info.get("task_id"),
    )


def test_rlif_format_download_is_converted_like_the_mixture_builder_does(
    repo: FolderRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "verl_data"
    assert needs_conversion(repo.root / MIXTURE) and needs_conversion(repo.root / EVAL)
    code = data_download_cli.main(["--repo-id", "org/rlif", "--out-dir", str(out), "--env-file", str(tmp_path / "x")])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    assert f"converted from RLIF's row format: {MIXTURE} (7 rows: iftrain=4, logicif=3)" in printed.out
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == [MIXTURE, EVAL]
    assert not (out / ".staging" / MIXTURE).exists(), "the converted original is not kept once accepted"

    mixture = list(read_source_rows(out / MIXTURE))
    # The same rows through the mixture builder's loader: identical ground truth, ids and difficulty.
    assert [_key(r) for r in mixture] == [_key(r) for r in load_rows([repo.root / MIXTURE])]
    assert [(r["extra_info"]["split"], r["extra_info"]["index"]) for r in mixture] == [("train", i) for i in range(7)]
    if_truth = json.loads(mixture[0]["reward_model"]["ground_truth"])
    assert if_truth == {  # canonical: the RLIF prompt copy dropped, null kwargs {}, 5.0 -> 5, nulls removed
        "instruction_ids": ["punctuation:no_comma", "length_constraints:number_words"],
        "kwargs": [{}, {"num_words": 5, "relation": "at least"}],
    }
    logic = [r for r in mixture if r["data_source"] == "logicif"]
    assert [r["extra_info"]["difficulty"] for r in logic] == [10.5, 11.5, 12.5]  # LogicIF difficulty = the score
    assert [r["extra_info"]["task_id"] for r in logic] == ["FIXTURE_000", "FIXTURE_001", "FIXTURE_002"]

    evaluation = list(read_source_rows(out / EVAL))
    assert [r["data_source"] for r in evaluation] == ["ifeval", "ifeval", "logicif", "logicif"]
    assert {r["extra_info"]["split"] for r in evaluation} == {"test"}
    blob = git_blob_sha1(repo.root / MIXTURE)
    assert converted_from(out / MIXTURE) == blob
    assert pq.read_schema(out / MIXTURE).metadata[CONVERTED_FROM.encode()] == blob.encode()

    # A re-run recognises the conversions of the unchanged Hub files: nothing is fetched again.
    args = ["--repo-id", "org/rlif", "--out-dir", str(out), "--env-file", str(tmp_path / "x")]
    assert data_download_cli.main(args) == 0
    assert repo.downloads == [sorted([EVAL, MIXTURE])]


def test_rlif_row_that_cannot_be_converted_is_rejected_with_file_row_and_field(
    repo: FolderRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = rlif_mixture_rows()
    rows[5]["extra_info"]["complexity_score"] = None  # a LogicIF row with no score and no function source
    write_rlif_format_parquet(repo.root / MIXTURE, rows)
    out = tmp_path / "verl_data"
    code = data_download_cli.main(["--repo-id", "org/rlif", "--out-dir", str(out), "--env-file", str(tmp_path / "x")])
    err = capsys.readouterr().err
    assert code == 1
    staged = out / ".staging" / MIXTURE
    assert f"error: {staged}: row 5: field extra_info.complexity_score: missing" in err
    assert f"kept in staging as {staged}" in err
    assert sorted(p.name for p in out.iterdir()) == [".staging"]


def test_empty_file_is_rejected_by_download_and_validate(
    repo: FolderRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_rlif_format_parquet(repo.root / MIXTURE, [])
    out = tmp_path / "verl_data"
    assert data_download_cli.main(["--repo-id", "org/rlif", "--out-dir", str(out), "--env-file", str(tmp_path / "x")])
    err = capsys.readouterr().err
    assert "0 rows (an empty data file" in err and MIXTURE in err
    assert not (out / MIXTURE).exists()


def test_convert_command(repo: FolderRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "converted"
    assert data_main(["convert", str(repo.root / MIXTURE), str(repo.root / EVAL), "--out-dir", str(out)]) == 0
    assert f"wrote {out / MIXTURE}" in capsys.readouterr().out
    assert [_key(r) for r in read_source_rows(out / MIXTURE)] == [_key(r) for r in load_rows([repo.root / MIXTURE])]
    assert data_main(["convert", str(out / MIXTURE), "--out-dir", str(tmp_path / "again")]) == 1
    assert "not in RLIF's row format" in capsys.readouterr().err
