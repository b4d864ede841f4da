"""Command line of the offline evaluation.

Example::

    python -m rlif.eval score --responses lm_eval_ifeval.jsonl \\
        --eval-file verl_data/ifbench_300_ifeval_541_logicif_749.parquet --out eval/qwen3-1.7b/ifeval

``score`` matches each response to its evaluation row (``rlif.eval.responses``), scores it with the reward entry
training uses (``rlif.eval.scoring``) and writes, in ``--out``: ``samples.jsonl`` (one row per sample: prompt id,
response, every score key), ``metrics.json`` (``rlif.eval.metrics``) and ``metrics.md`` (the same as Markdown
tables). A user mistake (a missing file, an unmatched response line, a bad reward option) ends with one line on
stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rlif.eval.eval_rows import load_eval_rows
from rlif.eval.metrics import compute_metrics
from rlif.eval.outputs import (
    METRICS_FILE,
    SAMPLES_FILE,
    TABLES_FILE,
    json_document,
    json_line,
    write_lines_atomic,
    write_text_atomic,
)
from rlif.eval.responses import read_samples
from rlif.eval.scoring import reward_options, score_samples
from rlif.eval.tables import markdown_tables


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m rlif.eval", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    score = sub.add_parser("score", help="score a JSONL of responses against evaluation files (no generation)")
    score.add_argument("--responses", type=Path, required=True, help="JSONL: id or prompt, and response, per line")
    score.add_argument("--eval-file", type=Path, nargs="+", required=True, help="verl parquet evaluation files")
    score.add_argument("--out", type=Path, required=True, help="output directory")
    score.add_argument(
        "--reward-option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="reward option (value read as JSON, else as text), e.g. graph_reward=ratio_quality_format_repeat; "
        "repeatable. Evaluation sets if_max_answer_chars=0 (no length cap, as the official harnesses)",
    )
    return parser


def parse_options(items: Sequence[str]) -> dict[str, Any]:
    """``NAME=VALUE`` items as a dict; values are JSON (``0``, ``true``) or else plain text.

    Raises:
        ValueError: an item without ``=``.
    """
    options: dict[str, Any] = {}
    for item in items:
        name, sep, text = item.partition("=")
        if not sep or not name:
            raise ValueError(f"--reward-option {item!r}: expected NAME=VALUE")
        try:
            options[name] = json.loads(text)
        except json.JSONDecodeError:
            options[name] = text
    return options


def run_score(responses: Path, eval_files: Sequence[Path], out: Path, options: dict[str, Any]) -> dict[str, Any]:
    """Score ``responses`` against ``eval_files``, write the three outputs under ``out``; return the metrics.

    Raises:
        ValueError: a user mistake (see the module docstring), with a one-line message.
    """
    checked = reward_options(options)
    rows = load_eval_rows(eval_files)
    samples = read_samples(responses, rows)
    records: list[dict[str, Any]] = []

    def lines() -> Any:
        for record in score_samples(samples, checked, total=len(samples)):
            records.append(record)
            yield json_line(record)

    write_lines_atomic(out / SAMPLES_FILE, lines())
    metrics = compute_metrics(records)
    metrics = {
        "responses": str(responses),
        "eval_files": [str(path) for path in eval_files],
        "reward_options": checked,
        **metrics,
    }
    write_text_atomic(out / METRICS_FILE, json_document(metrics))
    write_text_atomic(out / TABLES_FILE, markdown_tables(metrics))
    return metrics


def main(argv: Sequence[str] | None = None) -> int:
    """Entry of ``python -m rlif.eval``; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        metrics = run_score(args.responses, args.eval_file, args.out, parse_options(args.reward_option))
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    total = sum(values["samples"] for values in metrics["sources"].values())
    print(f"[rlif eval] scored {total} samples of {len(metrics['sources'])} sources")
    for name in (SAMPLES_FILE, METRICS_FILE, TABLES_FILE):
        print(f"[rlif eval] wrote {args.out / name}")
    return 0
