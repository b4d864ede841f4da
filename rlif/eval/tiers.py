"""The benchmarks of one evaluated step: ``eval/<run>/<step>/benchmarks.json`` and a folder per benchmark.

A run whose matrix lists ``eval.benchmarks`` is evaluated one benchmark at a time, each with its own n and length,
into ``<step>/<benchmark>/`` (``metrics.json``, ``samples.jsonl``, ``metrics.md``), and its job writes
``<step>/benchmarks.json``: per benchmark its folder, tier, files, n, max tokens and headline keys. The fast tier
is what an ablation chain may select on; the full tier (benchmarks' test files) is reported, never selected on. A
step without ``benchmarks.json`` is one evaluation in ``<step>/`` itself, read as a single fast-tier benchmark.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlif.eval.outputs import METRICS_FILE, SAMPLES_FILE
from rlif.jsonl import read_json_lines

MANIFEST_FILE = "benchmarks.json"
FAST, FULL = "fast", "full"


@dataclass(frozen=True)
class Benchmark:
    """One benchmark of an evaluated step.

    Attributes:
        name: its name (``""`` for a step evaluated without benchmarks).
        directory: its folder (metrics, samples).
        tier: ``fast`` or ``full``.
        n: samples per prompt (None when unknown).
        max_tokens: generation limit (None when unknown).
        headline: its headline flat keys.
    """

    name: str
    directory: Path
    tier: str
    n: int | None = None
    max_tokens: int | None = None
    headline: tuple[str, ...] = ()

    def metrics(self) -> dict[str, Any] | None:
        """Its ``metrics.json``, or None before it is written."""
        path = self.directory / METRICS_FILE
        return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None

    def records(self) -> list[Mapping[str, Any]]:
        """Its scored samples (empty when ``samples.jsonl`` is missing)."""
        path = self.directory / SAMPLES_FILE
        return [record for _, record in read_json_lines(path)] if path.is_file() else []


def benchmarks(step_dir: Path) -> list[Benchmark]:
    """The benchmarks evaluated at ``step_dir``, in the manifest's order.

    Raises:
        ValueError: ``benchmarks.json`` is not valid JSON or lacks a benchmark's ``tier``.
    """
    step_dir = Path(step_dir)
    path = step_dir / MANIFEST_FILE
    if not path.is_file():
        return [Benchmark("", step_dir, FAST)]
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        entries = document["benchmarks"]
        return [
            Benchmark(
                name,
                step_dir / str(entry.get("dir", name)),
                str(entry["tier"]),
                entry.get("n"),
                entry.get("max_tokens"),
                tuple(entry.get("headline") or ()),
            )
            for name, entry in entries.items()
        ]
    except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as err:
        raise ValueError(f"{path}: not a benchmarks file ({err})") from None


def is_evaluated(step_dir: Path) -> bool:
    """Whether ``step_dir`` holds results: its own ``metrics.json``, or every fast-tier benchmark's."""
    fast = [b for b in benchmarks(step_dir) if b.tier == FAST]
    return bool(fast) and all((b.directory / METRICS_FILE).is_file() for b in fast)


def tier_records(step_dir: Path, tier: str) -> tuple[list[Mapping[str, Any]], list[str]]:
    """The scored samples of the ``tier`` benchmarks of ``step_dir``, and the benchmarks whose samples are missing."""
    records: list[Mapping[str, Any]] = []
    missing = []
    for b in benchmarks(step_dir):
        if b.tier != tier:
            continue
        if not (b.directory / SAMPLES_FILE).is_file():
            missing.append(b.name)
            continue
        records += b.records()
    return records, missing
