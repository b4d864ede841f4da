"""Small test matrices built on the shipped matrix's defaults."""

from __future__ import annotations

import yaml

from rlif.runs.matrix import SHIPPED_MATRIX
from rlif.runs.spec import deep_merge


def with_shipped_defaults(text: str) -> str:
    """A test matrix's YAML with the shipped ``defaults:`` under its own: the loader has no defaults of its own, so
    a small matrix states only what it tests and takes every other setting from the one place defaults live."""
    data = yaml.safe_load(text)
    shipped = yaml.safe_load(SHIPPED_MATRIX.read_text(encoding="utf-8"))["defaults"]
    data["defaults"] = deep_merge(shipped, data.get("defaults") or {})
    return yaml.safe_dump(data, sort_keys=False)
