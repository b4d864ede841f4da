"""Ablation chains: a stage takes settings from the winner of an earlier stage, chosen by a named metric.

The NP-graph plan is a chain (best data volume by GraphArena accuracy, then curriculum vs mixed on it, then the
reward variants on that, then other base models), and so is the IF plan. Picking a winner by hand from a table is
where chains go wrong, so the choice is a pure function of evaluation results: ``resolve`` ranks the candidate
runs by the metric (higher wins unless ``rlif.eval.metrics.lower_is_better``), says which run won and by how much,
and refuses, listing every missing result, while any candidate has not been evaluated on that metric. An exact tie
goes to the candidate listed first, and the explanation says so.

Results are flat metrics (``metrics.json``'s ``metrics`` from ``python -m rlif.eval score``) per run;
``latest_results`` reads them from ``<eval root>/<run>/<step>/metrics.json``, the newest step of each run.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlif.eval.metrics import lower_is_better
from rlif.eval.outputs import METRICS_FILE, read_metrics


@dataclass(frozen=True)
class Link:
    """One link of a chain: take ``settings`` from the best of ``candidates`` (an earlier stage) by ``metric``.

    Attributes:
        stage: the stage whose runs inherit (for messages).
        from_stage: the earlier stage (for messages).
        candidates: the earlier stage's run names.
        metric: a flat metric key, e.g. ``graph/optimal_rate`` or ``ifeval/prompt_level_loose_acc``.
        settings: names of the settings the winner passes on (the generator copies their values).
    """

    stage: str
    from_stage: str
    candidates: tuple[str, ...]
    metric: str
    settings: tuple[str, ...] = ()


@dataclass(frozen=True)
class Resolution:
    """The outcome of one link.

    Attributes:
        link: the link resolved.
        winner: the winning run.
        ranking: every candidate with its value, best first.
        margin: the winner's lead over the runner-up (0 on a tie; None with a single candidate).
        inherited: the winner's values of ``link.settings``.
    """

    link: Link
    winner: str
    ranking: tuple[tuple[str, float], ...]
    margin: float | None
    inherited: Mapping[str, Any] = field(default_factory=dict)

    def explain(self) -> str:
        """One line for the generator's output: who won, on what, by how much."""
        link, (best, value) = self.link, self.ranking[0]
        direction = "lowest" if lower_is_better(link.metric) else "highest"
        text = (
            f"stage {link.stage}: {best} wins stage {link.from_stage} with the {direction} {link.metric} = {value:.4f}"
        )
        if self.margin is None:
            return text + " (the only candidate)"
        runner_up, second = self.ranking[1]
        if self.margin == 0:
            return text + f", tied with {runner_up} (the first listed candidate wins a tie)"
        return text + f", ahead of {runner_up} ({second:.4f}) by {self.margin:.4f}"


class MissingResultsError(ValueError):
    """Some candidates have no result for the link's metric; the message lists all of them."""


def resolve(
    link: Link,
    results: Mapping[str, Mapping[str, float]],
    settings_of: Mapping[str, Mapping[str, Any]] | None = None,
) -> Resolution:
    """Pick the winner of ``link`` from ``results`` (run name -> flat metrics).

    Args:
        link: the link.
        results: each evaluated run's flat metrics.
        settings_of: each candidate's settings, from which the winner's ``link.settings`` are copied.

    Raises:
        ValueError: the link has no candidates, or the winner lacks one of ``link.settings``.
        MissingResultsError: a candidate has no results, or none for the metric (all such candidates are listed).
    """
    if not link.candidates:
        raise ValueError(f"stage {link.stage}: stage {link.from_stage} has no runs to choose from")
    missing = []
    values: list[tuple[str, float]] = []
    for run in link.candidates:
        metrics = results.get(run)
        value = None if metrics is None else metrics.get(link.metric)
        if metrics is None:
            missing.append(f"{run} (not evaluated)")
        elif value is None or not math.isfinite(value):
            missing.append(f"{run} (no {link.metric})")
        else:
            values.append((run, float(value)))
    if missing:
        raise MissingResultsError(
            f"stage {link.stage} cannot choose from stage {link.from_stage} by {link.metric}: "
            f"missing results for {', '.join(missing)}"
        )
    sign = -1.0 if lower_is_better(link.metric) else 1.0
    ranking = tuple(sorted(values, key=lambda item: -sign * item[1]))  # stable: ties keep the listed order
    margin = abs(ranking[0][1] - ranking[1][1]) if len(ranking) > 1 else None
    winner = ranking[0][0]
    inherited: dict[str, Any] = {}
    if link.settings:
        own = (settings_of or {}).get(winner, {})
        absent = [name for name in link.settings if name not in own]
        if absent:
            raise ValueError(f"stage {link.stage}: the winning run {winner} has no setting {absent[0]!r} to pass on")
        inherited = {name: own[name] for name in link.settings}
    return Resolution(link, winner, ranking, margin, inherited)


def latest_results(eval_root: Path, runs: Sequence[str]) -> dict[str, dict[str, float]]:
    """The flat metrics of each run's newest evaluation under ``eval_root`` (runs never evaluated are left out).

    ``<eval_root>/<run>/<step>/metrics.json`` with the largest numeric step wins; a ``metrics.json`` directly in
    ``<eval_root>/<run>/`` counts as step -1.

    Raises:
        ValueError: a results file is not valid JSON or has no ``metrics`` object (names the file).
    """
    out = {}
    for run in runs:
        directory = Path(eval_root) / run
        found = [(-1, directory / METRICS_FILE)] if (directory / METRICS_FILE).is_file() else []
        if directory.is_dir():
            found += [(int(p.parent.name), p) for p in directory.glob(f"*/{METRICS_FILE}") if p.parent.name.isdigit()]
        if found:
            out[run] = read_metrics(max(found)[1])
    return out
