"""Command line of ``generate_train_recipes.py``: list, select, resolve the ablation chain, validate, write and
optionally submit runs (training, then its evaluation with ``--dependency=afterok``)."""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table

from rlif.recipes.chained import ChainOutcome, ChainRefusedError, resolve_selection
from rlif.recipes.checks import GenerationError
from rlif.recipes.generate import (
    PREFLIGHT_KEYS,
    REPO_ROOT,
    Written,
    apply_site,
    default_verl_python,
    generate,
    preflight_environment,
    resolve_model_settings,
    site_from_env,
    write_executable,
)
from rlif.recipes.probe_script import ChainSource
from rlif.recipes.render import LAUNCHER, job_root_problem
from rlif.runs.matrix import Matrix, load_matrix
from rlif.runs.probe import PROMPTS_PER_INTERVAL, TRUNCATION_WARN, Probe, default_probe_path, load_probe, probe_warnings
from rlif.runs.spec import RunSpec

if TYPE_CHECKING:
    from rlif.runs.planner import RunPlan


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (separate so tests and docs can inspect it)."""
    parser = argparse.ArgumentParser(
        prog="generate_train_recipes.py",
        description="Validate the runs of recipe/matrix.yaml against verl 0.9.1 and write recipe/rlif/<run>.sh "
        "(training) and recipe/rlif/eval/<run>.sh (its evaluation).",
    )
    parser.add_argument("--matrix", type=Path, default=REPO_ROOT / "recipe" / "matrix.yaml")
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "recipe" / "rlif", help="output directory")
    parser.add_argument("--list", action="store_true", help="list the runs and exit")
    parser.add_argument("--stage", action="append", default=[], help="select a stage (repeatable)")
    parser.add_argument("--run", action="append", default=[], dest="runs", help="select a run by name (repeatable)")
    parser.add_argument("--dry-run", action="store_true", help="validate, write nothing")
    parser.add_argument("--nodes", type=int, help="node count for every selected run")
    parser.add_argument("--partition", help="Slurm partition (default: SLURM_PARTITION in .env)")
    parser.add_argument("--account", help="Slurm account (default: SLURM_ACCOUNT in .env)")
    parser.add_argument(
        "--gpu-memory-gb",
        type=float,
        help="memory of one GPU in GiB for the run planner (default: RLIF_GPU_MEMORY_GB in .env, else the matrix's 80)",
    )
    parser.add_argument("--env-file", type=Path, default=REPO_ROOT / ".env")
    parser.add_argument(
        "--root",
        type=Path,
        default=REPO_ROOT,
        help="the checkout the jobs run in and log to (<root>/log), whatever directory they are submitted from "
        "(#SBATCH --chdir; default: this checkout)",
    )
    parser.add_argument(
        "--portable",
        action="store_true",
        help="write no root: the jobs run in, and log under, the directory they are submitted from, which must be "
        "the repository root (the form of the scripts this repository commits)",
    )
    parser.add_argument("--cpu-mode", action="store_true", help="CPU end-to-end variant (<run>_cpu.sh), tests only")
    parser.add_argument("--verl-python", help="Python with verl 0.9.1 for the config check (default: auto)")
    parser.add_argument(
        "--skip-verl-check",
        action="store_true",
        help="skip composing against verl's config (not for committed scripts)",
    )
    parser.add_argument(
        "--skip-preflight",
        action="store_true",
        help="do not check that each run's data files exist and validate and its model is in the Hub cache",
    )
    parser.add_argument(
        "--eval-root",
        type=Path,
        default=REPO_ROOT / "eval",
        help="evaluation results (<run>/<step>/metrics.json) that resolve the ablation chain (default: eval/)",
    )
    parser.add_argument(
        "--accept",
        action="append",
        default=[],
        metavar="STAGE",
        help="accept the printed decision table of a sign-off stage (recorded in recipe/decisions/STAGE.json)",
    )
    parser.add_argument(
        "--decisions",
        type=Path,
        help="where accepted decision tables are recorded (default: decisions/ beside --matrix)",
    )
    parser.add_argument(
        "--submit",
        action="store_true",
        help="sbatch each training script, then its evaluation script with --dependency=afterok on it",
    )
    parser.add_argument(
        "--probe",
        action="append",
        nargs="?",
        const="",
        metavar="RUN",
        help="write the probe job of RUN (repeatable; alone with --stage/--run: of those runs) to "
        "recipe/rlif/probe/<run>.sh instead of the training scripts (docs/run-planning.md)",
    )
    parser.add_argument(
        "--probe-prompts",
        type=int,
        default=PROMPTS_PER_INTERVAL,
        help=f"prompts per source and curriculum interval of a probe job (default {PROMPTS_PER_INTERVAL})",
    )
    parser.add_argument(
        "--plan-from",
        type=Path,
        help="plan on this probe file (default: probe/<run>/probe.json where it exists)",
    )
    parser.add_argument(
        "--truncation-warn",
        type=float,
        default=TRUNCATION_WARN,
        help=f"warn when a probe measured more truncation than this at a run's cap (default {TRUNCATION_WARN:g})",
    )
    return parser


def list_table(runs: Sequence[RunSpec]) -> Table:
    """A table describing runs (for ``--list``)."""
    table = Table(title="rlif runs")
    table.add_column("run", no_wrap=True)  # never cut: the curriculum runs differ only at the end of their names
    for column in ("stage", "model", "think", "train data", "sampler", "reward", "nodes x GPUs"):
        table.add_column(column)
    for run in runs:
        reward = ",".join(f"{k}={v}" for k, v in run.reward.kwargs.items()) or "default"
        taken = run.from_winner.take if run.from_winner else ()

        def cell(key: str, text: str, taken: tuple[str, ...] = taken) -> str:
            winner = any(key == t or key.startswith(t + ".") or t.startswith(key + ".") for t in taken)
            return "(winner's)" if winner else text

        table.add_row(
            run.name,
            run.stage,
            cell("model", run.model if not run.cpu_mode else "(cpu demo)"),
            cell("think", "yes" if run.think else "no"),
            cell("train_files", ", ".join(Path(f).name for f in run.train_files) or "(cpu demo)"),
            cell("sampler.name", run.sampler.name),
            cell("reward.kwargs", reward),
            f"{run.slurm.nodes} x {run.slurm.gpus_per_node}",
        )
    chained = [run for run in runs if run.from_winner]
    if chained:
        table.caption = "; ".join(
            dict.fromkeys(f"stage {run.stage}: {run.from_winner.describe()}" for run in chained if run.from_winner)
        )
    return table


def summary_table(written: Sequence[Written], dry_run: bool, probes: Mapping[str, Probe] | None = None) -> Table:
    """What was written (or would be, in a dry run), with the run planner's figures for each run (on its probe's
    measurements where ``probes`` has one)."""
    from rlif.recipes.eval_script import plan_eval
    from rlif.runs.planner import plan_run, requeues

    title = "validated (dry run, nothing written)" if dry_run else "written"
    table = Table(title=f"{title}; planner estimates, docs/run-planning.md")
    table.add_column("script", no_wrap=True)
    for column in (
        "nodes x GPUs", "steps", "epochs", "tokens/step", "peak GiB/GPU", "vLLM/offload/SP", "step", "GPU-h",
        "time limit", "eval GPUs",
    ):  # fmt: skip
        table.add_column(column)
    for item in written:
        run = item.run
        script = str(item.path.relative_to(REPO_ROOT) if item.path.is_relative_to(REPO_ROOT) else item.path)
        if run.cpu_mode:
            table.add_row(script, f"{run.slurm.nodes} x {run.slurm.gpus_per_node}", *["(cpu test)"] * 9)
            continue
        plan = plan_run(run, REPO_ROOT, probe=(probes or {}).get(run.name))
        gpu_hours, n_requeues = plan.gpu_hours_range(), requeues(plan, run.slurm.time)
        fast, slow = plan.step_seconds_range
        limit = run.slurm.time
        if n_requeues:
            limit = f"[yellow]{limit}: {n_requeues} requeue{'s' if n_requeues > 1 else ''}[/yellow]"
        table.add_row(
            script,
            f"{run.slurm.nodes} x {run.slurm.gpus_per_node}",
            "?" if plan.steps is None else str(plan.steps),
            "?" if plan.epochs is None else f"{plan.epochs:.2f}",
            f"{plan.expected_tokens_per_step / 1e6:.1f}M (max {plan.max_tokens_per_step / 1e6:.1f}M)",
            f"{plan.peak.total_gib:.0f} ({plan.peak.name})",
            memory_settings_cell(plan),
            f"{fast / 60:.1f}-{slow / 60:.1f} min",
            "?" if gpu_hours is None else f"{gpu_hours[0]:,.0f}-{gpu_hours[1]:,.0f}",
            limit,
            f"{plan_eval(run).tp} (TP), n={run.eval.n}",
        )
    return table


def memory_settings_cell(plan: RunPlan) -> str:
    """vLLM's share, actor offload and SP as planned, e.g. ``0.7/no/1``; a ``*`` marks one the planner chose."""
    by_key = {choice.key: choice for choice in plan.choices}
    words = []
    for key in ("train.gpu_memory_utilization", "train.actor_offload", "train.sequence_parallel"):
        choice = by_key[key]
        value = ("yes" if choice.value else "no") if isinstance(choice.value, bool) else f"{choice.value:g}"
        words.append(value + ("*" if choice.auto else ""))
    return "/".join(words)


def memory_setting_lines(written: Sequence[Written], shown: int = 3) -> list[str]:
    """One line per distinct memory setting of the written GPU runs with its reason (``rlif.runs.choices``) and the
    runs it applies to, so that what the planner chose, and why, is read before a job is submitted."""
    from rlif.runs.planner import plan_run

    runs_by_text: dict[str, list[str]] = {}
    for item in written:
        if item.run.cpu_mode:
            continue
        for choice in plan_run(item.run, REPO_ROOT).choices:
            runs_by_text.setdefault(choice.text(), []).append(item.run.name)
    lines = []
    for text, names in runs_by_text.items():
        listed = ", ".join(names[:shown]) + (f", ... ({len(names)} runs)" if len(names) > shown else "")
        lines.append(f"{text}: {listed}")
    return lines


def stage_gpu_hours(written: Sequence[Written], probes: Mapping[str, Probe] | None = None) -> list[str]:
    """One line per stage of the written GPU runs: how many runs (and arms, when some run several seeds) and the
    planner's GPU-hours of them all, fast end to slow end, so the cost of a stage is read before it is submitted."""
    from rlif.runs.planner import plan_run

    totals: dict[str, list[Any]] = {}
    for item in written:
        run = item.run
        if run.cpu_mode:
            continue
        entry = totals.setdefault(run.stage, [0, set(), 0.0, 0.0, 0])
        entry[0] += 1
        entry[1].add(run.arm)
        hours = plan_run(run, REPO_ROOT, probe=(probes or {}).get(run.name)).gpu_hours_range()
        if hours is None:
            entry[4] += 1
            continue
        entry[2] += hours[0]
        entry[3] += hours[1]
    lines = []
    for stage, (runs, arms, fast, slow, unknown) in totals.items():
        count = f"{runs} runs" if len(arms) == runs else f"{runs} runs ({len(arms)} arms x seeds)"
        line = f"stage {stage}: {count}, {fast:,.0f}-{slow:,.0f} GPU-h by the planner"
        if unknown:
            line += f" ({unknown} run{'s' if unknown > 1 else ''} with an unknown step count left out)"
        lines.append(line)
    return lines


def select_runs(matrix: Matrix, args: argparse.Namespace) -> list[RunSpec]:
    """The selected runs, in CPU mode when asked."""
    runs = matrix.select(names=args.runs or None, stages=args.stage or None)
    if args.cpu_mode:
        runs = [matrix.in_cpu_mode(run) for run in runs]
    return runs


def sbatch(arguments: Sequence[str]) -> tuple[str | None, str]:
    """``sbatch --parsable ARGS`` from the repository root: (job id or None on failure, sbatch's message)."""
    proc = subprocess.run(
        ["sbatch", "--parsable", *arguments], cwd=REPO_ROOT, capture_output=True, text=True, check=False
    )
    output = (proc.stdout + proc.stderr).strip()
    job_id = proc.stdout.strip().split(";")[0] if proc.returncode == 0 else ""
    return (job_id if job_id.isdigit() else None), output


def queued_jobs(name: str) -> list[str]:
    """``<id> (<state>)`` of this user's jobs named ``name`` in Slurm's queue; empty when none or no ``squeue``."""
    try:
        proc = subprocess.run(
            ["squeue", "--me", "-h", "-n", name, "-o", "%i %T"], capture_output=True, text=True, check=False
        )
    except OSError:
        return []
    return [
        f"{job} ({state})"
        for job, _, state in (line.strip().partition(" ") for line in proc.stdout.splitlines())
        if job
    ]


def submit(written: Sequence[Written], console: Console) -> int:
    """Submit each training script, then its evaluation script held until training ends well
    (``--dependency=afterok:<job>``); returns the number of failed submissions."""
    (REPO_ROOT / "log").mkdir(exist_ok=True)
    failures = 0
    for item in written:
        running = queued_jobs(item.run.name)
        if running:  # the job would stop at its start (claim_run in scripts/slurm_launch.sh)
            console.print(
                f"{item.run.name}: training not submitted: job {', '.join(running)} of this run is already in the "
                f"queue and writes its checkpoints; wait for it, or scancel it and submit again",
                highlight=False,
            )
            failures += 1
            continue
        job_id, output = sbatch([str(item.path)])
        if job_id is None:
            console.print(f"{item.run.name}: training not submitted: {output}", highlight=False)
            failures += 1
            continue
        if item.eval_path is None:
            console.print(f"{item.run.name}: training job {job_id}", highlight=False)
            continue
        eval_id, output = sbatch([f"--dependency=afterok:{job_id}", str(item.eval_path)])
        if eval_id is None:
            console.print(
                f"{item.run.name}: training job {job_id}; evaluation not submitted: {output} "
                f"(later: sbatch --dependency=afterok:{job_id} {item.eval_path.relative_to(REPO_ROOT)})"
                if item.eval_path.is_relative_to(REPO_ROOT)
                else f"{item.run.name}: training job {job_id}; evaluation not submitted: {output}",
                highlight=False,
            )
            failures += 1
            continue
        console.print(f"{item.run.name}: training job {job_id}, evaluation job {eval_id} after it (afterok)")
    return failures


def resolve_chain(
    matrix: Matrix, runs: Sequence[RunSpec], args: argparse.Namespace, console: Console, *, explicit: bool
) -> ChainOutcome | None:
    """Resolve the chained runs among ``runs`` from ``--eval-root`` (``rlif.recipes.chained.resolve_selection``)
    and print its lines: each link's decision table and winner, each link left out for missing results, each
    accepted decision. Training scripts and probe jobs resolve here, so a run is generated with the same settings
    and the same messages either way.

    Returns:
        The outcome, or None after printing why the selection cannot be resolved (a named run's link lacks results,
        or a results file is unreadable): the caller exits with 1.
    """
    try:
        outcome = resolve_selection(
            matrix,
            runs,
            args.eval_root,
            explicit=explicit,
            decisions=args.decisions or Path(args.matrix).parent / "decisions",
            accept=args.accept,
        )
    except ChainRefusedError as err:
        for line in str(err).splitlines():
            console.print(f"error: {line}", highlight=False, markup=False, soft_wrap=True)
        console.print(
            "evaluate those runs first (recipe/rlif/eval/<run>.sh writes eval/<run>/<step>/metrics.json; "
            "docs/evaluation.md), or point --eval-root at their results",
            highlight=False,
            soft_wrap=True,
        )
        return None
    except ValueError as err:
        console.print(f"error: {err}", highlight=False, markup=False, soft_wrap=True)
        return None
    for text in [*outcome.resolved, *outcome.skipped]:
        for line in text.splitlines():
            console.print(f"chain: {line}", highlight=False, markup=False, soft_wrap=True)
    for path in outcome.accepted:
        console.print(f"chain: accepted decision recorded in {path}", highlight=False, markup=False)
    return outcome


def find_probes(
    runs: Sequence[RunSpec], plan_from: Path | None, root: Path = REPO_ROOT
) -> tuple[dict[str, Probe], list[str], list[str]]:
    """The probe each run plans on: ``plan_from`` for every run, else the one at its default location under
    ``root`` (``probe/<run>/probe.json``).

    Returns:
        (probe by run name, errors, notes): an error line for each run ``plan_from`` does not fit or that cannot
        be read (generation stops on these), a note for each probe found at its default location that does not fit
        its run (planned on the assumed lengths instead).
    """
    probes: dict[str, Probe] = {}
    errors: list[str] = []
    notes: list[str] = []
    given = None
    if plan_from is not None:
        try:
            given = load_probe(plan_from)
        except ValueError as err:
            return {}, [f"--plan-from: {err}"], []
    for run in runs:
        if run.cpu_mode:
            continue
        path = default_probe_path(root, run)
        try:
            probe = given if given is not None else (load_probe(path) if path.is_file() else None)
            if probe is not None:
                probe.lengths_for(run)  # another model, thinking mode or a cap above the probe's: refused
                probes[run.name] = probe
        except ValueError as err:
            if given is not None:
                errors.append(f"--plan-from: {err}")
            else:
                notes.append(f"probe: {err}; {run.name} is planned on the assumed lengths")
    return probes, errors, notes


def measured_lines(written: Sequence[Written], probes: Mapping[str, Probe], truncation_warn: float) -> list[str]:
    """Per run planned on a probe: the measured and the assumed lengths and the step time and GPU-hours on each,
    then the probe's warnings (``rlif.runs.probe.probe_warnings``)."""
    from rlif.runs.planner import plan_run

    lines = []
    for item in written:
        run = item.run
        probe = probes.get(run.name)
        if probe is None:
            continue
        measured, assumed = plan_run(run, REPO_ROOT, probe=probe), plan_run(run, REPO_ROOT)
        rate = measured.lengths.decode_tokens_per_s
        lines.append(
            f"plan: {run.name}: measured ({probe.path}): prompt {measured.lengths.prompt:,.0f} / response "
            f"{measured.lengths.response:,.0f} tokens"
            + (f", decode {rate:,.0f} tokens/s/GPU" if rate else "")
            + f"; assumed: prompt {assumed.lengths.prompt:,.0f} / response {assumed.lengths.response:,.0f} tokens"
        )
        for name, plan in (("measured", measured), ("assumed", assumed)):
            fast, slow = plan.step_seconds_range
            hours = plan.gpu_hours_range()
            cost = "" if hours is None else f", {hours[0]:,.0f}-{hours[1]:,.0f} GPU-h"
            lines.append(f"plan: {run.name}: on the {name} lengths: {fast / 60:.1f}-{slow / 60:.1f} min/step{cost}")
        lines += [f"warning: {line}" for line in probe_warnings(run, probe, truncation_warn)]
    return lines


def write_probe_scripts(
    runs: Sequence[RunSpec],
    out_dir: Path,
    prompts: int,
    dry_run: bool,
    console: Console,
    *,
    root: Path | None = None,
    chains: Mapping[str, ChainSource] | None = None,
) -> int:
    """Render (and unless ``dry_run`` write) each run's probe job to ``<out_dir>/probe/<run>.sh``; a chained run
    comes resolved, with its resolution in ``chains`` (by run name). A run that gets no probe (``probe_refusal``) is
    named on one line and left out; a run whose probe does not fit a node is an error line. Returns 1 after any
    error, else 0."""
    from rlif.recipes.probe_script import PROBE_SUBDIR, plan_probe, probe_refusal, render_probe_script
    from rlif.recipes.render import make_environment

    env = make_environment()
    table = Table(title=f"probe jobs{' (dry run, nothing written)' if dry_run else ''}; docs/run-planning.md")
    for column in ("script", "GPUs", "caps", "prompts/interval", "n", "probe file"):
        table.add_column(column, no_wrap=column in ("script", "probe file"))
    failed = 0
    for run in runs:
        refusal = probe_refusal(run)
        if refusal:
            console.print(f"probe: skipped: {refusal}", highlight=False, markup=False, soft_wrap=True)
            continue
        try:
            text = render_probe_script(run, env, prompts, root, (chains or {}).get(run.name))
        except ValueError as err:
            console.print(f"error: {err}", highlight=False, markup=False, soft_wrap=True)
            failed = 1
            continue
        path = out_dir / PROBE_SUBDIR / f"{run.name}.sh"
        if not dry_run:
            write_executable(path, text)
        plan, caps = plan_probe(run)
        table.add_row(
            str(path.relative_to(REPO_ROOT) if path.is_relative_to(REPO_ROOT) else path),
            str(plan.tp),
            ", ".join(map(str, caps)),
            str(prompts),
            str(run.train.rollout_n),
            str(default_probe_path(REPO_ROOT, run).relative_to(REPO_ROOT)),
        )
    console.print(table)
    return failed


def probe_main(args: argparse.Namespace, matrix: Matrix, console: Console, root: Path | None) -> int:
    """``--probe``: write the selected runs' probe jobs (runs named by ``--probe``, else ``--run``/``--stage``),
    chained runs resolved from ``--eval-root`` as generation resolves them."""
    names = [name for name in args.probe if name] + list(args.runs)
    if args.probe_prompts < 1:
        console.print(f"error: --probe-prompts {args.probe_prompts}: need at least one prompt per interval")
        return 2
    try:
        runs = matrix.select(names=names or None, stages=args.stage or None)
    except ValueError as err:
        console.print(f"error: {err}", highlight=False, markup=False, soft_wrap=True)
        return 2
    outcome = resolve_chain(matrix, runs, args, console, explicit=bool(names or args.stage))
    if outcome is None:
        return 1
    chains = {name: ChainSource(note, outcome.inherited[name]) for name, note in outcome.notes.items()}
    try:
        environment = preflight_environment(args.env_file)
        settings = resolve_model_settings(outcome.runs, environment, explicit=bool(names or args.stage))
        site = site_from_env(args.env_file, args.partition, args.account, None, args.gpu_memory_gb)
    except ValueError as err:
        for line in str(err).splitlines():
            console.print(f"error: {line}", highlight=False, markup=False, soft_wrap=True)
        return 2
    for line in settings.skipped:
        console.print(f"model: skipped: {line}", highlight=False, markup=False, soft_wrap=True)
    runs = [apply_site(run, site) for run in settings.runs]
    if not args.dry_run:  # Slurm opens the log before the script runs and creates no directory
        ((root or REPO_ROOT) / "log").mkdir(exist_ok=True)
    return write_probe_scripts(runs, args.out, args.probe_prompts, args.dry_run, console, root=root, chains=chains)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the generator.

    Returns:
        0 on success; 1 when a run is invalid or a submission failed; 2 on a usage error.
    """
    args = build_parser().parse_args(argv)
    # Wide when piped (logs, tests), so run names are never cut; the terminal's width otherwise.
    console = Console(width=None if sys.stdout.isatty() else 200)
    try:
        matrix = load_matrix(args.matrix)
        runs = select_runs(matrix, args)
    except ValueError as err:
        console.print(f"[red]error:[/red] {err}", markup=True, highlight=False)
        return 2
    if args.list:
        console.print(list_table(runs))
        return 0
    job_root = None if args.portable else args.root.absolute()
    if job_root is not None:
        problem = job_root_problem(job_root)
        if problem is None and not (job_root / LAUNCHER).is_file():
            problem = f"--root {job_root} is not an rlif checkout (no {LAUNCHER})"
        if problem is not None:
            console.print(f"error: {problem}", highlight=False, markup=False, soft_wrap=True)
            return 2
    if args.probe is not None:
        return probe_main(args, matrix, console, job_root)
    chain_notes: dict[str, str] = {}
    if not args.cpu_mode:
        outcome = resolve_chain(matrix, runs, args, console, explicit=bool(args.runs or args.stage))
        if outcome is None:
            return 1
        runs, chain_notes = outcome.runs, outcome.notes
        try:
            environment = preflight_environment(args.env_file)
        except ValueError as err:  # a .env the job would read differently: a settings error, like the site's
            console.print(f"[red]error:[/red] {err}", markup=True, highlight=False)
            return 2
        try:
            settings = resolve_model_settings(runs, environment, explicit=bool(args.runs or args.stage))
        except ValueError as err:
            for line in str(err).splitlines():
                console.print(f"error: {line}", highlight=False, markup=False, soft_wrap=True)
            return 1
        for line in settings.skipped:
            console.print(f"model: skipped: {line}", highlight=False, markup=False, soft_wrap=True)
        runs = settings.runs
    try:
        site = site_from_env(args.env_file, args.partition, args.account, args.nodes, args.gpu_memory_gb)
    except ValueError as err:
        console.print(f"[red]error:[/red] {err}", markup=True, highlight=False)
        return 2
    runs = [apply_site(run, site) for run in runs]
    verl_python = None if args.skip_verl_check else (args.verl_python or default_verl_python())
    if not args.skip_verl_check and verl_python is None:
        console.print("error: no Python with verl found; pass --verl-python (or --skip-verl-check)", highlight=False)
        return 2
    try:
        preflight_env = None if args.skip_preflight else preflight_environment(args.env_file)
        written = generate(
            runs,
            args.out,
            verl_python,
            dry_run=args.dry_run,
            preflight_env=preflight_env,
            chain_notes=chain_notes,
            job_root=job_root,
        )
    except GenerationError as err:
        console.print(str(err), highlight=False, markup=False, soft_wrap=True)
        if any(p.key in PREFLIGHT_KEYS for p in err.problems):
            console.print(
                f"preflight: settings read from {args.env_file.resolve()} and the environment; get the data and "
                "models above first (README), or pass --skip-preflight to write the scripts anyway (every job "
                "repeats these checks before it starts)",
                highlight=False,
                soft_wrap=True,
            )
        return 1
    if not args.dry_run:  # Slurm opens the log before the script runs and creates no directory
        ((job_root or REPO_ROOT) / "log").mkdir(exist_ok=True)
    probes, errors, notes = find_probes([item.run for item in written], args.plan_from)
    for line in [*errors, *notes]:
        console.print(line if line in notes else f"error: {line}", highlight=False, markup=False, soft_wrap=True)
    if errors:
        return 1
    console.print(summary_table(written, args.dry_run, probes))
    for line in memory_setting_lines(written):
        console.print(f"memory: {line}", highlight=False, markup=False, soft_wrap=True)
    for line in stage_gpu_hours(written, probes):
        console.print(line, highlight=False, markup=False, soft_wrap=True)
    for line in measured_lines(written, probes, args.truncation_warn):
        console.print(line, highlight=False, markup=False, soft_wrap=True)
    if args.submit and not args.dry_run:
        return 1 if submit(written, console) else 0
    return 0
