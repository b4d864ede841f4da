"""Validate runs, then render and write their scripts: the library behind ``generate_train_recipes.py``.

Nothing is written unless every selected run passes every check, so a half-updated ``recipe/rlif/`` never
exists; each problem names its run and key.
"""

from __future__ import annotations

import dataclasses
import os
import stat
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rlif.recipes.checks import GenerationError, Problem, check_run
from rlif.recipes.matrix import RunSpec
from rlif.recipes.overrides import all_overrides, build_overrides, runtime_values, substitute
from rlif.recipes.render import make_environment, render_script, shellcheck
from rlif.recipes.verl_check import run_verl_check

REPO_ROOT = Path(__file__).resolve().parents[2]
"""The repository root (this package lives at ``rlif/recipes``)."""

CPU_MODEL_PLACEHOLDER = "cpu-demo-model"
"""Stand-in model path for composing a CPU-mode run; the real one is made by ``rlif.cpu_demo`` at run time."""


@dataclass(frozen=True)
class SiteSettings:
    """Cluster-specific values that are not part of the matrix.

    Attributes:
        partition: ``--partition``; empty leaves the cluster default.
        account: ``--account``; empty for none.
        nodes: replaces every run's node count when set.
    """

    partition: str = ""
    account: str = ""
    nodes: int | None = None


@dataclass(frozen=True)
class Written:
    """One generated script.

    Attributes:
        run: the run as rendered (site settings applied).
        path: where the script is (or would be, in a dry run).
        overrides: number of verl overrides it passes.
    """

    run: RunSpec
    path: Path
    overrides: int


def apply_site(run: RunSpec, site: SiteSettings) -> RunSpec:
    """``run`` with the site's partition, account and node count (CPU-mode runs keep their two nodes)."""
    slurm = dataclasses.replace(
        run.slurm,
        partition=site.partition or run.slurm.partition,
        account=site.account or run.slurm.account,
        nodes=site.nodes if site.nodes is not None and not run.cpu_mode else run.slurm.nodes,
    )
    return dataclasses.replace(run, slurm=slurm)


def validate(runs: Sequence[RunSpec], verl_python: str | None, root: Path = REPO_ROOT) -> None:
    """Run every check on every run.

    Args:
        runs: the runs, site settings applied.
        verl_python: interpreter for composing against verl's config; None skips that part.
        root: stand-in repository root for the composed paths.

    Raises:
        GenerationError: any problem in any run (all are reported together).
    """
    problems: list[Problem] = []
    composed: dict[str, list[str]] = {}
    for run in runs:
        try:
            overrides = all_overrides(run)
        except ValueError as err:
            problems.append(Problem(run.name, "overrides", str(err)))
            continue
        problems += check_run(run, overrides)
        values = runtime_values(run, str(root), CPU_MODEL_PLACEHOLDER if run.cpu_mode else None)
        composed[run.name] = [substitute(o, values) for o in overrides]
    if verl_python is not None and composed:
        problems += run_verl_check(composed, verl_python)
    if problems:
        raise GenerationError(problems)


def generate(
    runs: Sequence[RunSpec],
    out_dir: Path,
    verl_python: str | None,
    dry_run: bool = False,
) -> list[Written]:
    """Validate, render and (unless ``dry_run``) write one executable script per run.

    Every script is linted with shellcheck before anything is written.

    Args:
        runs: the runs, site settings applied.
        out_dir: where the scripts go (``recipe/rlif``).
        verl_python: interpreter for the verl compose check; None skips it.
        dry_run: validate and lint only.

    Returns:
        What was (or would be) written.

    Raises:
        GenerationError: a check or shellcheck failed; nothing was written.
        FileNotFoundError: shellcheck is not installed.
    """
    validate(runs, verl_python)
    env = make_environment()
    texts = {run.name: render_script(run, build_overrides(run), env) for run in runs}
    problems: list[Problem] = []
    with tempfile.TemporaryDirectory(prefix="rlif_recipes_") as scratch:
        for name, text in texts.items():
            path = Path(scratch) / f"{name}.sh"
            path.write_text(text, encoding="utf-8")
            findings = shellcheck(path)
            if findings:
                problems.append(Problem(name, "shellcheck", findings.replace(str(path), f"{name}.sh")))
    if problems:
        raise GenerationError(problems)
    written = []
    for run in runs:
        path = out_dir / f"{run.name}.sh"
        if not dry_run:
            out_dir.mkdir(parents=True, exist_ok=True)
            path.write_text(texts[run.name], encoding="utf-8")
            path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        written.append(Written(run=run, path=path, overrides=len(build_overrides(run))))
    return written


def site_from_env(env_file: Path, partition: str | None, account: str | None, nodes: int | None) -> SiteSettings:
    """Site settings: command-line values first, then ``SLURM_PARTITION``/``SLURM_ACCOUNT`` from ``.env``.

    Args:
        env_file: the ``.env`` file (may be missing).
        partition: ``--partition`` or None.
        account: ``--account`` or None.
        nodes: ``--nodes`` or None.
    """
    values: dict[str, str | None] = {}
    if env_file.is_file():
        from dotenv import dotenv_values

        values = dict(dotenv_values(env_file))
    return SiteSettings(
        partition=partition if partition is not None else (values.get("SLURM_PARTITION") or ""),
        account=account if account is not None else (values.get("SLURM_ACCOUNT") or ""),
        nodes=nodes,
    )


def default_verl_python() -> str | None:
    """An interpreter with verl: this one if it has verl, else the repository's ``.venv``; None if neither."""
    import importlib.util
    import sys

    if importlib.util.find_spec("verl") is not None and importlib.util.find_spec("hydra") is not None:
        return sys.executable
    venv = REPO_ROOT / ".venv" / "bin" / "python"
    return str(venv) if os.access(venv, os.X_OK) else None
