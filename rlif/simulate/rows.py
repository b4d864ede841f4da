"""The training rows a matrix run would see, per source: from its files when they are at hand, else from its name.

Repetition is a property of pool sizes: 512 prompts an update over 500 updates draw 256,000 prompts, more than the
stage-2 file's 80,000 rows, so the simulator draws from pools as large as the run's own data. The real files give
row counts and difficulties per ``data_source``; without them the name states the mix as the run planner reads it
(``if{X}_logicif{Y}.parquet``: X IF rows as ``iftrain``, Y LogicIF rows; ``6np_{V}/train_mixed.parquet``: V rows
over the six graph tasks).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rlif.simulate.core import GRAPH_TASKS, LearnerConfig, Strategy

_STAGE2_NAME = re.compile(r"if(\d+)_logicif(\d+)\.parquet$")
_GRAPH_NAME = re.compile(r"6np_(\d+)/train_mixed\.parquet$")


@dataclass(frozen=True)
class SourceRows:
    """Rows per source of a run's training data and, when read from the files, each row's difficulty.

    Attributes:
        counts: rows per ``data_source``.
        difficulties: ``extra_info.difficulty`` of each row per source (empty when the counts come from names).
        origin: where the counts come from (``files``, ``names``, ``--rows``), for the report.
    """

    counts: Mapping[str, int]
    difficulties: Mapping[str, Sequence[float]] = field(default_factory=dict)
    origin: str = "names"


def rows_from_name(name: str) -> dict[str, int] | None:
    """The rows per source a training file's name states, None for a name that states none."""
    match = _STAGE2_NAME.search(name)
    if match:
        return {"iftrain": int(match.group(1)), "logicif": int(match.group(2))}
    match = _GRAPH_NAME.search(name)
    if match:
        total = int(match.group(1))
        share, extra = divmod(total, len(GRAPH_TASKS))
        return {f"graph/{task}": share + (index < extra) for index, task in enumerate(GRAPH_TASKS)}
    return None


def rows_from_file(path: Path) -> tuple[dict[str, int], dict[str, list[float]]]:
    """Rows per source and each row's difficulty, read from a verl training parquet (``data_source`` and
    ``extra_info.difficulty`` only)."""
    import pyarrow.parquet as pq

    table = pq.read_table(path, columns=["data_source", "extra_info"])
    sources = table.column("data_source").to_pylist()
    extra = table.column("extra_info").combine_chunks()
    difficulty = extra.field("difficulty").to_pylist()
    counts: dict[str, int] = {}
    values: dict[str, list[float]] = {}
    for source, value in zip(sources, difficulty, strict=True):
        counts[source] = counts.get(source, 0) + 1
        values.setdefault(source, []).append(0.0 if value is None else float(value))
    return counts, values


def run_rows(train_files: Sequence[str], root: Path) -> SourceRows | None:
    """The run's rows per source: its files when every one exists under ``root``, else their names; None when a
    file is absent and its name states no mix (the simulator then uses its default pool size)."""
    if train_files and all((root / name).is_file() for name in train_files):
        counts: dict[str, int] = {}
        values: dict[str, list[float]] = {}
        for name in train_files:
            file_counts, file_values = rows_from_file(root / name)
            for source, count in file_counts.items():
                counts[source] = counts.get(source, 0) + count
                values.setdefault(source, []).extend(file_values[source])
        return SourceRows(counts, values, "files")
    counts = {}
    for name in train_files:
        stated = rows_from_name(name)
        if stated is None:
            return None
        for source, count in stated.items():
            counts[source] = counts.get(source, 0) + count
    return SourceRows(counts, {}, "names") if counts else None


def parse_rows(texts: Sequence[str]) -> dict[str, int]:
    """``--rows SOURCE=N`` options as a mapping.

    Raises:
        ValueError: no ``=``, an empty source, or a count that is not a non-negative integer.
    """
    counts = {}
    for text in texts:
        source, sep, value = text.partition("=")
        if not sep or not source.strip() or not value.strip().isdigit():
            raise ValueError(f"--rows {text!r}: expected SOURCE=N with N a non-negative integer, e.g. logicif=40000")
        counts[source.strip()] = int(value)
    return counts


def run_config(
    run: Any,
    learner: str,
    steps: int | None = None,
    rows: int = 2000,
    *,
    root: Path = Path("."),
    source_rows: Mapping[str, int] | None = None,
    **options: Any,
) -> tuple[Strategy, LearnerConfig]:
    """The policy and learner of a matrix run: its sampler name, params and batch shape, its data family and rows.

    Args:
        run: an ``rlif.runs.matrix.RunSpec``.
        learner: one of ``LEARNERS``.
        steps: training steps (None: the run's ``total_training_steps``; a run that leaves it at 0 trains as many
            as its rows give over ``total_epochs``).
        rows: rows per source when neither the files nor their names give any.
        root: what the run's ``train_files`` are relative to.
        source_rows: rows per source that replace (or add to) what the files or names give (``--rows``).
        **options: further ``LearnerConfig`` fields (``forgetting``, ``interference``, ``response_tokens``).
    """
    graph = run.stage.startswith("graph") or any("graph" in path for path in run.train_files)
    found = run_rows(run.train_files, root)
    # a chained run inherits the defaults' files until its winner is known: counts of the other family are not its own
    stated = {s: n for s, n in (found.counts if found else {}).items() if s.startswith("graph/") == graph}
    counts = {**stated, **(source_rows or {})}
    difficulties = found.difficulties if found else {}
    steps = steps or run.train.total_training_steps
    if not steps:
        total = sum(counts.values()) if counts else rows * (6 if graph else 2)
        steps = max(1, total // run.train.train_batch_size * run.train.total_epochs)
    config = LearnerConfig(
        rows=rows,
        prompts=run.train.train_batch_size,
        responses=run.train.rollout_n,
        steps=steps,
        learner=learner,
        data="graph" if graph else "stage2",
        source_rows=counts,
        difficulties=difficulties,
    )
    return Strategy(run.name, run.sampler.name, dict(run.sampler.params)), replace(config, **options)
