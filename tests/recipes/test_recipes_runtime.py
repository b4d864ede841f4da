"""A generated GPU script up to its preflight, under each RLIF_RUNTIME, with stub Slurm and Apptainer commands.

Neither pyxis nor Apptainer can run here (no packages for this machine; stock ``srun`` rejects ``--container-*``),
so stub ``srun``/``scontrol``/``apptainer`` executables log their arguments and run the payload on this host. That
proves what the script asks of each runtime (image, mounts, the named container every step of a node shares, the
checkout first on PYTHONPATH inside) and that the preflight runs on every node before Ray, failing with one line
per problem. A fake ``nvidia-smi`` reports eight H100s; the model comes from a Hub-cache fixture.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from rlif.data.files import write_rows_atomic
from rlif.demo_assets import demo_rows
from rlif.recipes.generate import REPO_ROOT
from rlif.recipes.render import LAUNCHER, render_script
from rlif.runs.matrix import load_matrix
from rlif.verl_glue.overrides import build_overrides

SMOKE = "slurm_qwen06b_think_if1000_logicif1000_grpo"
H100 = "\n".join(f"{i}, GPU-{i:04d}, NVIDIA H100 80GB HBM3, 81559, 1, 580.82.07" for i in range(8))

STUBS = {
    "srun": """#!/bin/bash
printf 'srun %s\\n' "$*" >> "$STUB_LOG"
while [[ $# -gt 0 && "$1" == -* ]]; do
    if [[ "$1" == -w ]]; then shift 2; else shift; fi
done
exec "$@"
""",
    "apptainer": """#!/bin/bash
printf 'apptainer %s\\n' "$*" >> "$STUB_LOG"
shift
while [[ "$1" == -* ]]; do
    if [[ "$1" == --nv ]]; then shift; else shift 2; fi
done
shift
exec "$@"
""",
    "scontrol": "#!/bin/bash\necho n1\n",
    "nvidia-smi": f"#!/bin/sh\ncat <<'EOF'\n{H100}\nEOF\n",
}


def _executable(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A checkout with the smoke run's script and data, a Hub cache with its model, and the stub commands."""
    base = tmp_path_factory.mktemp("runtime")
    root = base / "repo"
    (root / "scripts").mkdir(parents=True)
    shutil.copy(REPO_ROOT / LAUNCHER, root / LAUNCHER)
    run = load_matrix(REPO_ROOT / "recipe" / "matrix.yaml").select(names=[SMOKE])[0]
    script = root / "job.sh"
    script.write_text(render_script(run, build_overrides(run)), encoding="utf-8")
    rows = demo_rows("train")
    for name in (*run.train_files, *run.val_files):
        write_rows_atomic(rows, root / name)
    snapshot = base / "hub" / "models--Qwen--Qwen3-0.6B" / "snapshots" / ("a" * 40)
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}", encoding="utf-8")
    (snapshot / "model.safetensors").write_bytes(b"x")
    (snapshot / "tokenizer.json").write_text("{}", encoding="utf-8")
    (snapshot / "tokenizer_config.json").write_text('{"chat_template": "{{ messages }}"}', encoding="utf-8")
    stubs = base / "bin"
    stubs.mkdir()
    for name, text in STUBS.items():
        _executable(stubs / name, text)
    return {"root": root, "script": script, "cache": base / "hub", "stubs": stubs, "snapshot": snapshot}


def run_job(
    site: dict[str, Path], dotenv: str, tmp_path: Path, submit_dir: Path | None = None
) -> tuple[subprocess.CompletedProcess, str]:
    (site["root"] / ".env").write_text(dotenv, encoding="utf-8")
    log = tmp_path / "stub.log"
    env = {
        "PATH": f"{site['stubs']}:{os.environ['PATH']}",
        "HOME": str(tmp_path),
        "STUB_LOG": str(log),
        "SLURM_SUBMIT_DIR": str(submit_dir or site["root"]),
        "SLURM_JOB_ID": "4242",
        "SLURM_JOB_NUM_NODES": "1",
        "SLURM_JOB_NODELIST": "n1",
        "SLURM_CPUS_PER_TASK": "64",  # as Slurm sets it from the script's #SBATCH --cpus-per-task
        "RLIF_PYTHON": sys.executable,
        "PYTHONPATH": str(REPO_ROOT),
        "HF_HUB_CACHE": str(site["cache"]),
    }
    proc = subprocess.run(
        ["bash", str(site["script"])], env=env, capture_output=True, text=True, check=False, timeout=120
    )
    return proc, log.read_text(encoding="utf-8") if log.exists() else ""


@pytest.mark.parametrize("runtime", ["host", "pyxis", "apptainer"])
def test_preflight_runs_on_every_node_in_the_runtime(site, tmp_path, runtime):
    """This machine has vLLM's CPU build and no flash-attn, so the version check fails: one line each, exit 2."""
    image = {"host": "", "pyxis": "/images/rlif.sqsh", "apptainer": "/images/rlif.sif"}[runtime]
    proc, log = run_job(site, f"RLIF_RUNTIME={runtime}\nRLIF_IMAGE={image}\n", tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    errors = [line for line in proc.stderr.splitlines() if " error: " in line and line.startswith("preflight ")]
    assert any(": error: package vllm: " in line and "the recipes need 0.24.0" in line for line in errors), errors
    assert any(": error: package flash-attn: " in line for line in errors), errors
    assert not any("data" in line or "model" in line or "GPU" in line for line in errors), errors  # those passed
    assert proc.stderr.rstrip().endswith(
        "error: preflight failed on at least one node (its lines are above); nothing was started"
    )
    step = next(line for line in log.splitlines() if "rlif.preflight job" in line)
    assert step.startswith("srun --overlap --nodes=1 --ntasks-per-node=1 ")
    assert "--model Qwen/Qwen3-0.6B --data " in step and "--gpus 8 --gpu-memory-gb 80" in step
    assert "--check-versions" in step and "ray" not in log  # nothing of Ray started
    root, cache = site["root"], site["cache"]
    mounts = f"{root}:{root},{cache}:{cache}"
    if runtime == "pyxis":
        assert (
            f"--container-image={image} --container-mounts={mounts} --container-workdir={root} "
            "--no-container-mount-home --container-name=rlif_4242 env -u ROCR_VISIBLE_DEVICES" in step
        )
    else:
        assert "--container" not in log
    if runtime == "apptainer":
        assert f"apptainer exec --nv --bind {mounts} --pwd {root} {image} env -u ROCR_VISIBLE_DEVICES" in log
    else:
        assert "apptainer" not in log


def test_missing_data_on_a_node_is_one_line(site, tmp_path):
    missing = site["root"] / "verl_data" / "ifbench_300_ifeval_541_logicif_749.parquet"
    saved = missing.read_bytes()
    missing.unlink()
    try:
        proc, _ = run_job(site, "RLIF_RUNTIME=host\n", tmp_path)
    finally:
        missing.write_bytes(saved)
    assert proc.returncode == 2
    assert f": error: {missing}: no such file (download: python hf_data_download.py" in proc.stderr


@pytest.mark.parametrize(
    ("dotenv", "message"),
    [
        ("RLIF_RUNTIME=docker\n", "error: RLIF_RUNTIME=docker (.env) is not one of host, pyxis, apptainer"),
        ("RLIF_RUNTIME=pyxis\n", "error: RLIF_RUNTIME=pyxis needs RLIF_IMAGE in .env (a .sqsh/.sif file"),
    ],
)
def test_runtime_settings_are_checked_first(site, tmp_path, dotenv, message):
    proc, log = run_job(site, dotenv, tmp_path)
    assert proc.returncode == 2 and proc.stderr.startswith(message), proc.stderr
    assert log == ""  # before any step


def test_a_job_submitted_outside_the_checkout_stops_at_once(site, tmp_path):
    """sbatch runs a spool copy of the script: without the launcher under the submit directory, one line, exit 2."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc, log = run_job(site, "RLIF_RUNTIME=host\n", tmp_path, submit_dir=elsewhere)
    assert proc.returncode == 2 and log == ""
    assert proc.stderr == f"error: submit from the rlif repository root (no {elsewhere}/{LAUNCHER})\n"


def test_a_script_whose_checkout_lost_the_launcher_stops_at_once(tmp_path):
    """A script written for a checkout (its root in --chdir and RLIF_ROOT) that no longer holds the launcher: one
    line naming both, exit 2, whatever the submit directory."""
    root = tmp_path / "rlif"
    root.mkdir()
    run = load_matrix(REPO_ROOT / "recipe" / "matrix.yaml").select(names=[SMOKE])[0]
    script = tmp_path / "job.sh"
    script.write_text(render_script(run, build_overrides(run), root=root), encoding="utf-8")
    env = {"PATH": os.environ["PATH"], "SLURM_SUBMIT_DIR": str(tmp_path), "SLURM_JOB_ID": "1"}
    proc = subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True, check=False, timeout=60)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == (
        f"error: no {root}/{LAUNCHER}: this script was generated for the checkout {root}; regenerate it in yours "
        "(python generate_train_recipes.py)\n"
    )


def test_a_checkout_path_with_spaces_is_refused(site, tmp_path):
    """verl overrides cannot carry spaces or commas, so the job refuses such a checkout before any step."""
    spaced = tmp_path / "my repo"
    shutil.copytree(site["root"], spaced)
    proc, log = run_job(site, "RLIF_RUNTIME=host\n", tmp_path, submit_dir=spaced)
    assert proc.returncode == 2 and log == ""
    assert proc.stderr.startswith(
        f"error: the repository path must not contain spaces or commas (verl overrides): {spaced}"
    )


def _python_steps(lines: list[str]) -> int:
    """The lines that run ``$PYTHON``, each checked to go through on_nodes/on_head: on its own line or on an earlier
    line of the same command continued with ``\\`` (``on_nodes ... -- bash -c '...' \\``)."""
    steps = 0
    wrapper_in_command = False
    continued = False
    for line in lines:
        if not continued:
            wrapper_in_command = False
        wrapper_in_command = wrapper_in_command or "on_nodes" in line or "on_head" in line
        if '"$PYTHON"' in line and not line.lstrip().startswith(("#", "PYTHON=")):
            assert wrapper_in_command, line
            steps += 1
        continued = line.rstrip().endswith("\\")
    return steps


def test_gpu_jobs_run_python_only_through_the_runtime():
    """No Python step of a GPU job bypasses on_nodes/on_head (it would run on the host under a container): the
    generated scripts run none themselves, and the launcher's are the training job's preflight, Ray head, Ray
    workers, ray_wait and driver (and, with a judge server, its start and its readiness probe), the evaluation
    job's preflight and generation (per benchmark, or once), and the probe job's sampling (it shares the
    evaluation's preflight)."""
    for path in sorted((REPO_ROOT / "recipe" / "rlif").glob("**/*.sh")):
        assert _python_steps(path.read_text(encoding="utf-8").splitlines()) == 0, path.name
    launcher = (REPO_ROOT / LAUNCHER).read_text(encoding="utf-8")
    training, evaluation = launcher.split("# ---- evaluation:", 1)
    evaluation, probe = evaluation.split("# ---- probe:", 1)
    assert _python_steps(training.splitlines()) == 7
    assert _python_steps(evaluation.splitlines()) == 3  # preflight; generation per benchmark, or once
    assert _python_steps(probe.splitlines()) == 1


def test_the_launcher_refuses_to_run_by_itself():
    proc = subprocess.run(["bash", str(REPO_ROOT / LAUNCHER)], capture_output=True, text=True, check=False)
    assert proc.returncode == 2
    assert proc.stderr.endswith(
        "is sourced by the scripts in recipe/rlif/ (sbatch recipe/rlif/<run>.sh), not run by itself\n"
    )


def test_a_second_job_of_the_same_run_stops_naming_the_running_one(site, tmp_path):
    """The script submitted twice: the second job to start finds the first one's record and stops before anything
    else, naming it; once that job has left Slurm's queue, its record is stale and taken over."""
    run = load_matrix(REPO_ROOT / "recipe" / "matrix.yaml").select(names=[SMOKE])[0]
    checkpoints = site["root"] / "checkpoints" / run.project / run.name
    checkpoints.mkdir(parents=True, exist_ok=True)
    (checkpoints / ".job").write_text("1111\n", encoding="utf-8")
    _executable(site["stubs"] / "squeue", '#!/bin/bash\ncat "$HOME/squeue.out" 2>/dev/null\n')
    try:
        (tmp_path / "squeue.out").write_text("RUNNING\n", encoding="utf-8")
        proc, log = run_job(site, "", tmp_path)
        assert proc.returncode == 2
        assert proc.stderr.strip().splitlines()[-1] == (
            f"error: job 1111 (RUNNING) is already training {run.name} into {checkpoints}; job 4242 stops here: "
            "wait for it, or scancel 1111 and submit again"
        )
        assert "rlif.preflight" not in log
        (tmp_path / "squeue.out").unlink()  # job 1111 has ended
        proc, _ = run_job(site, "", tmp_path)
        assert "already training" not in proc.stderr
        assert (checkpoints / ".job").read_text(encoding="utf-8") == "4242\n"
    finally:
        (site["stubs"] / "squeue").unlink()
        (checkpoints / ".job").unlink(missing_ok=True)
