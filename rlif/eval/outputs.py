"""Evaluation output files and their JSON spellings.

They are written with ``rlif.atomic_files`` (temporary file, then rename), so an interrupted evaluation leaves the
previous results intact.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

SAMPLES_FILE = "samples.jsonl"
METRICS_FILE = "metrics.json"
TABLES_FILE = "metrics.md"


def json_line(record: Mapping[str, Any]) -> str:
    """One JSON line, UTF-8 kept."""
    return json.dumps(record, ensure_ascii=False) + "\n"


def json_document(value: Any) -> str:
    """Indented standard JSON: NaN (a metric with nothing to average) becomes null, which every reader accepts."""
    return json.dumps(_without_nan(value), indent=1, ensure_ascii=False, allow_nan=False) + "\n"


def _without_nan(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, Mapping):
        return {key: _without_nan(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_without_nan(item) for item in value]
    return value


def read_metrics(path: Path) -> dict[str, float]:
    """The flat metrics of an evaluation's ``metrics.json``: every finite number under ``metrics``.

    Raises:
        ValueError: not JSON, or no ``metrics`` object (one line naming the file).
    """
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}: not valid JSON ({err.msg})") from None
    metrics = document.get("metrics") if isinstance(document, Mapping) else None
    if not isinstance(metrics, Mapping):
        raise ValueError(f"{path}: no 'metrics' object: not an evaluation result of python -m rlif.eval")
    return {key: float(value) for key, value in metrics.items() if is_finite_number(value)}


def is_finite_number(value: Any) -> bool:
    """A JSON number that is a metric value: int or float, not bool, not NaN or infinite."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
