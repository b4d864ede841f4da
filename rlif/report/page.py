"""The report page: self-contained HTML (inline CSS and SVG, no scripts, nothing fetched when viewed).

Tables mark the best run per metric. Higher is better except for the failure rates listed in
``rlif.eval.metrics.LOWER_IS_BETTER``; a row is marked only when at least two runs have a value, ties are all
marked, and the ``best`` column gives the winner's margin over the runner-up, the number an ablation decision rests on.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rlif.eval.metrics import lower_is_better
from rlif.report.plots import Figure
from rlif.report.runs import Run

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1300px; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ddd; }
figure { margin: 1.5em 0; } figure svg { max-width: 100%; height: auto; }
figcaption { font-size: 0.85em; color: #555; }
table { border-collapse: collapse; font-size: 0.85em; } th, td { border: 1px solid #ddd; padding: 3px 8px; }
th { background: #f4f4f4; position: sticky; top: 0; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.best { background: #d9f2d9; font-weight: bold; } code { font-size: 0.9em; }
"""


@dataclass(frozen=True)
class Column:
    """One column of a results table: a label and its metrics."""

    label: str
    values: Mapping[str, float]


def eval_columns(runs: Sequence[Run]) -> list[Column]:
    """One column per evaluation result: ``run`` or ``run @ step N`` when a run has several."""
    columns = []
    for run in runs:
        for result in run.evals:
            label = run.name if len(run.evals) == 1 else f"{run.name} @ step {result.step}"
            columns.append(Column(label, result.metrics))
    return columns


def validation_columns(runs: Sequence[Run]) -> list[Column]:
    """One column per run: the last logged value of each ``val-core/*`` key (verl's in-training validation)."""
    columns = []
    for run in runs:
        last: dict[str, float] = {}
        for _, values in sorted(run.steps.items()):
            last.update({k: v for k, v in values.items() if k.startswith("val-core/")})
        if last:
            columns.append(Column(run.name, last))
    return columns


def best_of(key: str, columns: Sequence[Column]) -> tuple[set[int], str]:
    """Indices of the winning columns for ``key`` and a note naming the winner and its margin (empty if < 2)."""
    present = [(i, c.values[key]) for i, c in enumerate(columns) if key in c.values and math.isfinite(c.values[key])]
    if len(present) < 2:
        return set(), ""
    sign = -1.0 if lower_is_better(key) else 1.0
    top = max(sign * v for _, v in present)
    winners = {i for i, v in present if sign * v == top}
    if len(winners) > 1:
        return winners, "tie: " + ", ".join(columns[i].label for i in sorted(winners))
    runner_up = max(sign * v for i, v in present if i not in winners)
    winner = next(iter(winners))
    return winners, f"{columns[winner].label} by {abs(top - runner_up):.4g}"


def results_table(columns: Sequence[Column], table_id: str) -> str:
    """A metric-by-run table with the best run per metric marked."""
    keys = sorted({key for column in columns for key in column.values})
    head = "".join(f"<th>{html.escape(c.label)}</th>" for c in columns)
    rows = []
    for key in keys:
        winners, note = best_of(key, columns)
        cells = []
        for index, column in enumerate(columns):
            value = column.values.get(key)
            text = "" if value is None else f"{value:.4f}"
            css = "num best" if index in winners else "num"
            cells.append(f'<td class="{css}">{text}</td>')
        arrow = " (lower is better)" if lower_is_better(key) else ""
        rows.append(
            f"<tr><td><code>{html.escape(key)}</code>{arrow}</td>{''.join(cells)}<td>{html.escape(note)}</td></tr>"
        )
    header = f"<thead><tr><th>metric</th>{head}<th>best</th></tr></thead>"
    return f'<table id="{table_id}">{header}<tbody>{"".join(rows)}</tbody></table>'


def render_page(runs: Sequence[Run], figures: Sequence[Figure], png_dir: str) -> str:
    """The whole page."""
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8"><title>rlif run comparison</title>',
        f"<style>{STYLE}</style></head><body>",
        "<h1>rlif run comparison</h1>",
        "<ul>",
    ]
    for run in runs:
        files = ", ".join(f"<code>{html.escape(str(p))}</code>" for p in run.sources)
        parts.append(
            f"<li><strong>{html.escape(run.name)}</strong>: {len(run.steps)} steps, "
            f"{len(run.evals)} evaluations ({files})</li>"
        )
    parts.append("</ul>")
    columns = eval_columns(runs)
    parts.append("<h2>Evaluation results</h2>")
    if columns:
        parts.append(results_table(columns, "eval-results"))
    else:
        parts.append(
            "<p>No evaluation results (<code>metrics.json</code> from <code>python -m rlif.eval</code>) were given.</p>"
        )
    validation = validation_columns(runs)
    if validation:
        parts.append("<h2>Validation during training (last logged value)</h2>")
        parts.append(results_table(validation, "validation-results"))
    parts.append("<h2>Training curves</h2>")
    if not figures:
        parts.append("<p>No per-step metrics were given.</p>")
    for figure in figures:
        note = f" ({figure.omitted} more keys not shown)" if figure.omitted else ""
        parts.append(f'<figure id="plot-{figure.panel.slug}">{figure.svg}')
        png = f"<code>{html.escape(png_dir)}/{figure.panel.slug}.png</code>"
        parts.append(f"<figcaption>{html.escape(figure.panel.title)}{note}; PNG: {png}</figcaption></figure>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
