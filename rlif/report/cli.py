"""Command line of the run comparison report.

Example::

    python -m rlif.report checkpoints/rlif/run_a checkpoints/rlif/run_b baseline=eval/qwen3-1.7b --out report.html

Each argument is a run: a directory (every ``metrics*.jsonl`` and ``metrics.json`` below it), a per-step metrics
file, or an evaluation ``metrics.json``; ``NAME=PATH`` names it. Writes the page to ``--out`` and one PNG per plot
into ``<out stem>_plots/`` beside it. A user mistake ends with one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from rlif.atomic_files import write_text_atomic
from rlif.report.page import render_page
from rlif.report.plots import render_panels, write_pngs
from rlif.report.runs import load_runs


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m rlif.report", description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", help="run directories or metrics files, optionally NAME=PATH")
    parser.add_argument("--out", type=Path, default=Path("report.html"), help="the HTML page (default report.html)")
    return parser


def build_report(specs: Sequence[str], out: Path) -> tuple[Path, list[Path]]:
    """Write the page and its PNGs; return their paths.

    Raises:
        ValueError: a user mistake (see ``rlif.report.runs.load_runs``) or matplotlib missing.
    """
    runs = load_runs(specs)
    figures = render_panels(runs)
    png_dir = out.with_name(f"{out.stem}_plots")
    pngs = write_pngs(figures, png_dir) if figures else []
    write_text_atomic(out, render_page(runs, figures, png_dir.name))
    return out, pngs


def main(argv: Sequence[str] | None = None) -> int:
    """Entry of ``python -m rlif.report``; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        page, pngs = build_report(args.runs, args.out)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(f"[rlif report] wrote {page} ({page.stat().st_size // 1024} KiB)")
    if pngs:
        print(f"[rlif report] wrote {len(pngs)} PNGs to {pngs[0].parent}")
    return 0
