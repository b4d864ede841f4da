"""Reading source files and writing verl parquet files without ever leaving a half-written file behind.

A training job that finds ``verl_data/if1000_logicif1000.parquet`` trusts it. So every writer here writes to a
hidden temporary file in the same directory and renames it into place only once it is complete (``os.replace``
is atomic on one filesystem); an interrupted build leaves at most a ``.*.partial`` file, which no pattern that
selects data matches.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from rlif.data.schema import SCHEMA, iter_parquet_rows, one_line

SOURCE_SUFFIXES = (".parquet", ".jsonl", ".json")
"""File types the builders read: parquet (HF datasets, RLIF), JSON lines (IFEval, IFBench), JSON arrays."""


def read_source_rows(path: Path) -> Iterator[dict[str, Any]]:
    """Yield the rows of a source file as plain dicts, in file order.

    Args:
        path: a ``.parquet``, ``.jsonl`` or ``.json`` (a list of objects) file.

    Raises:
        ValueError: unsupported suffix, an unreadable file (missing, no permission, corrupt parquet data), a line
            that is not a JSON object, or a JSON file that is not a list of objects; one line naming the file.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        yield from iter_parquet_rows(path)
    elif suffix == ".jsonl":
        try:
            with path.open(encoding="utf-8") as handle:
                for line_no, line in enumerate(handle, start=1):
                    if not line.strip():
                        continue
                    yield _json_object(line, f"{path}: line {line_no}")
        except (OSError, UnicodeDecodeError) as err:
            raise ValueError(f"{path}: cannot read ({one_line(err)})") from err
    elif suffix == ".json":
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as err:
            raise ValueError(f"{path}: cannot read ({one_line(err)})") from err
        except json.JSONDecodeError as err:
            raise ValueError(f"{path}: not valid JSON ({err.msg} at line {err.lineno})") from err
        if not isinstance(data, list):
            raise ValueError(f"{path}: expected a JSON list of row objects, got {type(data).__name__}")
        for i, item in enumerate(data):
            if not isinstance(item, dict):
                raise ValueError(f"{path}: row {i}: expected a JSON object, got {type(item).__name__}")
            yield item
    else:
        raise ValueError(f"{path}: unsupported source file type {suffix!r} (expected one of {SOURCE_SUFFIXES})")


def _json_object(text: str, where: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(f"{where}: not valid JSON ({err.msg})") from err
    if not isinstance(value, dict):
        raise ValueError(f"{where}: expected a JSON object, got {type(value).__name__}")
    return value


def write_rows_atomic(rows: Sequence[dict[str, Any]], path: Path, *, metadata: Mapping[str, str] | None = None) -> Path:
    """Write verl rows to ``path`` with rlif's fixed schema, atomically.

    Args:
        rows: rows in the verl shape (see ``rlif.data.schema``); ``extra_info`` task fields may be absent.
        path: destination ``.parquet`` file; its directory is created.
        metadata: key-value pairs stored in the parquet footer (e.g. which upstream file a conversion came from).

    Returns:
        ``path``.

    Raises:
        ValueError: a row does not fit the schema (arrow's message names the offending value).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        table = pa.Table.from_pylist([_fill_extra_info(r) for r in rows], schema=SCHEMA)
        if metadata:
            table = table.replace_schema_metadata({k.encode(): v.encode() for k, v in metadata.items()})
    except (pa.ArrowInvalid, pa.ArrowTypeError) as err:
        raise ValueError(f"{path}: rows do not fit the rlif parquet schema ({err})") from err
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    try:
        pq.write_table(table, partial)
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
    return path


def _fill_extra_info(row: dict[str, Any]) -> dict[str, Any]:
    extra = dict(row["extra_info"])
    for name in SCHEMA.field("extra_info").type:
        extra.setdefault(name.name, None)
    return {**row, "extra_info": extra}
