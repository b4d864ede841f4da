"""From a run directory to a Hub repo: pick the checkpoint, merge it, write its card, upload.

Each step is safe to repeat: the merge is reused while the shards are unchanged, the card is rewritten from the
same facts, and the upload skips content the repo already has. ``dry_run`` does the local, read-only part (find,
pick, describe) and sends nothing and writes nothing.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from rlif.hub.checkpoints import Checkpoint, find_runs, pick_checkpoint, skipped_steps
from rlif.hub.merge import MARKER, MERGED_DIR_NAME, merge_checkpoint
from rlif.hub.model_card import ConfigReader, collect_run_info, render_model_card
from rlif.hub.settings import HubSettings
from rlif.hub.upload import UploadPlan, execute_upload, plan_upload


@dataclass(frozen=True)
class CheckpointRequest:
    """What to publish.

    Attributes:
        root: where to look for runs (a run directory itself, or a parent of several).
        repo_id: target model repo.
        run: a run directory, or the name of one under ``root``; needed when ``root`` holds several runs.
        step: the ``global_step``; None takes the latest complete one.
        private: visibility if the repo is created.
        python: interpreter with verl, for the merger.
        config_file: the run's resolved verl config (default: found in the run directory).
        metrics_file: verl file-logger output (default: every ``<run>/metrics*.jsonl``, one per job attempt).
        base_model: overrides the base model named in the config.
    """

    root: Path
    repo_id: str
    run: str | None = None
    step: int | None = None
    private: bool = True
    python: str = sys.executable
    config_file: Path | None = None
    metrics_file: Path | None = None
    base_model: str | None = None


def select_run(root: Path, run: str | None) -> Path:
    """Resolve the run directory.

    ``run`` is a run directory, a path relative to ``root`` (``<project>/<run>``), or a run's name. A name that
    several projects use (``checkpoints/a/runA``, ``checkpoints/b/runA``) is refused rather than guessed.

    Raises:
        ValueError: no run under ``root``, the named run is unknown or ambiguous, or several runs and none named
            (the message lists the candidates).
    """
    runs = find_runs(root)
    if not runs:
        raise ValueError(f"{root}: no run directory (one with global_step_N subdirectories) found")
    if run is None:
        if len(runs) > 1:
            raise ValueError(
                f"{root} holds {len(runs)} runs; choose one with --run <run_name> (a name or a directory below, "
                f"e.g. --run {_run_arguments(runs, root)[-1]}):\n{_run_listing(runs, root)}"
            )
        return runs[0]
    for candidate in runs:
        if candidate == Path(run) or candidate == root / run:
            return candidate
    named = [candidate for candidate in runs if candidate.name == run]
    if len(named) == 1:
        return named[0]
    if len(named) > 1:
        choices = " or ".join(f"--run {name}" for name in _run_arguments(named, root))
        raise ValueError(
            f"--run {run} is ambiguous: {len(named)} runs under {root} have that name; pass {choices}:\n"
            f"{_run_listing(named, root)}"
        )
    raise ValueError(f"run {run!r} not found under {root}; pass --run with one of:\n{_run_listing(runs, root)}")


def _run_arguments(runs: list[Path], root: Path) -> list[str]:
    """What ``--run`` takes for each run: its name, or its path under ``root`` when names repeat."""
    names = [r.name for r in runs]
    if len(set(names)) == len(names):
        return names
    return [r.relative_to(root).as_posix() for r in runs]


def _run_listing(runs: list[Path], root: Path) -> str:
    """One line per run, what ``--run`` takes and its directory, so the choice can be pasted."""
    names = _run_arguments(runs, root)
    width = max(len(n) for n in names)
    return "\n".join(f"  {n.ljust(width)}  {r}" for n, r in zip(names, runs, strict=True))


def checkpoint_commit_message(checkpoint: Checkpoint) -> str:
    """``<run> global_step_<N>``: repeated uploads of the same step carry the same message."""
    return f"{checkpoint.run_dir.name} global_step_{checkpoint.step}"


def prepare_checkpoint(
    request: CheckpointRequest, *, dry_run: bool, read_config: ConfigReader
) -> tuple[Checkpoint, UploadPlan | None, str]:
    """Pick, merge and card the checkpoint; return it, the upload plan (None on a dry run) and a report.

    ``read_config`` reads the run's saved config for the card (``rlif.hub.model_card.ConfigReader``).

    Raises:
        ValueError: no such run or step, incomplete checkpoint, malformed config or metrics.
        RuntimeError: the merger failed.
    """
    run_dir = select_run(Path(request.root), request.run)
    checkpoint = pick_checkpoint(run_dir, request.step)
    newer_incomplete = skipped_steps(run_dir, checkpoint) if request.step is None else []
    skipped = "".join(f"skipped {line}\n" for line in newer_incomplete)
    if newer_incomplete:
        skipped += f"publishing global_step_{checkpoint.step} instead, the newest complete step\n"
    info = collect_run_info(
        checkpoint,
        read_config=read_config,
        config_file=request.config_file,
        metrics_file=request.metrics_file,
        base_model=request.base_model,
    )
    card = render_model_card(info, repo_id=request.repo_id)
    if dry_run:
        report = skipped + (
            f"run:        {run_dir}\ncheckpoint: global_step_{checkpoint.step} ({checkpoint.actor_dir})\n"
            f"would merge into {checkpoint.step_dir / MERGED_DIR_NAME} and upload to {request.repo_id} "
            f"({'private' if request.private else 'public'} if created)\n\nmodel card:\n{card}"
        )
        return checkpoint, None, report
    merged = merge_checkpoint(checkpoint, python=request.python)
    (merged.target_dir / "README.md").write_text(card, encoding="utf-8")
    plan = plan_upload(
        merged.target_dir,
        request.repo_id,
        repo_type="model",
        commit_message=checkpoint_commit_message(checkpoint),
        private=request.private,
        ignore_patterns=(MARKER,),
    )
    how = "reused earlier merge" if merged.reused else "merged"
    report = f"{skipped}run:        {run_dir}\ncheckpoint: global_step_{checkpoint.step}\n{how}: {merged.target_dir}"
    return checkpoint, plan, report


def publish_checkpoint(
    request: CheckpointRequest, settings: HubSettings, *, read_config: ConfigReader, dry_run: bool = False
) -> str:
    """Publish one checkpoint; return the lines to print (what was found, merged and uploaded where)."""
    _, plan, report = prepare_checkpoint(request, dry_run=dry_run, read_config=read_config)
    if plan is None:
        return report
    url = execute_upload(plan, settings)
    return f"{report}\nuploaded {len(plan.files)} files: {url}"
