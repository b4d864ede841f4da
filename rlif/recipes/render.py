"""Render a run's sbatch script from ``recipe/templates/``.

A rendered script holds only what belongs to its run: the ``#SBATCH`` header, a few run variables, its data files
and its verl overrides (applied to rlif's trainer config, which holds what every run shares). It sources
``scripts/slurm_launch.sh`` (the Ray/Slurm bootstrap, hand-written and shellchecked) and calls its steps, so that a
diff between two scripts shows only what differs between their runs.

Slurm opens ``--output`` before the script runs and creates no directory, so a relative ``log/%x-%j.out`` loses the
whole log (the script's own errors included) when the job is submitted from a directory without ``log/``. A script
is therefore rendered for the checkout it is generated in (``root``): ``#SBATCH --chdir`` and an absolute
``--output`` under ``<root>/log``, so the job runs there and logs there whatever the submit directory. The copies
this repository commits are rendered without a root (``--portable``), since an absolute path would name one
machine: they run in the submit directory, which must then be the repository root.
The CPU end-to-end variant of a run (``cpu_mode``) has its own small template.

Jinja settings answer three pitfalls (docs/recipes.md): ``StrictUndefined`` turns a missing value into an
error instead of an empty string; ``keep_trailing_newline`` keeps the script's final newline; the comment
delimiters are ``{##``/``##}`` so bash's ``${#array[@]}`` is plain text, not the start of a Jinja comment.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import jinja2

from rlif.runs.spec import RunSpec
from rlif.verl_glue.overrides import Override, json_text

TEMPLATE_DIR = Path(__file__).resolve().parents[2] / "recipe" / "templates"
"""Where the script templates live (``recipe/templates`` of the repository)."""

SCRIPT_TEMPLATE = "slurm_grpo.sh.j2"
CPU_SCRIPT_TEMPLATE = "slurm_grpo_cpu.sh.j2"
"""The CPU end-to-end variant: the tiny model and data of ``rlif.cpu_demo`` in place of the run's own."""
LAUNCHER = "scripts/slurm_launch.sh"
"""The bootstrap every rendered script sources, relative to the repository root."""


def job_root_problem(root: Path) -> str | None:
    """Why ``root`` cannot be written into a script's ``#SBATCH --chdir``/``--output`` and its ``RLIF_ROOT=``, or
    None. It must be absolute and plain: Slurm reads ``%`` in ``--output`` as a pattern and splits directives at
    spaces, verl's overrides split at commas, and the ``RLIF_ROOT=`` line is written unquoted."""
    text = str(root)
    if not root.is_absolute():
        return f"the repository root {text} must be an absolute path"
    if shlex.quote(text) != text or any(c in text for c in ",%="):
        return (
            f"the repository root {text} has characters a job script cannot carry (spaces, commas, %, quotes, "
            "non-ASCII...): clone rlif to a plain path such as /home/me/rlif, or pass --portable and submit from "
            "the repository root"
        )
    return None


def template_root(root: Path | None) -> str:
    """``root`` as the templates take it ('' for a portable script).

    Raises:
        ValueError: ``root`` cannot be written into a script (``job_root_problem``).
    """
    if root is None:
        return ""
    problem = job_root_problem(root)
    if problem is not None:
        raise ValueError(problem)
    return str(root)


def make_environment(template_dir: Path = TEMPLATE_DIR) -> jinja2.Environment:
    """The Jinja environment every template is rendered with."""
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(template_dir)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        comment_start_string="{##",
        comment_end_string="##}",
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render_script(
    run: RunSpec,
    overrides: list[Override],
    env: jinja2.Environment | None = None,
    chain_note: str = "",
    root: Path | None = None,
) -> str:
    """The sbatch script of ``run``.

    Args:
        run: the run (site settings already applied).
        overrides: its verl overrides, in order (CPU-mode overrides are added by the script itself at run time,
            so pass ``build_overrides(run)`` here, not ``all_overrides``).
        env: the Jinja environment (default: ``make_environment()``).
        chain_note: for a run that took settings from a winner, the line saying which run won and by how much.
        root: the checkout the job runs in and logs to, whatever the submit directory; None renders the portable
            form (runs in, and logs under, the submit directory).

    Returns:
        The script text, ending in a newline.

    Raises:
        ValueError: ``root`` cannot be written into a script (``job_root_problem``).
    """
    env = env or make_environment()
    template = env.get_template(CPU_SCRIPT_TEMPLATE if run.cpu_mode else SCRIPT_TEMPLATE)
    return template.render(
        run=run,
        slurm=run.slurm,
        overrides=[o.bash_word() for o in overrides],
        train_data=" ".join(shlex.quote(path) for path in run.train_files),
        val_data=" ".join(shlex.quote(path) for path in run.val_files),
        sampler_params=json_text(run.sampler.params) if run.sampler.params else "",
        preflight_options=preflight_options(run),
        launcher=LAUNCHER,
        root=template_root(root),
        chain_note=chain_note,
        judge_model=shlex.quote(run.judge.model),
    )


def preflight_options(run: RunSpec) -> str:
    """The node requirements the job's ``python -m rlif.preflight job`` step checks: GPUs per node and their
    planned memory, one checkpoint's size (``rlif.preflight.checkpoint_bytes`` of the planner's parameter count) and
    how many an attempt holds at once (``rlif.runs.planner.checkpoints_on_disk``), and the pinned package versions.
    GPUs are those training sees (a judge server's are hidden from its steps). The CPU test variant has no GPUs and
    runs on vLLM's CPU build, so it checks data and model only."""
    from rlif.preflight import checkpoint_bytes
    from rlif.runs.planner import checkpoints_on_disk, plan_run
    from rlif.runs.shapes import model_shape

    if run.cpu_mode:
        return "--gpus 0"
    gib = checkpoint_bytes(model_shape(run.model).params, run.train.lora_rank) / 2**30
    plan = plan_run(run, Path(__file__).resolve().parents[2])
    count = checkpoints_on_disk(run, plan.steps, plan.save_freq)
    return (
        f"--gpus {run.slurm.gpus_per_node - run.judge.gpus} --gpu-memory-gb {run.slurm.gpu_memory_gb:g} "
        f"--checkpoint-gib {gib:.1f} --checkpoints {count} --check-versions"
    )
