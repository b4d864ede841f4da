"""The report's plots: one figure per panel (reward per source, sampler weights, curriculum unlocks, response
length, KL, validation), one small chart per metric key, one line per arm: the seeds of a run (``<run>_s<N>``) are
drawn as their mean over the steps every seed logged, with a band from the lowest to the highest seed, so four
seeded runs read as one line each instead of overlapping. ``smooth`` (0 to <1) is the weight of an exponential
moving average applied to each seed's series before the mean (validation points and curriculum steps stay raw).

Figures are drawn with matplotlib's Agg backend (no display needed on a cluster node) and kept twice: as inline SVG
for the page (text stays text, so the page is searchable and small) and as PNG files for papers.
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlif.atomic_files import atomic_write
from rlif.eval.chain import arms
from rlif.report.runs import Run

MAX_CHARTS = 12
"""Charts per panel; a panel with more keys shows the first ones in name order and says how many it left out."""
MISSING_MATPLOTLIB = "the report needs matplotlib: pip install 'matplotlib>=3.8'"


@dataclass(frozen=True)
class Panel:
    """A group of related per-step metrics shown together."""

    slug: str
    title: str
    selects: Callable[[str], bool]


CURRICULUM_PREFIXES = ("sampler/newest_interval/", "sampler/level/")
"""The curriculum metric; metrics files of runs that logged it as ``sampler/level/`` still show it."""

PANELS = (
    Panel(
        "reward",
        "Reward per source",
        lambda k: k == "critic/score/mean" or (k.startswith("train/") and k.endswith("/reward_mean")),
    ),
    Panel("sampler-weights", "Sampler weights per source", lambda k: k.startswith("sampler/weight/")),
    Panel(
        "curriculum",
        "Curriculum: newest unlocked interval per source",
        lambda k: k.startswith(CURRICULUM_PREFIXES),
    ),
    Panel("response-length", "Response length", lambda k: k in ("response_length/mean", "response_length/clip_ratio")),
    Panel("kl", "KL", lambda k: k in ("actor/kl_loss", "actor/ppo_kl")),
    Panel("validation", "Validation metrics", lambda k: k.startswith("val-core/")),
)


@dataclass(frozen=True)
class Figure:
    """One rendered panel."""

    panel: Panel
    keys: tuple[str, ...]
    omitted: int
    svg: str
    png: bytes


def render_panels(runs: Sequence[Run], smooth: float = 0.0) -> list[Figure]:
    """Every panel some run has data for, rendered.

    Args:
        runs: the runs; seeds of one run share a line and a band.
        smooth: exponential moving average weight (0: raw values).

    Raises:
        ValueError: matplotlib is not installed (``MISSING_MATPLOTLIB``), or ``smooth`` is outside [0, 1).
    """
    if not 0.0 <= smooth < 1.0:
        raise ValueError(f"--smooth: must be at least 0 and below 1, got {smooth}")
    pyplot = _pyplot()
    all_keys = set().union(*(run.keys() for run in runs)) if runs else set()
    figures = []
    for panel in PANELS:
        keys = sorted(k for k in all_keys if panel.selects(k))
        if keys:
            shown = keys[:MAX_CHARTS]
            svg, png = _draw(pyplot, panel, shown, runs, smooth)
            figures.append(Figure(panel, tuple(shown), len(keys) - len(shown), svg, png))
    return figures


def write_pngs(figures: Sequence[Figure], directory: Path) -> list[Path]:
    """Write each figure as ``<directory>/<slug>.png`` atomically; return the paths."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for figure in figures:
        path = directory / f"{figure.panel.slug}.png"
        paths.append(atomic_write(path, lambda partial, png=figure.png: partial.write_bytes(png)))
    return paths


def arm_series(
    runs: Sequence[Run], key: str, smooth: float = 0.0
) -> dict[str, tuple[list[int], list[float], list[float], list[float]]]:
    """Arm -> (steps, mean, lowest, highest) of ``key`` over its seeds, at the steps every seed logged."""
    by_name = {run.name: run for run in runs}
    out = {}
    for arm, names in arms([run.name for run in runs]).items():
        per_seed = []
        for name in names:
            steps, values = by_name[name].series(key)
            if steps:
                per_seed.append(dict(zip(steps, ema(values, smooth), strict=True)))
        if not per_seed:
            continue
        shared = sorted(set(per_seed[0]).intersection(*per_seed[1:]))
        if not shared:
            continue
        columns = [[seed[s] for seed in per_seed] for s in shared]
        out[arm] = (shared, [sum(c) / len(c) for c in columns], [min(c) for c in columns], [max(c) for c in columns])
    return out


def ema(values: Sequence[float], weight: float) -> list[float]:
    """Exponential moving average with bias correction (the first points are not pulled towards 0)."""
    if weight <= 0:
        return list(values)
    out, running, norm = [], 0.0, 0.0
    for value in values:
        running = weight * running + (1 - weight) * value
        norm = weight * norm + (1 - weight)
        out.append(running / norm)
    return out


def _draw(pyplot: Any, panel: Panel, keys: Sequence[str], runs: Sequence[Run], smooth: float) -> tuple[str, bytes]:
    from matplotlib.ticker import MaxNLocator

    columns = min(3, len(keys))
    rows = math.ceil(len(keys) / columns)
    fig, axes = pyplot.subplots(rows, columns, figsize=(4.2 * columns, 3.0 * rows), squeeze=False)
    colors = pyplot.rcParams["axes.prop_cycle"].by_key()["color"]
    # an interval stays the newest until the next unlock
    drawstyle = "steps-post" if panel.slug == "curriculum" else "default"
    longest = max((len(run.steps) for run in runs), default=1)
    for index, key in enumerate(keys):
        axis = axes[index // columns][index % columns]
        sparse_key = any(0 < len(run.series(key)[0]) < 0.5 * max(len(run.steps), 1) for run in runs)
        weight = 0.0 if sparse_key or panel.slug == "curriculum" else smooth
        for number, (arm, (steps, mean, low, high)) in enumerate(arm_series(runs, key, weight).items()):
            color = colors[number % len(colors)]
            sparse = len(steps) < 0.5 * longest  # validation: a point every test_freq steps
            axis.plot(
                steps,
                mean,
                label=arm,
                color=color,
                marker="o" if sparse else None,
                markersize=3,
                linewidth=1.2,
                drawstyle=drawstyle,
            )
            if low != high:
                step = "post" if drawstyle == "steps-post" else None
                axis.fill_between(steps, low, high, color=color, alpha=0.2, linewidth=0, step=step)
        axis.set_title(key, fontsize=9)
        axis.set_xlabel("step", fontsize=8)
        axis.xaxis.set_major_locator(MaxNLocator(integer=True))
        axis.tick_params(labelsize=7)
        axis.grid(alpha=0.3)
    for index in range(len(keys), rows * columns):
        axes[index // columns][index % columns].set_visible(False)
    fig.suptitle(panel.title, fontsize=11)
    fig.tight_layout()
    legend: dict[str, Any] = {}  # every run once, even one missing from the first chart
    for axis in axes.flat:
        for handle, label in zip(*axis.get_legend_handles_labels(), strict=True):
            legend.setdefault(label, handle)
    if legend:
        fig.legend(
            list(legend.values()), list(legend), loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=8, frameon=False
        )
    svg_buffer, png_buffer = io.StringIO(), io.BytesIO()
    fig.savefig(svg_buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    fig.savefig(png_buffer, format="png", dpi=150, bbox_inches="tight")
    pyplot.close(fig)
    svg = svg_buffer.getvalue()
    return svg[svg.index("<svg") :], png_buffer.getvalue()


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise ValueError(MISSING_MATPLOTLIB) from None
    matplotlib.use("Agg")
    matplotlib.rcParams["svg.fonttype"] = "none"
    matplotlib.rcParams["svg.hashsalt"] = "rlif-report"  # stable element ids: the same data gives the same page
    from matplotlib import pyplot

    return pyplot
