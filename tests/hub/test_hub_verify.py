"""Download verification against the Hub's listing, staging-file cleanup, settings and model names (no server)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import time
from pathlib import Path
from typing import ClassVar

import pytest

from rlif.hub.download import RemoteFile, git_blob_sha1, remove_stale_partials, sha256_file, verify_files
from rlif.hub.models import resolve_model
from rlif.hub.settings import load_settings, redact


def test_git_blob_sha1_matches_git(tmp_path: Path) -> None:
    path = tmp_path / "w.bin"
    path.write_bytes(os.urandom(5000))
    expected = subprocess.run(["git", "hash-object", str(path)], capture_output=True, text=True, check=True).stdout
    assert git_blob_sha1(path) == expected.strip()
    assert sha256_file(path) == hashlib.sha256(path.read_bytes()).hexdigest()


def test_verify_files_reports_each_problem(tmp_path: Path) -> None:
    good, short, corrupt, lfs = (tmp_path / n for n in ("good.json", "short.bin", "corrupt.bin", "lfs.safetensors"))
    for path in (good, short, corrupt, lfs):
        path.write_bytes(b"0123456789")
    listing = [
        RemoteFile("good.json", 10, git_blob_sha1(good), None),
        RemoteFile("short.bin", 20, git_blob_sha1(short), None),
        RemoteFile("corrupt.bin", 10, "0" * 40, None),
        RemoteFile("lfs.safetensors", 10, "pointer-sha1", hashlib.sha256(b"0123456789").hexdigest()),
        RemoteFile("missing.parquet", 3, "1" * 40, None),
    ]
    verify_files(tmp_path, [listing[0], listing[3]])
    with pytest.raises(ValueError) as info:
        verify_files(tmp_path, listing)
    message = str(info.value)
    assert "short.bin: 10 bytes, expected 20" in message
    assert "corrupt.bin: content differs" in message
    assert "missing.parquet: missing" in message
    assert "good.json" not in message and "lfs.safetensors" not in message
    lfs.write_bytes(b"9876543210")
    with pytest.raises(ValueError, match=r"lfs\.safetensors: sha256 differs"):
        verify_files(tmp_path, [listing[3]])


class _RecordingBar:
    """Stands in for tqdm: records its settings and every update."""

    made: ClassVar[list[_RecordingBar]] = []

    def __init__(self, **kwargs: object) -> None:
        self.kwargs = kwargs
        self.updates: list[int] = []
        _RecordingBar.made.append(self)

    def __enter__(self) -> _RecordingBar:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def update(self, n: int) -> None:
        self.updates.append(n)


def test_verification_reports_byte_progress(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rlif.hub import download

    monkeypatch.setattr(download, "_CHUNK", 1000)
    monkeypatch.setattr(download, "tqdm", _RecordingBar)
    monkeypatch.delenv("HF_HUB_DISABLE_PROGRESS_BARS", raising=False)
    big, lfs = tmp_path / "big.bin", tmp_path / "w.safetensors"
    big.write_bytes(os.urandom(4500))
    lfs.write_bytes(os.urandom(2500))
    listing = [
        RemoteFile("big.bin", 4500, git_blob_sha1(big), None),
        RemoteFile("w.safetensors", 2500, "pointer", hashlib.sha256(lfs.read_bytes()).hexdigest()),
        RemoteFile("gone.bin", 700, "2" * 40, None),
    ]
    _RecordingBar.made.clear()
    assert download.file_problems(tmp_path, listing) == {"gone.bin": f"{tmp_path / 'gone.bin'}: missing"}
    (bar,) = _RecordingBar.made
    assert bar.kwargs["total"] == 7700 and bar.kwargs["unit"] == "B"
    assert bar.kwargs["disable"] is None  # tqdm's own rule: on for a terminal, off for pipes and logs
    assert bar.updates == [1000] * 4 + [500, 1000, 1000, 500, 700]  # chunk by chunk; a missing file is skipped
    verify_files(tmp_path, listing[:2])


def test_only_stale_staging_files_are_removed(tmp_path: Path) -> None:
    old = tmp_path / "sub" / "abc.etag.1234.incomplete"
    old.parent.mkdir()
    old.write_bytes(b"half")
    os.utime(old, (time.time() - 60, time.time() - 60))
    live = tmp_path / "def.etag.5678.incomplete"
    live.write_bytes(b"being written")
    kept = tmp_path / "abc.metadata"
    kept.write_text("x")
    assert remove_stale_partials(tmp_path, older_than=time.time() - 30) == [old]
    assert live.exists() and kept.exists()
    assert remove_stale_partials(tmp_path / "absent", older_than=time.time()) == []


def test_settings_environment_wins_and_token_is_hidden(tmp_path: Path) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text(
        "HF_TOKEN=hf_fromfile\n# comment\nHF_DATA_REPO=org/file-data\nHF_CACHE_DIR=~/cache\nHF_ENDPOINT=\n"
    )
    settings = load_settings(env_file, environ={"HF_DATA_REPO": "org/env-data", "HF_ENDPOINT": ""})
    assert settings.token == "hf_fromfile"
    assert settings.data_repo == "org/env-data"
    assert settings.cache_dir == Path("~/cache").expanduser()
    assert settings.endpoint is None
    assert "hf_fromfile" not in repr(settings)
    assert redact("Bearer hf_fromfile rejected", settings.token) == "Bearer <redacted> rejected"
    assert load_settings(tmp_path / "absent.env", environ={}).token is None


@pytest.mark.parametrize(
    ("name", "repo"),
    [
        ("0.6B", "Qwen/Qwen3-0.6B"),
        ("1.7B", "Qwen/Qwen3-1.7B"),
        ("4B", "Qwen/Qwen3-4B"),
        ("8B", "Qwen/Qwen3-8B"),
        ("Qwen/Qwen3-4B-Base", "Qwen/Qwen3-4B-Base"),
    ],
)
def test_model_names(name: str, repo: str) -> None:
    assert resolve_model(name) == repo


@pytest.mark.parametrize("bad", ["3B", "Qwen3-8B", "a/b/c", "/x"])
def test_bad_model_names(bad: str) -> None:
    with pytest.raises(ValueError, match="neither a short name"):
        resolve_model(bad)


def test_corrupted_lfs_blob_is_deleted_and_fetched_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An LFS file (sha256 listed) in the cache layout, with the client's behaviour imitated: a present snapshot link
    is trusted, and a missing link to an existing blob is re-created without downloading. Only deleting the blob
    makes it download again; the ref for the branch is recorded for offline use."""
    from rlif.hub import download
    from rlif.hub.settings import HubSettings

    good = b"weights " * 1000
    sha = hashlib.sha256(good).hexdigest()
    commit = "c" * 40
    listed = [RemoteFile("model.safetensors", len(good), "pointer-sha1", sha)]
    fetches: list[list[str]] = []

    def fake_snapshot_download(repo_id: str, *, revision: str, allow_patterns: list[str], cache_dir: Path, **_: object):
        fetches.append(list(allow_patterns))
        storage = Path(cache_dir) / "models--o--m"
        snapshot = storage / "snapshots" / revision
        for path in allow_patterns:
            link, blob = snapshot / path, storage / "blobs" / sha
            if link.exists():
                continue
            if not blob.exists():
                blob.parent.mkdir(parents=True, exist_ok=True)
                blob.write_bytes(good)
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(os.path.relpath(blob, link.parent))
        return str(snapshot)

    monkeypatch.setattr(download, "resolve_files", lambda *a, **k: (commit, listed))
    monkeypatch.setattr(download, "snapshot_download", fake_snapshot_download)
    cache = tmp_path / "cache"
    first = download.download_repo("o/m", repo_type="model", settings=HubSettings(), cache_dir=cache)
    assert (first.ref, first.repaired) == ("main", ())
    assert (cache / "models--o--m" / "refs" / "main").read_text() == commit
    blob = cache / "models--o--m" / "blobs" / sha
    blob.write_bytes(good[:-1] + b"X")  # same size, wrong sha256
    again = download.download_repo("o/m", repo_type="model", settings=HubSettings(), cache_dir=cache)
    link = first.root / "model.safetensors"
    assert again.repaired == (f"{link}: sha256 differs from the Hub's; fetched again",)
    assert fetches[-1] == ["model.safetensors"] and link.read_bytes() == good
    pinned = download.download_repo("o/m", repo_type="model", settings=HubSettings(), cache_dir=cache, revision=commit)
    assert pinned.ref is None
