"""Reading source files and writing verl parquet files without ever leaving a half-written file behind.

A training job that finds ``verl_data/if1000_logicif1000.parquet`` trusts it. So parquet files are written through
``rlif.atomic_files`` (a hidden temporary file renamed into place once complete); an interrupted build leaves at
most a ``.*.partial`` file, which no pattern that selects data matches.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from rlif.atomic_files import atomic_write
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


def write_rows_atomic(
    rows: Sequence[dict[str, Any]],
    path: Path,
    *,
    schema: pa.Schema | None = SCHEMA,
    metadata: Mapping[str, str] | None = None,
) -> Path:
    """Write verl rows to a parquet file, atomically: the one parquet writer of rlif's data builders.

    Args:
        rows: rows in the verl shape (see ``rlif.data.rows``); with rlif's schema, ``extra_info`` task fields may
            be absent.
        path: destination ``.parquet`` file; its directory is created.
        schema: the arrow schema, rlif's fixed one by default so that every IF and LogicIF file has the same column
            types whatever its sources; ``None`` infers it from the rows (graph rows, whose ``extra_info`` holds
            the graph fields instead).
        metadata: key-value pairs stored in the parquet footer (e.g. which upstream file a conversion came from).

    Returns:
        ``path``.

    Raises:
        ValueError: a row does not fit the schema (arrow's message names the offending value).
    """
    path = Path(path)
    try:
        if schema is None:
            table = pa.Table.from_pylist(list(rows))
        else:
            table = pa.Table.from_pylist([_fill_extra_info(r, schema) for r in rows], schema=schema)
        if metadata:
            table = table.replace_schema_metadata({k.encode(): v.encode() for k, v in metadata.items()})
    except (pa.ArrowInvalid, pa.ArrowTypeError) as err:
        raise ValueError(f"{path}: rows do not fit the rlif parquet schema ({err})") from err
    return atomic_write(path, lambda partial: pq.write_table(table, partial))


def _fill_extra_info(row: dict[str, Any], schema: pa.Schema) -> dict[str, Any]:
    extra = dict(row["extra_info"])
    for name in schema.field("extra_info").type:
        extra.setdefault(name.name, None)
    return {**row, "extra_info": extra}
