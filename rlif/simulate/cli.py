"""``python -m rlif.simulate``: the built-in strategies (``--out``), matrix runs by name (``--run``), or every run of
a matrix stage in one table (``--stage``).

``--run`` writes ``DIR/<run>_<learner>.png`` and prints, for every arm, its unlock timeline, each interval's step
reward, the success the learner ends with and the exposure figures (``rlif.simulate.exposure``); ``--param
KEY=VALUE`` replaces one of the run's sampler parameters. ``--stage`` simulates each run of the stage at its own
batch shape and steps over several seeds and prints one markdown table, with ``DIR/stage_<stage>.png``. Both draw
from pools as large as the run's data (``rlif.simulate.rows``; ``--rows SOURCE=N`` replaces a count), and take the
learner options ``--forgetting``, ``--interference`` and ``--response-tokens SOURCE=N``.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rlif.simulate.core import (
    LEARNERS,
    LearnerConfig,
    Strategy,
    final_interval_success,
    interval_reward_span,
    parse_param,
    plot,
    plot_run,
    run_all,
    simulate,
    summarize,
    unlock_timeline,
)
from rlif.simulate.exposure import StageArm, arm_report, plot_stage, stage_table
from rlif.simulate.rows import parse_rows, run_config

DEFAULT_MATRIX = Path("recipe/matrix.yaml")
DEFAULT_SEEDS = 3
"""Seeds 0..2 when neither ``--seeds`` nor the run's ``seeds`` says otherwise."""


def run_seeds(run: Any, seeds: int | None) -> list[int]:
    """``--seeds N`` (0..N-1) when given, else the run's ``seeds`` list when the matrix declares one, else 0..2."""
    if seeds is not None:
        return list(range(seeds))
    declared = getattr(run, "seeds", None)
    return [int(seed) for seed in declared] if declared else list(range(DEFAULT_SEEDS))


def simulate_matrix_runs(
    names: Sequence[str],
    matrix: Path,
    learners: Sequence[str],
    seeds: int | None,
    *,
    steps: int | None,
    out: Path,
    overrides: Mapping[str, Any] | None = None,
    learner_options: Mapping[str, Any] | None = None,
) -> int:
    """Simulate each named matrix run with each learner; write ``<out>/<run>_<learner>.png``, print timelines and
    the exposure figures.

    ``overrides`` replace sampler parameters of every named run (e.g. ``gate_on: source`` to see the reference gate
    on the same run); the file name then ends in ``_<key>-<value>`` for each, so it never replaces the run's own.
    ``learner_options`` go to ``run_config`` (``source_rows``, ``forgetting``, ``interference``,
    ``response_tokens``).
    """
    from tqdm import tqdm

    from rlif.runs.matrix import load_matrix

    runs = {run.name: run for run in load_matrix(matrix).runs}
    unknown = [name for name in names if name not in runs]
    if unknown:
        raise SystemExit(f"{matrix}: no run named {unknown}; known: {sorted(runs)}")
    root = matrix.resolve().parent.parent
    for name in names:
        run = runs[name]
        for learner in learners:
            strategy, config = run_config(run, learner, steps, root=root, **dict(learner_options or {}))
            changed = dict(overrides or {})
            strategy = Strategy(strategy.label, strategy.policy, {**strategy.params, **changed})
            suffix = "".join(f"_{key}-{value}" for key, value in sorted(changed.items()))
            shown = "".join(f", {key}={value}" for key, value in sorted(changed.items()))
            label = f"{name} ({run.sampler.name}{shown}, {learner} learner, {config.prompts}x{config.responses})"
            chosen = run_seeds(run, seeds)
            results = [simulate(strategy, config, seed) for seed in tqdm(chosen, desc=f"{name} {learner}", leave=False)]
            threshold = strategy.params.get("threshold", 0.5) if run.sampler.name == "reward_curriculum" else None
            path = plot_run(label, results, threshold, out / f"{name}_{learner}{suffix}.png")
            tag = f"{name}{suffix} [{learner}]"
            print(unlock_timeline(tag, results))
            print(interval_reward_span(tag, results))
            print(final_interval_success(tag, results))
            print(arm_report(tag, results))
            print(f"wrote {path}")
    return 0


def simulate_stage(
    stage: str,
    matrix: Path,
    seeds: int | None,
    *,
    steps: int | None,
    out: Path,
    learner: str = "improving",
    learner_options: Mapping[str, Any] | None = None,
) -> tuple[str, Path]:
    """Simulate every run of ``stage`` at its own batch shape and steps over its seeds.

    Returns:
        The markdown table (``exposure.stage_table``) and the plot written to ``<out>/stage_<stage>.png``.

    Raises:
        SystemExit: the matrix has no such stage.
    """
    from tqdm import tqdm

    from rlif.runs.matrix import load_matrix

    loaded = load_matrix(matrix)
    runs = [run for run in loaded.runs if run.stage == stage]
    if not runs:
        raise SystemExit(f"{matrix}: no run in stage {stage!r}; stages: {sorted({r.stage for r in loaded.runs})}")
    root = matrix.resolve().parent.parent
    replicates: dict[str, list[Any]] = {}
    for run in runs:  # the seeds of one arm (``seeds: [...]``) are one row of the table, not one row each
        replicates.setdefault(run.arm, []).append(run)
    jobs = []
    for arm, arm_runs in replicates.items():
        run = arm_runs[0]
        strategy, config = run_config(run, learner, steps, root=root, **dict(learner_options or {}))
        declared = [r.replicate.seed for r in arm_runs if r.replicate is not None]
        arm_seeds = list(range(seeds)) if seeds is not None else declared or run_seeds(run, None)
        jobs += [(arm, run, strategy, config, seed) for seed in arm_seeds]
    results: dict[str, list] = {arm: [] for arm in replicates}
    shapes = {}
    for arm, run, strategy, config, seed in tqdm(jobs, desc=f"stage {stage}", unit="run"):
        results[arm].append(simulate(strategy, config, seed))
        shapes[arm] = (run.sampler.name, config.prompts, config.responses, config.steps)
    arms = [StageArm(name, *shapes[name], results[name]) for name in results]
    return stage_table(arms), plot_stage(stage, arms, out / f"stage_{stage}.png")


def _pairs(texts: Sequence[str], option: str) -> dict[str, float]:
    """``SOURCE=NUMBER`` options as a mapping.

    Raises:
        ValueError: no ``=``, an empty source or a value that is not a number.
    """
    pairs = {}
    for text in texts:
        source, sep, value = text.partition("=")
        try:
            pairs[source.strip()] = float(value)
        except ValueError:
            sep = ""
        if not sep or not source.strip():
            raise ValueError(f"{option} {text!r}: expected SOURCE=NUMBER, e.g. logicif=4096")
    return pairs


class _Once(logging.Filter):
    """Pass each log message once: every seed of every run builds its policy anew and would repeat its warnings."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if message in self.seen:
            return False
        self.seen.add(message)
        return True


def main(argv: Sequence[str] | None = None) -> int:
    """Simulate the built-in strategies (``--out``), matrix runs by name (``--run``) or a stage (``--stage``)."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="folder for the PNG plots")
    parser.add_argument("--steps", type=int, default=None, help="training steps (default: 300, or the run's)")
    parser.add_argument(
        "--seeds", type=int, default=None, help="seeds 0..N-1 (default: a run's `seeds` list if declared, else 3)"
    )
    parser.add_argument("--run", action="append", default=[], help="a recipe/matrix.yaml run to simulate (repeatable)")
    parser.add_argument("--stage", default=None, help="simulate every run of this matrix stage; print one table")
    parser.add_argument("--matrix", type=Path, default=DEFAULT_MATRIX, help="the matrix file (with --run, --stage)")
    parser.add_argument(
        "--learner",
        choices=[*LEARNERS, "both"],
        default=None,
        help="synthetic learner (--run: default both; --stage: default improving)",
    )
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="with --run: replace a sampler parameter of the run (repeatable), e.g. gate_on=source",
    )
    parser.add_argument(
        "--rows", action="append", default=[], metavar="SOURCE=N", help="rows of a source, replacing the run's"
    )
    parser.add_argument(
        "--forgetting", type=float, default=0.0, help="per-update decay toward the start of undrawn buckets (0: off)"
    )
    parser.add_argument(
        "--interference", type=float, default=0.0, help="signed effect of one source's practice on the others (0: off)"
    )
    parser.add_argument(
        "--response-tokens",
        action="append",
        default=[],
        metavar="SOURCE=N",
        help="mean response length of a source, for tokens generated (repeatable)",
    )
    args = parser.parse_args(argv)
    samplers_log = logging.getLogger("rlif.samplers")
    if not any(isinstance(f, _Once) for f in samplers_log.filters):
        samplers_log.addFilter(_Once())
    if (args.steps is not None and args.steps < 1) or (args.seeds is not None and args.seeds < 1):
        parser.error("--steps and --seeds must be >= 1")
    if args.param and not args.run:
        parser.error("--param needs --run")
    if args.run and args.stage:
        parser.error("--run and --stage are exclusive")
    if not 0.0 <= args.forgetting < 1.0:
        parser.error(f"--forgetting must be in [0, 1), got {args.forgetting}")
    try:
        options = {
            "source_rows": parse_rows(args.rows),
            "forgetting": args.forgetting,
            "interference": args.interference,
            "response_tokens": _pairs(args.response_tokens, "--response-tokens"),
        }
        if args.stage:
            started = time.monotonic()
            table, path = simulate_stage(
                args.stage,
                args.matrix,
                args.seeds,
                steps=args.steps,
                out=args.out,
                learner=args.learner if args.learner in LEARNERS else "improving",
                learner_options=options,
            )
            print(table)
            print(f"wrote {path} ({time.monotonic() - started:.0f} s)")
            return 0
        if args.run:
            learners = LEARNERS if args.learner in (None, "both") else (args.learner,)
            overrides = dict(parse_param(text) for text in args.param)
            return simulate_matrix_runs(
                args.run,
                args.matrix,
                learners,
                args.seeds,
                steps=args.steps,
                out=args.out,
                overrides=overrides,
                learner_options=options,
            )
    except ValueError as err:
        parser.error(str(err))
    config = LearnerConfig(
        steps=args.steps or LearnerConfig.steps,
        forgetting=args.forgetting,
        interference=args.interference,
        response_tokens=options["response_tokens"],
    )
    results = run_all(config, range(args.seeds or DEFAULT_SEEDS))
    for path in plot(results, args.out):
        print(f"wrote {path}")
    print(summarize(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
