"""Command line of the run comparison report.

Example::

    python -m rlif.report checkpoints/rlif/run_a checkpoints/rlif/run_b baseline=eval/qwen3-1.7b --out report.html

Each argument is a run: a directory (every ``metrics*.jsonl`` and ``metrics.json`` below it), a per-step metrics
file, or an evaluation ``metrics.json``; ``NAME=PATH`` names it. Writes the page to ``--out`` and one PNG per plot
into ``<out stem>_plots/`` beside it. A user mistake ends with one line on stderr and exit status 2.

The page opens with the decision tables: with ``--matrix recipe/matrix.yaml``, one per chained stage of the matrix,
decided from ``--eval-root`` exactly as the generator decides it; without, one over the runs given (seeds
``<run>_s<N>`` merged, each run at its last evaluated step, by ``--metric`` or the family's headline). Matrix runs
given by name also show their settings from the matrix. ``--smooth W`` smooths the curves (moving average weight).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from rlif.atomic_files import write_text_atomic
from rlif.redaction import guarded
from rlif.report.decisions import matrix_decisions, runs_decision
from rlif.report.page import render_page
from rlif.report.plots import render_panels, write_pngs
from rlif.report.runs import load_runs
from rlif.report.settings import exposure, run_settings
from rlif.runs.matrix import Matrix, load_matrix


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m rlif.report", description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", help="run directories or metrics files, optionally NAME=PATH")
    parser.add_argument("--out", type=Path, default=Path("report.html"), help="the HTML page (default report.html)")
    parser.add_argument("--matrix", type=Path, help="decide each chained stage of this matrix (recipe/matrix.yaml)")
    parser.add_argument("--eval-root", type=Path, default=Path("eval"), help="evaluation results (default eval/)")
    parser.add_argument("--metric", help="criterion of the runs' decision without --matrix (default: the headline)")
    parser.add_argument("--smooth", type=float, default=0.0, help="curve smoothing, 0 (none) to below 1")
    return parser


def build_report(
    specs: Sequence[str],
    out: Path,
    *,
    matrix: Matrix | None = None,
    eval_root: Path = Path("eval"),
    metric: str | None = None,
    smooth: float = 0.0,
) -> tuple[Path, list[Path]]:
    """Write the page and its PNGs; return their paths.

    Raises:
        ValueError: a user mistake (see ``rlif.report.runs.load_runs``), a bad ``smooth``, or matplotlib missing.
    """
    runs = load_runs(specs, eval_root)
    figures = render_panels(runs, smooth)
    if matrix is not None:
        decisions, notes = matrix_decisions(matrix, eval_root), []
    else:
        decision, notes = runs_decision(runs, metric)
        decisions = [decision] if decision is not None else []
    png_dir = out.with_name(f"{out.stem}_plots")
    pngs = write_pngs(figures, png_dir) if figures else []
    page = render_page(
        runs,
        figures,
        png_dir.name,
        decisions=decisions,
        notes=notes,
        settings=run_settings(runs, matrix),
        exposure=exposure(runs),
    )
    write_text_atomic(out, page)
    return out, pngs


def main(argv: Sequence[str] | None = None) -> int:
    """Entry of ``python -m rlif.report``; returns the exit status: 2 for a mistake in the input, 1 when a file
    cannot be read or written or on an unexpected error (its redacted traceback goes to a file the message names)."""
    args = _parser().parse_args(argv)
    return guarded("report", lambda: _run(args), status=lambda err: 2 if isinstance(err, ValueError) else 1)


def _run(args: argparse.Namespace) -> int:
    matrix = load_matrix(args.matrix) if args.matrix is not None else None
    page, pngs = build_report(
        args.runs, args.out, matrix=matrix, eval_root=args.eval_root, metric=args.metric, smooth=args.smooth
    )
    print(f"[rlif report] wrote {page} ({page.stat().st_size // 1024} KiB)")
    if pngs:
        print(f"[rlif report] wrote {len(pngs)} PNGs to {pngs[0].parent}")
    return 0
