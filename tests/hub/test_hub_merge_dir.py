"""Where a checkpoint's merge goes: the folder the user names, ``global_step_N/hf_merged`` when the checkpoint
folder is writable, else a folder under the user's cache, reused while the shards are unchanged."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest
from test_hub_checkpoints import make_checkpoint, write_shard

from rlif.hub import merge
from rlif.hub.checkpoints import Checkpoint
from rlif.hub.merge import MARKER, cache_merged_dir, merge_checkpoint, merged_dir_for, writable


class FakeMerger:
    """Stands in for verl's merger: writes a weights file into ``--target_dir`` and counts its calls."""

    def __init__(self) -> None:
        self.targets: list[Path] = []

    def __call__(self, command: Sequence[str]) -> subprocess.CompletedProcess:
        target = Path(command[command.index("--target_dir") + 1])
        self.targets.append(target)
        target.mkdir(parents=True)
        (target / "model.safetensors").write_bytes(b"w")
        return subprocess.CompletedProcess(command, 0, stdout="", stderr="")


@pytest.fixture
def checkpoint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Checkpoint:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return make_checkpoint(tmp_path / "store" / "my_run", 20)


def _read_only(monkeypatch: pytest.MonkeyPatch, checkpoint: Checkpoint) -> None:
    """The checkpoint folder refuses new files (a read-only store; chmod does not stop root, so the check is
    replaced for that folder only)."""
    real = merge.writable
    monkeypatch.setattr(merge, "writable", lambda d: Path(d) != checkpoint.step_dir and real(d))


def test_writable_checkpoint_merges_into_hf_merged(checkpoint: Checkpoint) -> None:
    merger = FakeMerger()
    result = merge_checkpoint(checkpoint, python="py", runner=merger)
    assert result.target_dir == checkpoint.step_dir / "hf_merged" and not result.reused
    assert not list(checkpoint.step_dir.glob(".rlif_write_check.*"))  # the probe leaves nothing behind


def test_read_only_checkpoint_merges_into_the_cache_once(
    checkpoint: Checkpoint, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _read_only(monkeypatch, checkpoint)
    merger = FakeMerger()
    first = merge_checkpoint(checkpoint, python="py", runner=merger)
    assert first.target_dir == cache_merged_dir(checkpoint) and not first.reused
    assert first.target_dir.parent == tmp_path / "cache" / "rlif" / "merged"
    assert first.target_dir.name.startswith("my_run-global_step_20-")
    assert (first.target_dir / MARKER).is_file()
    assert sorted(p.name for p in checkpoint.step_dir.iterdir()) == ["actor"]
    assert merge_checkpoint(checkpoint, python="py", runner=merger).reused
    write_shard(checkpoint.actor_dir / "model_world_size_2_rank_0.pt", b"retrained")
    assert not merge_checkpoint(checkpoint, python="py", runner=merger).reused
    assert len(merger.targets) == 2


def test_an_earlier_merge_inside_a_now_read_only_checkpoint_is_reused(
    checkpoint: Checkpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    merge_checkpoint(checkpoint, python="py", runner=FakeMerger())
    _read_only(monkeypatch, checkpoint)
    assert merged_dir_for(checkpoint) == checkpoint.step_dir / "hf_merged"
    assert merge_checkpoint(checkpoint, python="py", runner=FakeMerger()).reused


def test_merged_dir_of_the_users_choice(checkpoint: Checkpoint, tmp_path: Path) -> None:
    chosen = tmp_path / "elsewhere" / "step20"
    result = merge_checkpoint(checkpoint, target_dir=chosen, python="py", runner=FakeMerger())
    assert result.target_dir == chosen and (chosen / "model.safetensors").is_file()
    assert not (checkpoint.step_dir / "hf_merged").exists()


def test_same_run_name_in_two_stores_gets_two_cache_folders(tmp_path: Path) -> None:
    a = make_checkpoint(tmp_path / "a" / "my_run", 20)
    b = make_checkpoint(tmp_path / "b" / "my_run", 20)
    assert cache_merged_dir(a) != cache_merged_dir(b)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a chmod 555 folder")
def test_writable_sees_a_chmod_read_only_folder(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        assert not writable(folder)
    finally:
        folder.chmod(0o755)


def test_writable_on_a_missing_folder_is_false(tmp_path: Path) -> None:
    assert writable(tmp_path) and not writable(tmp_path / "missing")
