"""The group's existing data repo, in RLIF's row format, downloaded through a real local Hub (olah on 127.0.0.1):
converted in staging, validated and moved into verl_data/; kept without a second download on a re-run."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from data_rows import rlif_format_if_row, rlif_format_logicif_row, write_rlif_format_parquet
from local_hub import git_repo, olah_server

from rlif.data.convert import converted_from
from rlif.data.files import read_source_rows
from rlif.data.mixtures import load_rows
from rlif.hub_cli import data_download as data_download_cli

pytestmark = pytest.mark.slow

MIXTURE = "if3_logicif2.parquet"
EVAL = "ifbench_0_ifeval_0_logicif_2.parquet"


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("rlif_hub")
    rows = [rlif_format_if_row(i) for i in range(3)] + [rlif_format_logicif_row(t, 0) for t in (1, 2)]
    mixture = write_rlif_format_parquet(tmp / "src" / MIXTURE, rows)
    evaluation = write_rlif_format_parquet(
        tmp / "src" / EVAL, [rlif_format_logicif_row(9, c, source="logicifevalmini") for c in range(2)]
    )
    mirrors = tmp / "mirrors"
    git_repo(
        mirrors / "datasets" / "testorg" / "rlif-format",
        {MIXTURE: mixture.read_bytes(), EVAL: evaluation.read_bytes(), "README.md": b"RLIF-format data\n"},
    )
    with olah_server(mirrors, tmp / "olah") as url:
        yield {"url": url, "mixture": mixture}


def test_rlif_format_repo_downloads_converted(
    hub: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HF_ENDPOINT", hub["url"])
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf_home"))
    for name in ("HF_TOKEN", "HF_DATA_REPO", "HF_CACHE_DIR"):
        monkeypatch.delenv(name, raising=False)
    out = tmp_path / "verl_data"
    args = ["--repo-id", "testorg/rlif-format", "--out-dir", str(out), "--env-file", str(tmp_path / "none.env")]
    assert data_download_cli.main(args) == 0, capsys.readouterr().err
    printed = capsys.readouterr().out
    assert f"converted from RLIF's row format: {MIXTURE} (5 rows: iftrain=3, logicif=2)" in printed
    assert f"converted from RLIF's row format: {EVAL} (2 rows: logicif=2)" in printed
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == [MIXTURE, EVAL]
    rows = list(read_source_rows(out / MIXTURE))
    expected = load_rows([hub["mixture"]])  # the mixture builder's conversion of the same file
    assert [r["reward_model"]["ground_truth"] for r in rows] == [r["reward_model"]["ground_truth"] for r in expected]
    assert [r["extra_info"]["difficulty"] for r in rows] == [0.0, 0.0, 0.0, 11.0, 12.0]
    assert json.loads(rows[0]["reward_model"]["ground_truth"])["instruction_ids"][0] == "punctuation:no_comma"
    assert {r["extra_info"]["split"] for r in read_source_rows(out / EVAL)} == {"test"}
    assert converted_from(out / MIXTURE)
    # A re-run keeps both conversions (they record the Hub blobs) and fetches nothing.
    assert data_download_cli.main(args) == 0
    assert "converted from" not in capsys.readouterr().out
