"""Plain-text tables of validated data files, shared by the download and build commands."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rlif.data.mixtures import EVAL_NAME, MIXTURE_NAME
from rlif.data.schema import FileSummary


def file_kind(path: Path) -> str:
    """``mixture``, ``eval`` or ``other``, from the file name."""
    stem = Path(path).name.removesuffix(".parquet")
    if MIXTURE_NAME.match(stem):
        return "mixture"
    if EVAL_NAME.match(stem):
        return "eval"
    return "other"


def format_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Left-aligned columns separated by two spaces, with a dashed rule under the header."""
    widths = [max(len(str(c)) for c in column) for column in zip(headers, *rows, strict=False)]
    lines = [
        "  ".join(str(c).ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() for line in [headers, *rows]
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def summary_table(summaries: Sequence[FileSummary], root: Path | None = None) -> str:
    """One line per file: name (relative to ``root``), kind, rows, rows per source, rows per split."""
    rows = []
    for s in summaries:
        name = str(s.path.relative_to(root)) if root is not None and s.path.is_relative_to(root) else str(s.path)
        sources = ", ".join(f"{k}={v}" for k, v in sorted(s.sources.items()))
        splits = ", ".join(f"{k}={v}" for k, v in sorted(s.splits.items()))
        rows.append([name, file_kind(s.path), str(s.rows), sources, splits])
    return format_table(["file", "kind", "rows", "sources", "splits"], rows)
