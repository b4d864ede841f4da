"""Writing evaluation outputs so that a reader never sees a half-written file.

Each file is written under a hidden temporary name in its directory and renamed into place when complete
(``os.replace`` is atomic on one filesystem), so an interrupted evaluation leaves the previous results intact.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

SAMPLES_FILE = "samples.jsonl"
METRICS_FILE = "metrics.json"
TABLES_FILE = "metrics.md"


def write_text_atomic(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` atomically (directories created)."""
    return write_lines_atomic(path, [text])


def write_lines_atomic(path: Path, chunks: Iterable[str]) -> Path:
    """Write the concatenated ``chunks`` to ``path`` atomically, streaming them (directories created)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    try:
        with partial.open("w", encoding="utf-8") as handle:
            for chunk in chunks:
                handle.write(chunk)
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
    return path


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
