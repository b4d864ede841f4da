"""Evaluation output files and their JSON spellings.

They are written with ``rlif.atomic_files`` (temporary file, then rename), so an interrupted evaluation leaves the
previous results intact.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
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
