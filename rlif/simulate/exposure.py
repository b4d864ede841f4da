"""What a simulated run was shown and what it ended with, in the same figures for every arm.

Arms that change the mix also change exposure (docs: the experiment notes' confounds): a run that draws more LogicIF
sees more unique LogicIF rows and repeats the hardest interval's rows more often. These figures put every arm of a
stage on one footing: held-out success per source group and bucket, each group's share of prompts, unique rows
seen, draws per row by true difficulty bucket (mean and max), tokens generated, and unlock times.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from rlif.simulate.core import RunResult, is_bucketed, mean_curve, smooth, spread


@dataclass(frozen=True)
class Exposure:
    """One seed's figures, per source group (the run's ``groups``; a source alone without them).

    Attributes:
        heldout: final held-out success, mean over sources weighted by their rows.
        heldout_by_group: the same per group.
        bucket_success: per group, final success per true difficulty bucket (mean over the group's bucketed
            sources); empty for a group with no bucketed source or a frozen learner.
        share: per group, share of all prompts drawn.
        rows: per group, rows in the data.
        unique: per group, rows drawn at least once.
        draws_mean: per group, draws per row in each bucket (all draws of the bucket over its rows).
        draws_max: per group, the most draws of one row in each bucket.
        tokens: per group, responses x mean response tokens (absent without ``response_tokens``).
        unlocks: unlock updates per curriculum source.
    """

    heldout: float
    heldout_by_group: dict[str, float]
    bucket_success: dict[str, list[float]]
    share: dict[str, float]
    rows: dict[str, int]
    unique: dict[str, int]
    draws_mean: dict[str, list[float]]
    draws_max: dict[str, list[int]]
    tokens: dict[str, float]
    unlocks: dict[str, list[int]]


def exposure(run: RunResult) -> Exposure:
    """The figures of one simulated seed."""
    rows = {source: len(draws) for source, draws in run.row_draws.items()}
    total_prompts = sum(sum(counts) for counts in run.prompts_by_source.values()) or 1
    final = {source: curve[-1] for source, curve in run.heldout_by_source.items() if curve}

    def weighted(sources: Sequence[str]) -> float:
        count = sum(rows[s] for s in sources)
        return sum(final.get(s, 0.0) * rows[s] for s in sources) / count if count else math.nan

    heldout_by_group, bucket_success, share, group_rows, unique = {}, {}, {}, {}, {}
    draws_mean, draws_max, tokens = {}, {}, {}
    for group, sources in run.groups.items():
        heldout_by_group[group] = weighted(sources)
        share[group] = sum(sum(run.prompts_by_source[s]) for s in sources) / total_prompts
        group_rows[group] = sum(rows[s] for s in sources)
        unique[group] = sum(sum(1 for d in run.row_draws[s] if d) for s in sources)
        buckets = 1 + max(max(run.row_bucket[s], default=0) for s in sources)
        drawn, counts, most = [0] * buckets, [0] * buckets, [0] * buckets
        for source in sources:
            for draws, bucket in zip(run.row_draws[source], run.row_bucket[source], strict=True):
                drawn[bucket] += draws
                counts[bucket] += 1
                most[bucket] = max(most[bucket], draws)
        draws_mean[group] = [d / c if c else math.nan for d, c in zip(drawn, counts, strict=True)]
        draws_max[group] = most
        split = [s for s in sources if is_bucketed(s) and s in run.final_success]
        if split:
            bucket_success[group] = [
                statistics.fmean(v) for v in zip(*(run.final_success[s] for s in split), strict=True)
            ]
        if any(s in run.tokens_by_source for s in sources):
            tokens[group] = sum(run.tokens_by_source.get(s, 0.0) for s in sources)
    return Exposure(
        heldout=weighted(list(rows)),
        heldout_by_group=heldout_by_group,
        bucket_success=bucket_success,
        share=share,
        rows=group_rows,
        unique=unique,
        draws_mean=draws_mean,
        draws_max=draws_max,
        tokens=tokens,
        unlocks=dict(run.unlocks),
    )


def unlock_summary(seeds: Sequence[Exposure]) -> str:
    """The newest unlocked interval at the end (its range over seeds and curriculum sources) and the mean update of
    unlocks 1, 5 and the last, over the seeds and sources that reached each; ``-`` for a run without a curriculum."""
    lists = [steps for e in seeds for steps in e.unlocks.values()]
    if not seeds or not seeds[0].unlocks:
        return "-"
    opened = [len(steps) for steps in lists]
    most = max(opened)
    cells = []
    for k in sorted({1, 5, most} - {0}):
        reached = [steps[k - 1] for steps in lists if len(steps) >= k]
        if reached:
            note = "" if len(reached) == len(lists) else f" ({len(reached)}/{len(lists)})"
            cells.append(f"{k}@{statistics.fmean(reached):.0f}{note}")
    span = f"{min(opened)}" if min(opened) == most else f"{min(opened)}-{most}"
    return f"newest {span}; " + (", ".join(cells) if cells else "no unlock")


def arm_report(label: str, runs: Sequence[RunResult]) -> str:
    """The figures of one arm over its seeds, one line each: held-out success (overall, per group, per bucket),
    shares, unique rows, draws per row by bucket, tokens and unlocks."""
    seeds = [exposure(run) for run in runs]
    groups = list(seeds[0].share)
    lines = [
        f"{label} held-out success: overall {spread([e.heldout for e in seeds])}; "
        + "; ".join(f"{g} {spread([e.heldout_by_group[g] for e in seeds])}" for g in groups)
    ]
    for group in groups:
        if group in seeds[0].bucket_success:
            curve = [statistics.fmean(v) for v in zip(*(e.bucket_success[group] for e in seeds), strict=True)]
            cells = ", ".join(f"{b}: {v:.2f}" for b, v in enumerate(curve))
            lines.append(f"{label} held-out success per {group} bucket: {cells}")
    lines.append(
        f"{label} share of prompts: " + "; ".join(f"{g} {spread([e.share[g] for e in seeds])}" for g in groups)
    )
    lines.append(
        f"{label} unique rows seen: "
        + "; ".join(f"{g} {spread([e.unique[g] for e in seeds], 0)} of {seeds[0].rows[g]:,}" for g in groups)
    )
    for group in groups:
        mean = [statistics.fmean(v) for v in zip(*(e.draws_mean[group] for e in seeds), strict=True)]
        most = [max(v) for v in zip(*(e.draws_max[group] for e in seeds), strict=True)]
        if len(mean) == 1:
            lines.append(f"{label} draws per {group} row (mean/max, max over seeds): {mean[0]:.2f}/{most[0]}")
            continue
        cells = ", ".join(f"{b}: {m:.2f}/{x}" for b, (m, x) in enumerate(zip(mean, most, strict=True)))
        lines.append(f"{label} draws per {group} row by bucket (mean/max, max over seeds): {cells}")
    if seeds[0].tokens:
        lines.append(
            f"{label} tokens generated: "
            + "; ".join(f"{g} {statistics.fmean(e.tokens[g] for e in seeds):.3g}" for g in seeds[0].tokens)
        )
    lines.append(f"{label} unlocks: {unlock_summary(seeds)}")
    return "\n".join(lines)


@dataclass(frozen=True)
class StageArm:
    """One run of a stage as simulated: its name, sampler, batch shape and the seeds' results."""

    name: str
    sampler: str
    prompts: int
    responses: int
    steps: int
    results: Sequence[RunResult]


def stage_table(arms: Sequence[StageArm]) -> str:
    """A markdown table comparing the arms of one stage, mean ± sd over each arm's seeds.

    Columns per source group (the union over arms, in first-seen order): held-out success, share of prompts and
    unique rows seen; per group with a bucketed source, the draws per row in its hardest bucket (all its draws over
    its rows, and the most of one row); then the
    unlocks (newest unlocked interval at the end, mean update of unlocks 1, 5 and the last).
    """
    figures = {arm.name: [exposure(run) for run in arm.results] for arm in arms}
    groups: list[str] = []
    for seeds in figures.values():
        groups += [g for g in seeds[0].share if g not in groups]
    split = [
        g
        for g in groups
        if any(g in s[0].bucket_success or len(s[0].draws_max.get(g, [])) > 1 for s in figures.values())
    ]
    header = (
        ["run", "sampler", "prompts x responses, updates", "seeds"]
        + [f"held-out {g}" for g in groups]
        + [f"{g} share" for g in groups]
        + [f"unique {g} rows" for g in groups]
        + [f"draws/row on the hardest {g} bucket: mean, max" for g in split]
        + ["unlocks"]
    )
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]

    def cells(seeds: Sequence[Exposure], pick: Callable[[Exposure], float | None], digits: int = 3) -> str:
        values = [pick(e) for e in seeds]
        return spread([v for v in values if v is not None], digits) if any(v is not None for v in values) else "-"

    for arm in arms:
        seeds = figures[arm.name]
        row = [f"`{arm.name}`", arm.sampler, f"{arm.prompts} x {arm.responses}, {arm.steps}", str(len(seeds))]
        row += [cells(seeds, lambda e, g=g: e.heldout_by_group.get(g)) for g in groups]
        row += [cells(seeds, lambda e, g=g: e.share.get(g)) for g in groups]
        row += [
            cells(seeds, lambda e, g=g: e.unique.get(g), 0)
            + (f" of {seeds[0].rows[g]:,}" if g in seeds[0].rows else "")
            for g in groups
        ]
        for g in split:
            mean = cells(seeds, lambda e, g=g: e.draws_mean[g][-1] if g in e.draws_mean else None, 2)
            row.append(f"{mean}, {cells(seeds, lambda e, g=g: e.draws_max[g][-1] if g in e.draws_max else None, 1)}")
        row.append(unlock_summary(seeds))
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def plot_stage(stage: str, arms: Sequence[StageArm], path: Path) -> Path:
    """One figure for a stage: held-out success per group, share of prompts per group (smoothed over 9 updates)
    and the mean draws per row per bucket of each bucketed group at the end, mean over seeds."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(3, 1, figsize=(8, 10))
    styles = ("-", "--", ":", "-.")
    for index, arm in enumerate(arms):
        colour = f"C{index % 10}"
        groups = arm.results[0].groups
        for g_index, (group, sources) in enumerate(groups.items()):
            style = styles[g_index % len(styles)]
            rows = {s: len(arm.results[0].row_draws[s]) for s in sources}
            total = sum(rows.values())
            heldout = mean_curve(
                [
                    [sum(r.heldout_by_source[s][i] * rows[s] for s in sources) / total for i in range(len(r.heldout))]
                    for r in arm.results
                ]
            )
            axes[0].plot(heldout, style, color=colour, label=f"{arm.name}: {group}")
            shares = mean_curve(
                [
                    [
                        sum(r.prompts_by_source[s][i] for s in sources)
                        / max(1, sum(c[i] for c in r.prompts_by_source.values()))
                        for i in range(len(r.heldout))
                    ]
                    for r in arm.results
                ]
            )
            axes[1].plot(smooth(shares), style, color=colour, label=f"{arm.name}: {group}")
        seeds = [exposure(run) for run in arm.results]
        for group in seeds[0].draws_mean:
            if len(seeds[0].draws_mean[group]) > 1:
                mean = [statistics.fmean(v) for v in zip(*(e.draws_mean[group] for e in seeds), strict=True)]
                axes[2].plot(range(len(mean)), mean, "o-", color=colour, label=f"{arm.name}: {group}")
    axes[0].set_ylabel("held-out success")
    axes[1].set_ylabel("share of prompts")
    axes[1].set_xlabel("update")
    axes[0].set_xlabel("update")
    axes[2].set_xlabel("true difficulty bucket (0 = easiest 30%)")
    axes[2].set_ylabel("draws per row (whole run)")
    for ax in axes:
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=6)
    fig.suptitle(f"stage {stage}: mean over seeds", fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
