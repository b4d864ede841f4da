"""Build the training mixtures ``if{X}_logicif{Y}`` and the evaluation file, deterministically.

A mixture holds X instruction-following rows and Y LogicIF rows (row counts, as in RLIF's file names). Rows are
drawn without replacement with ``random.Random(seed)`` from the deduplicated source pools, after removing every
row whose prompt also occurs in the evaluation file; the pools are sorted by ``item_id`` first, so the result does
not depend on the order the source files were listed in. The evaluation file concatenates IFBench, IFEval and
LogicIFEval-mini rows in that order (its name, ``ifbench_{B}_ifeval_{E}_logicif_{L}``, follows RLIF's).

Overlap is checked two ways: identical prompts (whitespace-insensitive) and, for LogicIF, the same ``task_id``
(another test case of an evaluation function would leak the function).
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlif.data.files import read_source_rows, write_rows_atomic
from rlif.data.logicif_intervals import with_training_intervals
from rlif.data.sources import IF_SOURCES, LOGICIF_SOURCE, convert_row, prompt_key

MIXTURE_NAME = re.compile(r"^if(?P<if_count>\d+)_logicif(?P<logicif_count>\d+)$")
EVAL_NAME = re.compile(r"^ifbench_(?P<ifbench>\d+)_ifeval_(?P<ifeval>\d+)_logicif_(?P<logicif>\d+)$")


@dataclass(frozen=True)
class MixtureSpec:
    """One training mixture.

    Attributes:
        if_count: X, the number of instruction-following rows.
        logicif_count: Y, the number of LogicIF rows.
        seed: seed of the draw and the shuffle.
    """

    if_count: int
    logicif_count: int
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("if_count", "logicif_count", "seed"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"MixtureSpec.{name} must be a non-negative integer, got {value!r}")
        if self.if_count + self.logicif_count == 0:
            raise ValueError("MixtureSpec: a mixture needs at least one row (if_count + logicif_count > 0)")

    @property
    def name(self) -> str:
        """The file stem, ``if{X}_logicif{Y}``."""
        return f"if{self.if_count}_logicif{self.logicif_count}"

    @classmethod
    def from_name(cls, name: str, seed: int = 0) -> MixtureSpec:
        """Parse ``if{X}_logicif{Y}`` (with or without ``.parquet``).

        Raises:
            ValueError: the name does not have that form.
        """
        match = MIXTURE_NAME.match(Path(name).name.removesuffix(".parquet"))
        if match is None:
            raise ValueError(f"mixture name {name!r} is not of the form if{{X}}_logicif{{Y}}")
        return cls(int(match["if_count"]), int(match["logicif_count"]), seed)


@dataclass
class PoolReport:
    """What happened to the source rows on the way into a file (printed by the build command).

    Attributes:
        read: rows converted, per family (``if`` or ``logicif``).
        duplicates: rows dropped because an earlier row had the same prompt, per family.
        eval_overlap: rows dropped because their prompt or LogicIF task is in the evaluation file, per family.
    """

    read: dict[str, int] = field(default_factory=dict)
    duplicates: dict[str, int] = field(default_factory=dict)
    eval_overlap: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Overlap:
    """Training rows that also occur in the evaluation set.

    Attributes:
        same_prompt: ``item_id``s of training rows whose prompt is an evaluation prompt.
        same_task: ``item_id``s of LogicIF training rows whose ``task_id`` is an evaluation task.
    """

    same_prompt: tuple[str, ...]
    same_task: tuple[str, ...]

    def __bool__(self) -> bool:
        return bool(self.same_prompt or self.same_task)


def family_of(source: str) -> str:
    """``if`` for the instruction-following sources, ``logicif`` for LogicIF.

    Raises:
        ValueError: any other source (graph rows do not belong in these mixtures).
    """
    if source in IF_SOURCES:
        return "if"
    if source == LOGICIF_SOURCE:
        return "logicif"
    raise ValueError(f"data_source {source!r} is neither an IF source {sorted(IF_SOURCES)} nor {LOGICIF_SOURCE!r}")


def load_rows(paths: Iterable[Path], *, benchmark: str | None = None) -> list[dict[str, Any]]:
    """Read and convert every row of the given source files (see ``rlif.data.sources`` for the formats).

    Args:
        paths: source files.
        benchmark: ``ifeval`` or ``ifbench`` when the files are benchmark-format rows.

    Raises:
        ValueError: a row is malformed (names file, row and field).
    """
    rows = []
    for path in paths:
        for i, raw in enumerate(read_source_rows(Path(path))):
            rows.append(convert_row(raw, where=f"{path}: row {i}", benchmark=benchmark))
    return rows


def dedupe(rows: Iterable[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """Keep the first row of each prompt (and of each ``item_id``); return the kept rows and the number dropped."""
    seen_prompts: set[str] = set()
    seen_ids: set[str] = set()
    kept = []
    dropped = 0
    for row in rows:
        key = prompt_key(row["prompt"])
        item_id = row["extra_info"]["item_id"]
        if key in seen_prompts or item_id in seen_ids:
            dropped += 1
            continue
        seen_prompts.add(key)
        seen_ids.add(item_id)
        kept.append(row)
    return kept, dropped


def find_overlap(train_rows: Iterable[Mapping[str, Any]], eval_rows: Iterable[Mapping[str, Any]]) -> Overlap:
    """List training rows whose prompt, or LogicIF task, also occurs in the evaluation rows."""
    eval_prompts = set()
    eval_tasks = set()
    for row in eval_rows:
        eval_prompts.add(prompt_key(row["prompt"]))
        if row["data_source"] == LOGICIF_SOURCE and row["extra_info"].get("task_id"):
            eval_tasks.add(row["extra_info"]["task_id"])
    same_prompt = []
    same_task = []
    for row in train_rows:
        item_id = row["extra_info"]["item_id"]
        if prompt_key(row["prompt"]) in eval_prompts:
            same_prompt.append(item_id)
        elif row["data_source"] == LOGICIF_SOURCE and row["extra_info"].get("task_id") in eval_tasks:
            same_task.append(item_id)
    return Overlap(tuple(same_prompt), tuple(same_task))


def build_mixture(
    spec: MixtureSpec,
    source_rows: Sequence[dict[str, Any]],
    *,
    eval_rows: Sequence[Mapping[str, Any]] = (),
    report: PoolReport | None = None,
) -> list[dict[str, Any]]:
    """Draw a mixture from converted source rows.

    Args:
        spec: counts and seed.
        source_rows: converted rows of any IF and LogicIF sources (``load_rows``).
        eval_rows: rows of the evaluation file; training rows overlapping them are removed before drawing.
        report: filled with per-family counts when given.

    Returns:
        ``spec.if_count + spec.logicif_count`` rows, shuffled, with ``extra_info.split="train"`` and ``index``
        0..n-1. Same inputs and seed give the same rows in the same order.

    Raises:
        ValueError: a pool has fewer rows than asked for (after dedupe and overlap removal), or a row's source is
            neither IF nor LogicIF.
    """
    report = report if report is not None else PoolReport()
    pools: dict[str, list[dict[str, Any]]] = {"if": [], "logicif": []}
    for row in source_rows:
        pools[family_of(row["data_source"])].append(row)
    overlap = find_overlap(source_rows, eval_rows) if eval_rows else Overlap((), ())
    leaked = set(overlap.same_prompt) | set(overlap.same_task)
    wanted = {"if": spec.if_count, "logicif": spec.logicif_count}
    rng = random.Random(spec.seed)
    chosen: list[dict[str, Any]] = []
    for family in ("if", "logicif"):
        pool = sorted(pools[family], key=lambda r: r["extra_info"]["item_id"])
        report.read[family] = len(pool)
        pool, report.duplicates[family] = dedupe(pool)
        clean = [r for r in pool if r["extra_info"]["item_id"] not in leaked]
        report.eval_overlap[family] = len(pool) - len(clean)
        if len(clean) < wanted[family]:
            raise ValueError(
                f"{spec.name}: asked for {wanted[family]} {family} rows but only {len(clean)} remain "
                f"({report.read[family]} read, {report.duplicates[family]} duplicates, "
                f"{report.eval_overlap[family]} overlapping the evaluation set)"
            )
        chosen.extend(rng.sample(clean, wanted[family]))
    rng.shuffle(chosen)
    return _numbered(chosen, "train")


def eval_file_name(rows: Sequence[Mapping[str, Any]]) -> str:
    """``ifbench_{B}_ifeval_{E}_logicif_{L}.parquet`` from the rows' sources."""
    counts = {s: sum(1 for r in rows if r["data_source"] == s) for s in ("ifbench", "ifeval", "logicif")}
    return f"ifbench_{counts['ifbench']}_ifeval_{counts['ifeval']}_logicif_{counts['logicif']}.parquet"


def build_eval_rows(
    *,
    ifbench: Sequence[Path] = (),
    ifeval: Sequence[Path] = (),
    logicif: Sequence[Path] = (),
    training_file: Path | None = None,
) -> list[dict[str, Any]]:
    """Convert the benchmark files into evaluation rows (IFBench, then IFEval, then LogicIFEval-mini).

    Args:
        ifbench: IFBench jsonl files.
        ifeval: IFEval jsonl files.
        logicif: LogicIFEval rows (jsonl or parquet).
        training_file: a training file whose LogicIF curriculum cut the LogicIF rows are placed in
            (``extra_info.training_interval``, see ``rlif.data.logicif_intervals``); None leaves the field out.

    Returns:
        Rows with ``extra_info.split="test"`` and ``index`` 0..n-1, duplicates removed.

    Raises:
        ValueError: no file given, or a malformed row.
    """
    if not (ifbench or ifeval or logicif):
        raise ValueError("the evaluation set needs at least one of the IFBench, IFEval or LogicIFEval files")
    rows = load_rows(ifbench, benchmark="ifbench") + load_rows(ifeval, benchmark="ifeval") + load_rows(logicif)
    for row in rows:
        if row["data_source"] not in {"ifbench", "ifeval", LOGICIF_SOURCE}:
            raise ValueError(f"evaluation row {row['extra_info']['item_id']} has training source {row['data_source']}")
    kept, _ = dedupe(rows)
    if training_file is not None:
        kept = with_training_intervals(kept, training_file)
    return _numbered(kept, "test")


def _numbered(rows: Sequence[dict[str, Any]], split: str) -> list[dict[str, Any]]:
    return [{**r, "extra_info": {**r["extra_info"], "split": split, "index": i}} for i, r in enumerate(rows)]


def write_mixture(rows: Sequence[dict[str, Any]], spec: MixtureSpec, out_dir: Path) -> Path:
    """Write a mixture to ``out_dir/if{X}_logicif{Y}.parquet`` atomically and return the path."""
    return write_rows_atomic(rows, Path(out_dir) / f"{spec.name}.parquet")


def write_eval(rows: Sequence[dict[str, Any]], out_dir: Path) -> Path:
    """Write evaluation rows to ``out_dir/ifbench_{B}_ifeval_{E}_logicif_{L}.parquet`` atomically."""
    return write_rows_atomic(rows, Path(out_dir) / eval_file_name(rows))
