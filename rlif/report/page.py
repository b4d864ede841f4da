"""The report page: self-contained HTML (inline CSS and SVG, no scripts, nothing fetched when viewed).

The page is read top to bottom as a decision: first each stage's decision table (``rlif.report.decisions``: the
criterion with its interval, counts, the paired difference to the best arm, the chain's verdict and its tie rule),
then what else differs between the runs (settings, then exposure: ``rlif.report.settings``), then the curves, and
last the full metric table, collapsed, in family order with pass@k in numeric order (k in ``DEFAULT_K`` shown, the
other k behind a toggle).

The full table marks the best run per metric. Higher is better except for the failure rates listed in
``rlif.eval.metrics.LOWER_IS_BETTER``; a row is marked only when at least two runs have a value and not all are
equal, and the ``best`` column gives the winner's point margin over the runner-up: a margin without an interval, which
is why decisions are read from the decision tables.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rlif.eval.intervals import LEVEL
from rlif.eval.metrics import lower_is_better
from rlif.report.decisions import StageDecision
from rlif.report.plots import Figure
from rlif.report.runs import Run

DEFAULT_K = (1, 8, 64)
"""pass@k rows shown in the full table without the toggle."""

MAX_SETTINGS = 80
"""Differing settings listed; more are counted."""

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1300px; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ddd; }
figure { margin: 1.5em 0; } figure svg { max-width: 100%; height: auto; }
figcaption { font-size: 0.85em; color: #555; }
table { border-collapse: collapse; font-size: 0.85em; } th, td { border: 1px solid #ddd; padding: 3px 8px; }
th { background: #f4f4f4; position: sticky; top: 0; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.best { background: #d9f2d9; font-weight: bold; } code { font-size: 0.9em; }
table.decision td.chosen { background: #d9f2d9; font-weight: bold; } table.decision td.tie { background: #fff3c4; }
p.verdict { font-size: 0.9em; } p.note { font-size: 0.85em; color: #555; }
tr.extra-k { display: none; } #all-k:checked ~ table tr.extra-k { display: table-row; }
details > summary { cursor: pointer; font-weight: bold; margin: 1em 0; }
"""


@dataclass(frozen=True)
class Column:
    """One column of a results table: a label and its metrics."""

    label: str
    values: Mapping[str, float]


def eval_columns(runs: Sequence[Run]) -> list[Column]:
    """One column per evaluation result: ``run``, with ``@ step N`` when a run has several steps and the benchmark's
    name when a step was evaluated one benchmark at a time."""
    columns = []
    for run in runs:
        several_steps = len({result.step for result in run.evals}) > 1
        for result in run.evals:
            label = run.name if not several_steps else f"{run.name} @ step {result.step}"
            if result.benchmark:
                label += f" · {result.benchmark}"
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
    if len({v for _, v in present}) == 1:
        return set(), "all equal"
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
    keys = sorted({key for column in columns for key in column.values}, key=metric_order)
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
        extra = ' class="extra-k"' if _pass_k(key) not in (None, *DEFAULT_K) else ""
        rows.append(
            f"<tr{extra}><td><code>{html.escape(key)}</code>{arrow}</td>{''.join(cells)}<td>{html.escape(note)}</td></tr>"
        )
    header = f"<thead><tr><th>metric</th>{head}<th>best</th></tr></thead>"
    return f'<table id="{table_id}">{header}<tbody>{"".join(rows)}</tbody></table>'


def metric_order(key: str) -> tuple[Any, ...]:
    """Sort key of the full table: by family (the key's first part), then by name with numbers compared as numbers
    (pass@2 before pass@10)."""
    parts = re.split(r"(\d+)", key)
    return (key.split("/", maxsplit=1)[0], *((0, int(p), "") if p.isdigit() else (1, 0, p) for p in parts))


def _pass_k(key: str) -> int | None:
    match = re.search(r"pass@(\d+)", key)
    return int(match.group(1)) if match else None


def _interval(value: float, low: float, high: float, signed: bool = False) -> str:
    fmt = "{:+.4f}" if signed else "{:.4f}"
    return f"{fmt.format(value)} [{fmt.format(low)}, {fmt.format(high)}]"


def decision_table(decision: StageDecision) -> str:
    """One stage's decision: the table (or why there is none), the chain's verdict and the tie rule."""
    slug = re.sub(r"[^A-Za-z0-9_-]", "-", decision.stage)
    at = f" at step {decision.step}" if decision.step is not None else ""
    parts = [
        f"<h3>Stage {html.escape(decision.stage)}: choose from {html.escape(decision.from_stage)} by "
        f"<code>{html.escape(decision.criterion)}</code>{at}</h3>"
    ]
    if not decision.rows:
        parts.append(f'<p class="verdict" id="verdict-{slug}">No decision yet: {html.escape(decision.verdict)}</p>')
        return "\n".join(parts)
    heads = ["arm", "runs"]
    for m in decision.metrics:
        heads += [f"<code>{html.escape(m)}</code> ({LEVEL:.0%} CI)", "truncated"]
    heads += ["prompts", "samples", "per seed", f"difference to best ({LEVEL:.0%} paired CI)", "verdict"]
    rows = []
    for row in decision.rows:
        cells = [f'<td data-col="arm">{html.escape(row.arm)}</td>', f'<td data-col="runs">{len(row.runs)}</td>']
        first = next(iter(row.cells.values()))
        for metric, cell in row.cells.items():
            iv = cell.interval
            text = _interval(iv.value, iv.low, iv.high)
            cells.append(f'<td class="num" data-col="value" data-metric="{html.escape(metric)}">{text}</td>')
            truncated = "-" if cell.truncated is None else f"{cell.truncated:.4f}"
            cells.append(f'<td class="num" data-col="truncated" data-metric="{html.escape(metric)}">{truncated}</td>')
        seeds = "; ".join(", ".join(f"{v:.4f}" for v in cell.seeds) for cell in row.cells.values())
        cells.append(f'<td class="num" data-col="prompts">{first.interval.units}</td>')
        cells.append(f'<td class="num" data-col="samples">{first.samples}</td>')
        cells.append(f'<td class="num" data-col="seeds">{seeds}</td>')
        difference = "" if row.difference is None else _interval(*row.difference, signed=True)
        cells.append(f'<td class="num" data-col="difference">{difference}</td>')
        css = row.verdict.split()[0]
        cells.append(f'<td class="{css}" data-col="verdict">{html.escape(row.verdict)}</td>')
        rows.append(f'<tr data-arm="{html.escape(row.arm)}">{"".join(cells)}</tr>')
    head = "".join(f"<th>{h}</th>" for h in heads)
    parts.append(
        f'<table class="decision" id="decision-{slug}"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody>'
        "</table>"
    )
    parts.append(f'<p class="verdict" id="verdict-{slug}">{html.escape(decision.verdict)}</p>')
    parts.append(
        f'<p class="note">Ties (a difference whose interval includes 0) are broken by the rule: '
        f"<em>{html.escape(decision.tie_rule)}</em>. Intervals resample prompts of the seed-averaged values; "
        "the per-seed values show the spread between seeds, which the intervals do not cover.</p>"
    )
    return "\n".join(parts)


def settings_table(settings: Mapping[str, tuple[str, Mapping[str, Any]]], keys: Sequence[str]) -> str:
    """The settings that differ, one row per dotted key, one column per run."""
    names = list(settings)
    head = "".join(f"<th>{html.escape(n)}<br><small>{html.escape(settings[n][0])}</small></th>" for n in names)
    rows = []
    for key in keys[:MAX_SETTINGS]:
        cells = "".join(
            f"<td><code>{html.escape(repr(settings[n][1][key]) if key in settings[n][1] else '-')}</code></td>"
            for n in names
        )
        rows.append(f"<tr><td><code>{html.escape(key)}</code></td>{cells}</tr>")
    more = (
        f"<p class='note'>{len(keys) - MAX_SETTINGS} more differing settings not shown.</p>"
        if len(keys) > MAX_SETTINGS
        else ""
    )
    header = f"<thead><tr><th>setting</th>{head}</tr></thead>"
    return f'<table id="settings">{header}<tbody>{"".join(rows)}</tbody></table>{more}'


def exposure_table(arm_names: Sequence[str], table: Mapping[str, Mapping[str, float]]) -> str:
    """Exposure keys by arm (last logged value, seeds averaged)."""
    head = "".join(f"<th>{html.escape(a)}</th>" for a in arm_names)
    rows = []
    for key, values in table.items():
        cells = "".join(f'<td class="num">{"" if a not in values else f"{values[a]:.4g}"}</td>' for a in arm_names)
        rows.append(f"<tr><td><code>{html.escape(key)}</code></td>{cells}</tr>")
    return f'<table id="exposure"><thead><tr><th>metric</th>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def render_page(
    runs: Sequence[Run],
    figures: Sequence[Figure],
    png_dir: str,
    *,
    decisions: Sequence[StageDecision] = (),
    notes: Sequence[str] = (),
    settings: Mapping[str, tuple[str, Mapping[str, Any]]] | None = None,
    exposure: tuple[Sequence[str], Mapping[str, Mapping[str, float]]] | None = None,
) -> str:
    """The whole page: decisions, settings, exposure, curves, then the full tables collapsed."""
    from rlif.report.settings import differing

    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8"><title>rlif run comparison</title>',
        f"<style>{STYLE}</style></head><body>",
        "<h1>rlif run comparison</h1>",
        '<h2 id="decisions">Decisions</h2>',
    ]
    if decisions:
        parts += [decision_table(decision) for decision in decisions]
    else:
        parts.append(
            "<p>No decision: no run has an evaluation with scored samples (<code>python -m rlif.eval</code>).</p>"
        )
    parts += [f'<p class="note">{html.escape(note)}</p>' for note in notes]
    parts.append('<h2 id="runs">Runs</h2><ul>')
    for run in runs:
        files = ", ".join(f"<code>{html.escape(str(p))}</code>" for p in run.sources)
        parts.append(
            f"<li><strong>{html.escape(run.name)}</strong>: {len(run.steps)} steps, "
            f"{len(run.evals)} evaluations ({files})</li>"
        )
    parts.append("</ul>")
    parts.append('<h2 id="settings-differ">Settings that differ</h2>')
    values = settings or {}
    keys = differing({name: v for name, (_, v) in values.items()})
    if keys:
        parts.append(settings_table(values, keys))
    elif len(values) >= 2:
        parts.append("<p>The runs' settings are the same.</p>")
    else:
        parts.append(
            "<p>Settings are known for fewer than two runs (a matrix run's name with <code>--matrix</code>, or a saved "
            "<code>.hydra/config.yaml</code> beside the metrics).</p>"
        )
    if exposure is not None and exposure[1]:
        parts.append('<h2 id="exposure-section">Exposure (last logged value, seeds averaged)</h2>')
        parts.append(exposure_table(*exposure))
    parts.append("<h2>Training curves</h2>")
    if not figures:
        parts.append("<p>No per-step metrics were given.</p>")
    for figure in figures:
        note = f" ({figure.omitted} more keys not shown)" if figure.omitted else ""
        parts.append(f'<figure id="plot-{figure.panel.slug}">{figure.svg}')
        png = f"<code>{html.escape(png_dir)}/{figure.panel.slug}.png</code>"
        parts.append(f"<figcaption>{html.escape(figure.panel.title)}{note}; PNG: {png}</figcaption></figure>")
    columns = eval_columns(runs)
    parts.append(f"<details><summary>All evaluation metrics ({len(columns)} evaluations)</summary>")
    if columns:
        shown = ", ".join(str(k) for k in DEFAULT_K)
        parts.append(
            f'<input type="checkbox" id="all-k"><label for="all-k"> every pass@k (shown: k in {shown})</label>'
        )
        parts.append(results_table(columns, "eval-results"))
    else:
        parts.append(
            "<p>No evaluation results (<code>metrics.json</code> from <code>python -m rlif.eval</code>) were given.</p>"
        )
    parts.append("</details>")
    validation = validation_columns(runs)
    if validation:
        parts.append("<details><summary>Validation during training (last logged value)</summary>")
        parts.append(results_table(validation, "validation-results"))
        parts.append("</details>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
