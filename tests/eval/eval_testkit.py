"""Builders shared by the evaluation tests: evaluation parquet files and responses files in the shapes users have."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from rlif.data.files import write_rows_atomic
from rlif.data.sources import convert_row

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
"""``shared/data`` beside the checkout."""


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def write_jsonl(path: Path, records: Iterable[Mapping[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def benchmark_eval_file(path: Path, benchmark: str, rows: Iterable[Mapping[str, Any]]) -> Path:
    """An rlif evaluation parquet of IFEval/IFBench benchmark rows, built by rlif's own converter."""
    out = []
    for index, raw in enumerate(rows):
        row = convert_row(raw, where=f"{benchmark} row {index}", benchmark=benchmark)
        row["extra_info"].update(split="test", index=index)
        out.append(row)
    return write_rows_atomic(out, path)


def verl_file(path: Path, rows: list[dict[str, Any]]) -> Path:
    """A parquet of arbitrary verl rows (graph and math rows have their own ``extra_info`` fields)."""
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def verl_row(source: str, item_id: str, prompt: str, ground_truth: str, **extra: Any) -> dict[str, Any]:
    return {
        "data_source": source,
        "prompt": [{"role": "user", "content": prompt}],
        "ability": "test",
        "reward_model": {"style": "rule", "ground_truth": ground_truth},
        "extra_info": {"split": "test", "index": 0, "item_id": item_id, "difficulty": 0.0, **extra},
    }
