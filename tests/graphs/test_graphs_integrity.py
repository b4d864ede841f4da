"""Graph data integrity: stored optima re-checked by validation (witness, exact re-solve), outputs that follow the
umask, one atomic output set per build (stale level files removed), and a stopped build that leaves no workers."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import rlif.data.graph_build as build_module
from rlif.data.__main__ import main as data_main
from rlif.data.graph_build import BuildConfig, build
from rlif.data.graph_verify import resolve_sample

REPO_ROOT = Path(__file__).resolve().parents[2]


def _config(out: Path, **overrides) -> BuildConfig:
    settings = {"tasks": ("mcp", "tsp"), "count": 4, "val_per_size": 1, "levels": 2, "shard_size": 4}
    settings.update({"workers": 1, "ray": "off", **overrides})
    return BuildConfig(out=out, **settings)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("graph")
    build(_config(out))
    return out


def _tampered(built: Path, tmp_path: Path, edit) -> tuple[Path, int]:
    """A copy of train_mixed.parquet with ``edit`` applied to its first MCP row; returns the file and the row."""
    rows = pd.read_parquet(built / "train_mixed.parquet").to_dict("records")
    index = next(i for i, r in enumerate(rows) if r["extra_info"]["task"] == "mcp")
    edit(rows[index])
    path = tmp_path / "train_mixed.parquet"
    pd.DataFrame(rows).to_parquet(path, index=False)
    return path, index


def _lower_optimum(row: dict, *, witness_too: bool) -> None:
    truth = json.loads(row["reward_model"]["ground_truth"])
    truth["optimum"] -= 1
    row["reward_model"] = {**row["reward_model"], "ground_truth": json.dumps(truth)}
    info = row["extra_info"]
    info["optimum"] = info["exact_answer"] = truth["optimum"]
    if witness_too:  # a consistent but suboptimal solution, as a wrong solver would store it
        info["witness"] = json.dumps(json.loads(info["witness"])[:-1])


def test_built_files_validate_with_every_optimum_resolved(built: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = sorted(str(p) for p in built.glob("*.parquet"))
    assert data_main(["validate", *files]) == 0
    out = capsys.readouterr().out
    assert f"{built / 'train_mixed.parquet'}: re-solved 16 of 16 graph optima (seed 0)" in out


def test_optimum_below_its_witness_fails_naming_file_row_field_and_both_values(
    built: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, row = _tampered(built, tmp_path, lambda r: _lower_optimum(r, witness_too=False))
    truth = json.loads(pd.read_parquet(path).iloc[row]["reward_model"]["ground_truth"])
    assert data_main(["validate", str(path), "--resolve", "0"]) == 1
    err = capsys.readouterr().err.strip()
    assert err == (
        f"error: {path}: row {row}: field reward_model.ground_truth: optimum: stored {truth['optimum']}, but "
        f"extra_info.witness is a feasible mcp solution of value {truth['optimum'] + 1}: the stored optimum is wrong"
    )


def test_consistent_but_suboptimal_optimum_is_caught_by_the_exact_resolve(
    built: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, row = _tampered(built, tmp_path, lambda r: _lower_optimum(r, witness_too=True))
    stored = json.loads(pd.read_parquet(path).iloc[row]["reward_model"]["ground_truth"])["optimum"]
    assert data_main(["validate", str(path), "--resolve", "0"]) == 0  # the witness alone cannot see it
    capsys.readouterr()
    assert data_main(["validate", str(path)]) == 1
    assert capsys.readouterr().err.strip() == (
        f"error: {path}: row {row}: field reward_model.ground_truth.optimum: stored {stored}, but the exact mcp "
        f"optimum is {stored + 1} (re-solved)"
    )


def test_infeasible_witness_fails(built: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def break_witness(row: dict) -> None:
        row["extra_info"]["witness"] = json.dumps([0, 0])

    path, _ = _tampered(built, tmp_path, break_witness)
    assert data_main(["validate", str(path), "--resolve", "0"]) == 1
    assert "extra_info.witness: not a feasible mcp solution" in capsys.readouterr().err


def test_resolve_sample_is_seeded_and_bounded(built: Path) -> None:
    path = built / "train_mixed.parquet"
    assert resolve_sample(path, 5, seed=3).resolved == 5
    assert resolve_sample(path, 0).resolved == 0
    assert resolve_sample(path, 1000).resolved == resolve_sample(path, 1000).graph_rows == 16


def test_outputs_follow_the_umask(tmp_path: Path) -> None:
    previous = os.umask(0o022)
    try:
        build(_config(tmp_path, tasks=("mcp",), sizes=("small",)))
    finally:
        os.umask(previous)
    written = [*tmp_path.glob("*.parquet"), tmp_path / "manifest.json", *tmp_path.glob("shards/*/*.jsonl")]
    assert written and {oct(p.stat().st_mode & 0o777) for p in written} == {oct(0o644)}


def test_assembly_is_one_set_and_removes_stale_level_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    build(_config(tmp_path, levels=3))
    old_manifest = (tmp_path / "manifest.json").read_text()
    old_mixed = (tmp_path / "train_mixed.parquet").read_bytes()
    real_replace = os.replace
    moved: list[str] = []

    def killed_after_first_data_file(src, dst):
        if Path(dst).parent == tmp_path and Path(dst).suffix == ".parquet":
            if moved:
                raise KeyboardInterrupt  # the build is stopped in the middle of committing its set
            moved.append(Path(dst).name)
        return real_replace(src, dst)

    monkeypatch.setattr(build_module.os, "replace", killed_after_first_data_file)
    with pytest.raises(KeyboardInterrupt):
        build(_config(tmp_path, levels=2, seed=1))
    monkeypatch.setattr(build_module.os, "replace", real_replace)
    # A new data file landed, so the old manifest must be gone; no assembly folder is left behind.
    assert moved and (tmp_path / moved[0]).read_bytes() != old_mixed
    assert not (tmp_path / "manifest.json").exists()
    assert not list(tmp_path.glob(".assemble-*"))
    manifest = build(_config(tmp_path, levels=2, seed=1))
    assert (tmp_path / "manifest.json").read_text() != old_manifest
    on_disk = {p.name for p in tmp_path.glob("*.parquet")}
    assert on_disk == set(manifest["files"]) and "train_level_2.parquet" not in on_disk


def _children(pid: int) -> list[int]:
    """Live child processes of ``pid``, from /proc (Linux)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(stat.parent.name))
    return found


def _running(pid: int) -> bool:
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_stopping_a_build_stops_its_workers(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "rlif.data.graph_build", "--out", str(tmp_path), "--tasks", "ged", "--sizes"]
    command += ["large", "--count", "400", "--val-per-size", "0", "--shard-size", "1", "--workers", "2", "--ray", "off"]
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    for signum in (signal.SIGTERM, signal.SIGINT):
        build_process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        workers: list[int] = []
        while len(workers) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
            workers = _children(build_process.pid)
        assert len(workers) >= 2, "the pool never started"
        time.sleep(1.0)  # let them take shards
        build_process.send_signal(signum)
        _, stderr = build_process.communicate(timeout=30)
        assert build_process.returncode == 130, stderr.decode()
        assert b"stopped: finished shards are kept" in stderr and b"Traceback" not in stderr
        deadline = time.monotonic() + 10
        while any(_running(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        alive = [w for w in workers if _running(w)]
        assert not alive, f"workers left running after {signal.Signals(signum).name}: {alive}"
