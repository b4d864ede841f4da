"""The Ray path for real: a private local Ray instance (the project venv's python) builds the same rows as local
processes for all six tasks, and the default mode (``--ray auto``) falls back to local processes when no cluster
is reachable."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

VENV_PYTHON = Path(__file__).resolve().parents[2] / ".venv" / "bin" / "python"
TASKS = ("mcp", "mis", "mvc", "tsp", "ged", "mcs")
ARGS = ["--tasks", ",".join(TASKS), "--sizes", "small", "--count", "4", "--val-per-size", "1", "--shard-size", "2"]
SHARDS = len(TASKS) * 3  # 5 items per task in shards of 2


def _run(python: str, out: Path, *extra: str, ray_tmpdir: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    env.pop("RAY_ADDRESS", None)
    if ray_tmpdir is not None:
        env["RAY_TMPDIR"] = ray_tmpdir
    return subprocess.run(
        [python, "-m", "rlif.data.graph_build", *ARGS, "--out", str(out), *extra],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        check=False,
    )


def _truths(out: Path) -> dict[str, str]:
    rows = pd.read_parquet(out / "train_mixed.parquet").to_dict("records")
    return {r["extra_info"]["item_id"]: r["reward_model"]["ground_truth"] for r in rows}


@pytest.mark.slow
@pytest.mark.skipif(not VENV_PYTHON.exists(), reason="needs the project venv with ray (/work/main/.venv)")
def test_local_ray_matches_local_processes(tmp_path):
    reference = _run(sys.executable, tmp_path / "local", "--workers", "1", "--ray", "off")
    assert reference.returncode == 0, reference.stderr
    with_ray = _run(str(VENV_PYTHON), tmp_path / "ray", "--ray", "local", "--workers", "2")
    assert with_ray.returncode == 0, with_ray.stderr
    assert _truths(tmp_path / "ray") == _truths(tmp_path / "local")
    assert "starting a private local Ray instance" in with_ray.stderr
    assert len(list((tmp_path / "ray" / "shards").rglob("*.jsonl"))) == SHARDS
    assert {r.split("-")[0] for r in _truths(tmp_path / "ray")} == set(TASKS)

    # An empty RAY_TMPDIR: no cluster recorded by ``ray start``, so the default mode (``auto``, no flag) must fall
    # back to local processes and say so, without starting Ray.
    ray_tmp = tmp_path / "ray_tmp"
    ray_tmp.mkdir()
    fallback = _run(str(VENV_PYTHON), tmp_path / "auto", "--workers", "1", ray_tmpdir=str(ray_tmp))
    assert fallback.returncode == 0, fallback.stderr
    assert "no Ray cluster reachable" in fallback.stderr and "1 local worker process(es)" in fallback.stderr
    assert not (ray_tmp / "ray").exists()  # no Ray instance was started
    assert _truths(tmp_path / "auto") == _truths(tmp_path / "local")
