"""What a report compares: each run's per-step training metrics and its evaluation results.

A run is given as a directory, a file, or ``NAME=PATH`` to name it:

- per-step metrics are verl's file-logger JSON lines (``{"step": s, "data": {key: value}}``), as the Slurm scripts
  write them (``metrics.<job>.<restart>.jsonl`` in the checkpoint directory, one file per requeued attempt) and the
  CPU demo writes them (``log/metrics_phase<k>.jsonl``). Files are read in name order and a later file's value of
  a step wins, so a resumed attempt that re-logs a step replaces the first attempt's value.
- evaluation results are ``metrics.json`` files written by ``python -m rlif.eval score``; a directory named by a
  number above one (``eval/<run>/<step>/metrics.json``) gives its step. A step evaluated one benchmark at a time
  (``<step>/benchmarks.json`` beside ``<step>/<benchmark>/metrics.json``, ``rlif.eval.tiers``) gives one result per
  benchmark, each with its name and tier.

A directory contributes every such file below it; a training run's directory (``checkpoints/<project>/<run>``) also
brings the run's evaluations under ``eval/<run>/``, where the evaluation scripts write them. Every error names the
file and line.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rlif.eval.outputs import is_finite_number, read_metrics
from rlif.eval.tiers import FAST, MANIFEST_FILE, benchmarks
from rlif.jsonl import read_json_lines

TRAINING_GLOB = "metrics*.jsonl"
EVAL_FILE = "metrics.json"


@dataclass
class EvalResult:
    """One evaluation of a run: flat metrics (``rlif.eval.metrics.flatten``) and the step, when known.

    Attributes:
        benchmark: the benchmark's name at a step evaluated one benchmark at a time, else ``""``.
        tier: the benchmark's tier (``fast`` selects, ``full`` is reported only); ``fast`` without benchmarks.
    """

    path: Path
    step: int | None
    metrics: dict[str, float]
    benchmark: str = ""
    tier: str = FAST

    @property
    def step_dir(self) -> Path:
        """The evaluated step's folder (the benchmark's parent, or the result's own folder)."""
        return self.path.parent.parent if self.benchmark else self.path.parent


@dataclass
class Run:
    """One run's data.

    Attributes:
        name: the label in plots and tables.
        steps: step -> {metric key: value}, merged over the run's metrics files.
        evals: its evaluation results, by step (unknown steps last).
        sources: the files read.
    """

    name: str
    steps: dict[int, dict[str, float]] = field(default_factory=dict)
    evals: list[EvalResult] = field(default_factory=list)
    sources: list[Path] = field(default_factory=list)

    def series(self, key: str) -> tuple[list[int], list[float]]:
        """``(steps, values)`` of one metric, in step order, skipping steps that did not log it."""
        points = [(s, v[key]) for s, v in sorted(self.steps.items()) if key in v and math.isfinite(v[key])]
        return [s for s, _ in points], [v for _, v in points]

    def keys(self) -> set[str]:
        """Every per-step metric key the run logged."""
        return {key for values in self.steps.values() for key in values}


def load_runs(specs: Sequence[str], eval_root: Path = Path("eval")) -> list[Run]:
    """Read every run given on the command line, in order (``eval_root``: see ``load_run``).

    Raises:
        ValueError: a path does not exist, holds no metrics, a line or file is malformed, or two runs share a
            name (one line naming the path, line or name).
    """
    runs = [load_run(spec, eval_root) for spec in specs]
    names = [run.name for run in runs]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise ValueError(f"two runs are named {duplicates[0]!r}: name them with NAME=PATH")
    return runs


def load_run(spec: str, eval_root: Path = Path("eval")) -> Run:
    """One run from ``PATH`` or ``NAME=PATH`` (see the module docstring); a directory's run also takes the
    evaluations under ``eval_root/<directory name>`` when that is another directory."""
    name, sep, text = spec.partition("=")
    path = Path(text if sep else spec)
    if not path.exists():
        raise ValueError(f"{path}: no such run directory or metrics file")
    if path.is_dir():
        training = sorted(path.rglob(TRAINING_GLOB))
        evals = sorted(path.rglob(EVAL_FILE))
        default_name = path.resolve().name
        evaluated = eval_root / default_name
        if (
            evaluated.is_dir()
            and evaluated.resolve() != path.resolve()
            and path.resolve() not in evaluated.resolve().parents
        ):
            evals += sorted(evaluated.rglob(EVAL_FILE))
    elif path.name.endswith(".jsonl"):
        training, evals = [path], []
        default_name = path.resolve().parent.name
    elif path.suffix == ".json":
        training, evals = [], [path]
        default_name = _run_dir_of_eval(path).name
    else:
        raise ValueError(f"{path}: expected a run directory, a metrics .jsonl or an evaluation metrics.json")
    if not training and not evals:
        raise ValueError(f"{path}: no per-step metrics ({TRAINING_GLOB}) and no evaluation results ({EVAL_FILE}) found")
    run = Run(name=name if sep else default_name)
    for file in training:
        _read_training(file, run.steps)
        run.sources.append(file)
    for file in evals:
        run.evals.append(_read_eval(file))
        run.sources.append(file)
    run.evals.sort(key=lambda result: (result.step is None, result.step or 0, str(result.path)))
    return run


def _read_training(path: Path, steps: dict[int, dict[str, float]]) -> None:
    """Add one verl file-logger file to ``steps``; a last line cut short (its writer was killed mid-line, e.g. at a
    job's time limit) is skipped with a warning, any other bad line fails naming it."""
    bad: list[ValueError] = []
    entries = list(read_json_lines(path, on_error=bad.append))
    if bad:
        with path.open("rb") as handle:
            lines = handle.read().split(b"\n")
        torn = lines[-1] != b"" and len(bad) == 1 and str(bad[0]).startswith(f"{path}: line {len(lines)}:")
        if not torn:
            raise bad[0]
        print(
            f"warning: {path}: line {len(lines)} is cut short (its writer was stopped mid-line); skipped",
            file=sys.stderr,
        )
    for line_number, entry in entries:
        where = f"{path}: line {line_number}"
        if not isinstance(entry, Mapping) or not isinstance(entry.get("data"), Mapping):
            raise ValueError(f'{where}: expected {{"step": <int>, "data": {{...}}}} (verl file logger)')
        step = entry.get("step")
        if isinstance(step, bool) or not isinstance(step, int | float) or step != int(step):
            raise ValueError(f"{where}: field step: must be an integer, got {step!r}")
        numbers = {k: float(v) for k, v in entry["data"].items() if is_finite_number(v)}
        steps.setdefault(int(step), {}).update(numbers)


def _read_eval(path: Path) -> EvalResult:
    """An evaluation's metrics and step: the step its record names, else its folder's name when that is a number
    (``<run>/<step>/metrics.json``); digits higher up the path (``/data/2026/...``) are not a step."""
    name, tier, step_dir = "", FAST, path.parent
    if (path.parent.parent / MANIFEST_FILE).is_file():
        listed = {b.directory.resolve(): b for b in benchmarks(path.parent.parent)}
        benchmark = listed.get(path.parent.resolve())
        if benchmark is not None:
            name, tier, step_dir = benchmark.name, benchmark.tier, path.parent.parent
    step = _recorded_step(path)
    if step is None and step_dir.name.isdigit():
        step = int(step_dir.name)
    return EvalResult(path, step, read_metrics(path), name, tier)


def _recorded_step(path: Path) -> int | None:
    """The ``step`` an evaluation's ``metrics.json`` records (None when absent or unreadable)."""
    try:
        step = json.loads(path.read_text(encoding="utf-8")).get("step")
    except (OSError, ValueError, AttributeError):
        return None
    return step if isinstance(step, int) and not isinstance(step, bool) else None


def _run_dir_of_eval(path: Path) -> Path:
    """The run's directory for an evaluation file: above any numbered step directory."""
    parent = path.resolve().parent
    while parent.name.isdigit() and parent.parent != parent:
        parent = parent.parent
    return parent
