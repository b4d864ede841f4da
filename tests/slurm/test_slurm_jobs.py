"""Generated jobs on the local two-node Slurm: the log of a job submitted from elsewhere, one run one job, and the
judge server step.

The scripts, the launcher and Slurm are real; ``RLIF_PYTHON`` (the job's interpreter, a ``.env`` setting) is a small
stand-in that runs the minimal OpenAI-compatible server of ``tests/rewards/judge_server.py`` where the judge step
starts ``vllm serve``, holds the preflight until the test opens a gate (then fails it: nothing of Ray or verl starts),
and hands every other command to this interpreter. About 20 s: four jobs of a few seconds each.
"""

from __future__ import annotations

import dataclasses
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

import rewards
from rewards.judge import normalize_ground_truth
from rlif.recipes.cli import main
from rlif.recipes.generate import REPO_ROOT, write_executable
from rlif.recipes.render import LAUNCHER, render_script
from rlif.runs.matrix import load_matrix
from rlif.runs.spec import RunSpec, build_run, deep_merge
from rlif.verl_glue.overrides import build_overrides

pytestmark = pytest.mark.slow

JUDGE = "judge-test"
SMOKE = "slurm_qwen06b_think_if1000_logicif1000_grpo"
TERMINAL = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", ""}

STUB_PYTHON = """#!/bin/bash
# RLIF_PYTHON stand-in: the judge server, a preflight held at a gate, the real interpreter for the rest.
case "$*" in
    "-m vllm.entrypoints.cli.main serve "*)
        shift 2
        echo "stub judge: CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"
        case "$STUB_JUDGE" in
            die) echo "stub judge: failing at start" >&2; exit 1 ;;
            silent) exec sleep 300 ;;
        esac
        exec {python} {server} "$@" ;;
    "-m rlif.preflight job "*)
        echo "stub preflight: CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES, waiting for the gate" >&2
        while [[ ! -e "$STUB_GATE" ]]; do sleep 0.2; done
        echo "stub preflight: released" >&2
        exit 3 ;;
esac
exec {python} "$@"
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A checkout holding the launcher and the stand-in interpreter; no log/ (the generator makes it)."""
    base = tmp_path_factory.mktemp("jobs")
    root = base / "rlif"
    (root / "scripts").mkdir(parents=True)
    shutil.copy(REPO_ROOT / LAUNCHER, root / LAUNCHER)
    stub = base / "python"
    server = REPO_ROOT / "tests" / "rewards" / "judge_server.py"
    stub.write_text(STUB_PYTHON.format(python=sys.executable, server=server), encoding="utf-8")
    stub.chmod(0o755)
    elsewhere = base / "elsewhere"
    elsewhere.mkdir()
    return {"root": root, "stub": stub, "elsewhere": elsewhere, "gate": base / "gate"}


def _judged(name: str, port: int) -> RunSpec:
    matrix = load_matrix(REPO_ROOT / "recipe" / "matrix.yaml")
    smoke = next(r for r in matrix.runs if r.stage == "smoke")
    raw = deep_merge(matrix.merged_raw(smoke.name), {"judge": {"model": JUDGE, "gpus": 1, "port": port}})
    return dataclasses.replace(build_run(raw, where="test"), name=name)


def _submit(cluster, checkout, script: Path, **env: str) -> str:
    environ = {**cluster.env, "RLIF_PYTHON": str(checkout["stub"]), "STUB_GATE": str(checkout["gate"]), **env}
    proc = subprocess.run(
        ["sbatch", "--parsable", str(script)],
        cwd=checkout["elsewhere"],
        env=environ,
        capture_output=True,
        text=True,
        timeout=20,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip().split(";")[0]


def _wait(cluster, job: str, log: Path, predicate, what: str, *, timeout: float = 60) -> str:
    deadline = time.monotonic() + timeout
    while True:
        text = log.read_text(errors="replace") if log.exists() else ""
        if predicate(text):
            return text
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}; log:\n{text[-3000:]}\n{cluster.diagnostics(job)}")
        time.sleep(0.3)


def _ended(cluster, job: str) -> bool:
    return cluster.job_field(job, "JobState") in TERMINAL


def _write(checkout: dict[str, Path], run: RunSpec) -> Path:
    script = checkout["root"] / "recipe" / "rlif" / f"{run.name}.sh"
    write_executable(script, render_script(run, build_overrides(run), root=checkout["root"]))
    return script


def test_one_run_one_job_and_its_judge_from_any_submit_directory(slurm_cluster, checkout):
    """Submitted twice from a directory without log/: both logs land in <checkout>/log and name the submit
    directory; the second job stops naming the first, which goes on with its judge server answering the URL its
    reward options name."""
    root, elsewhere = checkout["root"], checkout["elsewhere"]
    fast = ["--skip-verl-check", "--skip-preflight", "--root", str(root), "--out", str(root / "recipe" / "rlif")]
    assert main(["--run", SMOKE, *fast]) == 0  # the generator makes the log directory of the checkout
    assert (root / "log").is_dir()
    assert f"#SBATCH --output={root}/log/%x-%j.out" in (root / "recipe" / "rlif" / f"{SMOKE}.sh").read_text()
    port = _free_port()
    run = _judged("judged_once", port)
    script = _write(checkout, run)
    url = re.search(r"reward_kwargs\.judge_url=(\S+?)'?$", script.read_text(), re.M).group(1)
    assert url == f"http://127.0.0.1:{port}/v1"

    first = _submit(slurm_cluster, checkout, script, STUB_JUDGE="serve")
    first_log = root / "log" / f"{run.name}-{first}.out"
    text = _wait(slurm_cluster, first, first_log, lambda t: "waiting for the gate" in t, "the first job's preflight")
    assert f"{run.name}: runs in {root} (submitted from {elsewhere})" in text
    assert "stub judge: CUDA_VISIBLE_DEVICES=0\n" in text  # the judge's GPU ...
    assert "stub preflight: CUDA_VISIBLE_DEVICES=1,2,3,4,5,6,7," in text  # ... hidden from the later steps
    assert f"judge {JUDGE} on 1 GPU(s) of n1 at {url}" in text and re.search(r"judge ready after \d+s", text)
    assert (root / "checkpoints" / "rlif" / run.name / ".job").read_text().strip() == first

    second = _submit(slurm_cluster, checkout, script, STUB_JUDGE="serve")
    second_log = root / "log" / f"{run.name}-{second}.out"
    _wait(slurm_cluster, second, second_log, lambda t: _ended(slurm_cluster, second), "the second job to stop")
    ckpt = root / "checkpoints" / "rlif" / run.name
    errors = [line for line in second_log.read_text().splitlines() if line.startswith("error:")]
    assert errors == [
        f"error: job {first} (RUNNING) is already training {run.name} into {ckpt}; job {second} stops here: "
        f"wait for it, or scancel {first} and submit again"
    ]
    assert slurm_cluster.job_field(second, "JobState") == "FAILED"
    assert slurm_cluster.job_field(first, "JobState") == "RUNNING"
    assert (ckpt / ".job").read_text().strip() == first

    # the reward, with the options the script gives it, is answered by the job's judge server
    truth = normalize_ground_truth(
        {
            "prompt": "Write a note.",
            "hard": {"instruction_ids": ["punctuation:no_comma"], "kwargs": [{}]},
            "soft": [{"kind": "tone", "constraint": "cheerful"}],
        },
        where="test",
    )
    scored = rewards.compute_score(
        "judge/demo", "Hello!", truth, None, judge_url=url, judge_model=JUDGE, judge_timeout_s=5.0, judge_cache_size=0
    )
    assert scored["judge_no_verdict"] == 0.0 and scored["score"] == pytest.approx(0.8)

    checkout["gate"].touch()
    text = _wait(slurm_cluster, first, first_log, lambda t: _ended(slurm_cluster, first), "the first job to end")
    assert "already training" not in text and "stub preflight: released" in text
    assert [line for line in text.splitlines() if line.startswith("error:")] == [
        "error: preflight failed on at least one node (its lines are above); nothing was started"
    ]
    with pytest.raises(OSError):  # the job's exit stopped its judge server
        urllib.request.urlopen(f"{url}/models", timeout=2)
    assert list(elsewhere.iterdir()) == []  # nothing of either job in the submit directory


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("die", "error: the judge server exited before answering (its lines are above)"),
        ("silent", "error: the judge server did not answer {url}/models within 3s"),
    ],
)
def test_a_judge_server_that_dies_or_never_answers_is_one_line(slurm_cluster, checkout, mode, message):
    port = _free_port()
    run = _judged(f"judged_{mode}", port)
    script = _write(checkout, run)
    start = time.monotonic()
    job = _submit(slurm_cluster, checkout, script, STUB_JUDGE=mode, RLIF_JUDGE_WAIT_SECONDS="3")
    log = checkout["root"] / "log" / f"{run.name}-{job}.out"
    text = _wait(slurm_cluster, job, log, lambda t: _ended(slurm_cluster, job), f"the {mode} judge job to stop")
    errors = [line for line in text.splitlines() if line.startswith("error:")]
    assert errors == [message.format(url=f"http://127.0.0.1:{port}/v1")], text
    assert "stub preflight" not in text and slurm_cluster.job_field(job, "JobState") == "FAILED"
    assert time.monotonic() - start < 30
