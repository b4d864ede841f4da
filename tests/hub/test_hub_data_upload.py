"""``hf_upload.py data``: validate verl_data/ before anything is sent, then upload it to a private dataset repo."""

from __future__ import annotations

from pathlib import Path

import pytest
from data_rows import if_train_fixture_row, logicif_fixture_row, write_jsonl
from hub_fakes import ENDPOINT, fake_hub_transport

from rlif.data.mixtures import MixtureSpec, build_mixture, load_rows, write_mixture
from rlif.hub_cli import upload as upload_cli


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    sources = [
        write_jsonl(tmp_path / "src" / "if.jsonl", [if_train_fixture_row(i) for i in range(4)]),
        write_jsonl(tmp_path / "src" / "logicif.jsonl", [logicif_fixture_row(1, c) for c in range(3)]),
    ]
    spec = MixtureSpec(2, 2, seed=0)
    out = tmp_path / "verl_data"
    write_mixture(build_mixture(spec, load_rows(sources)), spec, out)
    (out / "README.md").write_text("rlif data\n")
    (out / ".cache" / "huggingface").mkdir(parents=True)
    (out / ".cache" / "huggingface" / "junk.parquet").write_bytes(b"client bookkeeping, never uploaded")
    (out / ".staging").mkdir()
    (out / ".staging" / "if9_logicif0.parquet").write_bytes(b"a rejected download, never uploaded")
    (out / "graph" / ".staging").mkdir(parents=True)
    (out / "graph" / ".staging" / "x.parquet").write_bytes(b"hidden at any depth")
    return out


def test_data_upload_validates_then_uploads(
    tmp_path: Path, data_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_ENDPOINT", ENDPOINT)
    monkeypatch.setenv("HF_DATA_REPO", "me/rlif-data")
    env = ["--env-file", str(tmp_path / "absent.env")]
    with fake_hub_transport() as hub:
        assert upload_cli.main([*env, "data", "--dir", str(data_dir)]) == 0
        repo = hub.repos[("dataset", "me/rlif-data")]
        assert repo.private
        assert sorted(repo.files) == ["README.md", "if2_logicif2.parquet"]
        assert repo.files["if2_logicif2.parquet"] == (data_dir / "if2_logicif2.parquet").read_bytes()
    assert "iftrain=2, logicif=2" in capsys.readouterr().out


def test_invalid_data_is_never_sent(
    tmp_path: Path, data_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_ENDPOINT", ENDPOINT)
    (data_dir / "if9_logicif9.parquet").write_bytes(b"truncated")
    with fake_hub_transport() as hub:
        code = upload_cli.main(
            ["--env-file", str(tmp_path / "absent.env"), "data", "--dir", str(data_dir), "--repo-id", "me/d"]
        )
        assert code == 1
        assert hub.requests == []
    assert "if9_logicif9.parquet: not a readable parquet file" in capsys.readouterr().err
