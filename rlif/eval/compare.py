"""Paired comparison of two evaluations of one metric: ``python -m rlif.eval compare A B [--metric M]``.

Two evaluations are comparable when they scored (mostly) the same prompts with the same sampling; then each
shared unit is resampled once for both (``rlif.eval.intervals.paired_difference``), which keeps the units'
difficulty out of the interval. Prompts only one side scored are left out and counted. A trained checkpoint
against its base model is a normal use; the steps compared are stated, never assumed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rewards.registry import families, find_family
from rlif.eval.intervals import Difference, paired_difference
from rlif.eval.metrics import lower_is_better
from rlif.eval.outputs import METRICS_FILE, SAMPLES_FILE
from rlif.eval.units import by_source, metric_units, ratio_of_sums
from rlif.jsonl import read_json_lines

MIN_OVERLAP = 0.9
"""Share of the larger evaluation's prompts both must have scored: below it the two measured different things."""

SAMPLING_IGNORED = ("seed",)
"""Sampling settings that may differ between comparable evaluations (a different seed is another draw)."""


@dataclass(frozen=True)
class Evaluated:
    """One evaluation read back: its ``metrics.json`` header and its scored samples.

    Attributes:
        directory: the evaluation's output directory.
        header: ``metrics.json`` without the metrics.
        records: ``samples.jsonl``'s records.
    """

    directory: Path
    header: Mapping[str, Any]
    records: Sequence[Mapping[str, Any]]

    def describe(self) -> str:
        """What was evaluated, in words: the model (with its step when it is a checkpoint) and where."""
        model = self.header.get("model_description") or self.header.get("model") or self.header.get("responses")
        return f"{model or 'responses'} ({self.directory})"


@dataclass(frozen=True)
class Comparison:
    """The outcome of ``compare``.

    Attributes:
        metric: the flat metric compared.
        difference: ``A - B`` over the shared units, its interval and the verdict.
        shared: prompts both scored; only_a, only_b: prompts one side alone scored (left out).
        lines: the printed report.
    """

    metric: str
    difference: Difference
    shared: int
    only_a: int
    only_b: int
    lines: tuple[str, ...]


def load_evaluation(path: Path) -> Evaluated:
    """Read an evaluation directory (or its ``metrics.json``).

    Raises:
        ValueError: no ``metrics.json`` or ``samples.jsonl`` there, or either is malformed (names the file).
    """
    directory = Path(path).parent if Path(path).name == METRICS_FILE else Path(path)
    metrics_path, samples_path = directory / METRICS_FILE, directory / SAMPLES_FILE
    for needed in (metrics_path, samples_path):
        if not needed.is_file():
            raise ValueError(f"{needed}: not found (an evaluation directory of python -m rlif.eval holds it)")
    try:
        document = json.loads(metrics_path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ValueError(f"{metrics_path}: not valid JSON ({err.msg})") from None
    header = {k: v for k, v in document.items() if k not in ("sources", "metrics", "intervals")}
    records = [record for _, record in read_json_lines(samples_path)]
    return Evaluated(directory, header, records)


def default_metric(evaluation: Evaluated) -> str:
    """The headline of the evaluation's family: its mean over sources when the family declares one, else its one
    source's headline (e.g. ``ifeval/prompt_level_strict_acc``).

    Raises:
        ValueError: the samples span several families or sources without one headline; names the choices.
    """
    sources = sorted(by_source(evaluation.records))
    choices = []
    for family in families():
        own = [s for s in sources if find_family(s) is family]
        headline = family.evaluation.headline
        if not own or headline is None:
            continue
        mean = family.evaluation.source_mean
        choices += [f"{mean.prefix}/{headline}"] if mean is not None else [f"{s}/{headline}" for s in own]
    if len(choices) == 1:
        return choices[0]
    raise ValueError(f"--metric: needed, these samples have several headlines: {', '.join(choices) or 'none'}")


def sampling_differences(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[str]:
    """``"name: A vs B"`` for each sampling setting that differs (``SAMPLING_IGNORED`` aside)."""
    sa, sb = a.get("sampling"), b.get("sampling")
    if not isinstance(sa, Mapping) or not isinstance(sb, Mapping):
        return []
    keys = sorted((set(sa) | set(sb)) - set(SAMPLING_IGNORED))
    return [f"{key}: {sa.get(key)!r} vs {sb.get(key)!r}" for key in keys if sa.get(key) != sb.get(key)]


def compare(a: Evaluated, b: Evaluated, metric: str | None = None, *, seed: int = 0) -> Comparison:
    """The paired difference ``A - B`` of ``metric`` (default: ``default_metric(a)``) over the prompts both scored.

    Raises:
        ValueError: the sampling settings differ (each difference named), the prompt sets overlap less than
            ``MIN_OVERLAP``, or the metric has no per-prompt values in either evaluation.
    """
    metric = metric or default_metric(a)
    differing = sampling_differences(a.header, b.header)
    if differing:
        raise ValueError(f"A and B were sampled differently ({'; '.join(differing)}): not comparable")
    prompts_a = {(r["data_source"], r["id"]) for r in a.records}
    prompts_b = {(r["data_source"], r["id"]) for r in b.records}
    shared = prompts_a & prompts_b
    larger = max(len(prompts_a), len(prompts_b))
    if len(shared) < MIN_OVERLAP * larger:
        raise ValueError(
            f"A and B share {len(shared)} of {larger} prompts (A {len(prompts_a)}, B {len(prompts_b)}): "
            f"fewer than {MIN_OVERLAP:.0%}, they measured different things"
        )
    units_a = metric_units([r for r in a.records if (r["data_source"], r["id"]) in shared], metric)
    units_b = metric_units([r for r in b.records if (r["data_source"], r["id"]) in shared], metric)
    order = sorted(set(units_a) & set(units_b))
    pick = lambda units: ([units[u][0] for u in order], [units[u][1] for u in order])  # noqa: E731
    difference = paired_difference(
        pick(units_a), pick(units_b), seed=seed, higher_is_better=not lower_is_better(metric)
    )
    iv = difference.interval
    value_a = ratio_of_sums({u: units_a[u] for u in order})
    value_b = ratio_of_sums({u: units_b[u] for u in order})
    lines = [
        f"A: {a.describe()}",
        f"B: {b.describe()}",
        f"metric: {metric}" + (" (lower is better)" if lower_is_better(metric) else ""),
        f"prompts: {len(shared)} shared ({len(prompts_a - shared)} only in A, {len(prompts_b - shared)} only in B, "
        f"left out); units: {iv.units}",
        f"A = {value_a:.4f}, B = {value_b:.4f}",
        f"A - B = {iv.value:+.4f}, {iv.level:.0%} interval [{iv.low:+.4f}, {iv.high:+.4f}] "
        "(paired bootstrap over prompts)",
        f"verdict: {difference.verdict}",
    ]
    if "sampling" not in a.header or "sampling" not in b.header:
        lines.insert(3, "note: sampling settings unknown for a scored response file; they were not checked")
    return Comparison(metric, difference, len(shared), len(prompts_a - shared), len(prompts_b - shared), tuple(lines))
