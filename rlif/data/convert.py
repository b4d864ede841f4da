"""Convert whole files in RLIF's verl row format (the group's ``if{X}_logicif{Y}.parquet`` files) to rlif's schema.

RLIF's parquet rows already have verl's five columns, but not what rlif's samplers, feedback and validation rely
on: no ``extra_info.item_id`` or ``difficulty``, ground truth in RLIF's own spelling, LogicIF rows under several
``data_source`` names. Each row goes through ``rlif.data.sources.convert_row``, the converter the mixture builder
uses for the same format, so a downloaded file and a file built from the same rows come out identical: ground
truth rewritten by the owning reward family (and so checked), LogicIF ``complexity_score``/``difficulty`` from
the function source or the stored score, a stable content ``item_id``. Row order is kept and ``index`` is the
position; ``split`` comes from the file's role (``test`` for the evaluation file, ``train`` otherwise).

The converted file records the upstream file's identity (``CONVERTED_FROM`` in the parquet footer), so a later
download recognises a file in ``verl_data/`` as the conversion of the Hub's unchanged file without fetching it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from rlif.data.files import read_source_rows, write_rows_atomic
from rlif.data.schema import EXTRA_INFO_REQUIRED, one_line, validate_table_schema
from rlif.data.sources import convert_row

CONVERTED_FROM = "rlif.converted_from"
"""Parquet footer key holding the identity of the upstream file a converted file was made from."""

RLIF_ROW_COLUMNS = ("prompt", "reward_model")
"""The columns that make a parquet file RLIF's verl row format (the rest of its columns may vary)."""


@dataclass(frozen=True)
class Conversion:
    """One converted file.

    Attributes:
        source: the upstream file.
        target: the converted file.
        rows: rows written (every row of the source).
        sources: rows per rlif ``data_source``.
        repeated: rows whose content repeats an earlier row's; kept, with ``#<k>`` appended to their ``item_id``
            so ids stay unique in the file.
    """

    source: Path
    target: Path
    rows: int
    sources: dict[str, int]
    repeated: int


def needs_conversion(path: Path) -> bool:
    """Whether ``path`` is a parquet file in RLIF's row format rather than rlif's own schema.

    A file whose columns already pass ``validate_table_schema`` is rlif's (validated as is); one that has
    ``prompt`` and ``reward_model`` but lacks rlif's ``extra_info`` fields is RLIF's. Anything else (not parquet,
    other columns) is left to validation, which names what is wrong.
    """
    try:
        schema = pq.read_schema(path)
    except (OSError, pa.ArrowException):
        return False
    try:
        validate_table_schema(schema, where=str(path))
    except ValueError:
        if not all(name in schema.names for name in RLIF_ROW_COLUMNS):
            return False
        # rlif's own file with one column missing or mistyped (its extra_info has rlif's fields) is validated, so
        # the message names that column, rather than converted and then blamed on its rows' ground truth.
        extra = schema.field("extra_info").type if "extra_info" in schema.names else None
        return not (
            extra is not None
            and pa.types.is_struct(extra)
            and all(extra.get_field_index(name) >= 0 for name in EXTRA_INFO_REQUIRED)
        )
    return False


def converted_from(path: Path) -> str | None:
    """The upstream identity recorded in a converted file's footer, or None (not a conversion, or unreadable)."""
    try:
        metadata = pq.read_schema(path).metadata or {}
    except (OSError, pa.ArrowException):
        return None
    value = metadata.get(CONVERTED_FROM.encode())
    return value.decode() if value is not None else None


def convert_rlif_file(source: Path, target: Path, *, split: str, source_id: str) -> Conversion:
    """Convert every row of an RLIF-format parquet file and write them to ``target`` atomically.

    Args:
        source: the RLIF-format file.
        target: the rlif-schema file to write (its folder is created).
        split: ``extra_info.split`` of every row (``test`` for an evaluation file, else ``train``).
        source_id: identity of the upstream file (the Hub's blob id), stored in the footer.

    Returns:
        What was written.

    Raises:
        ValueError: the file is unreadable or empty, or a row cannot be converted (one line naming file, row and
            field, e.g. a LogicIF row with neither a complexity score nor its function source).
        OSError: the converted file cannot be written (a full disk); the message names it and what to do.
    """
    rows = []
    seen: Counter[str] = Counter()
    repeated = 0
    for i, raw in enumerate(read_source_rows(source)):
        row = convert_row(raw, where=f"{source}: row {i}")
        info = row["extra_info"]
        seen[info["item_id"]] += 1
        if seen[info["item_id"]] > 1:
            repeated += 1
            info["item_id"] = f"{info['item_id']}#{seen[info['item_id']]}"
        info["split"] = split
        info["index"] = i
        rows.append(row)
    if not rows:
        raise ValueError(f"{source}: 0 rows (an empty data file; a training or validation set needs at least one row)")
    try:
        write_rows_atomic(rows, target, metadata={CONVERTED_FROM: source_id})
    except OSError as err:  # the disk's fault, not the data's: not a rejection of the file
        raise OSError(
            f"{target}: cannot write the converted file ({one_line(err)}); free space there (or pass another "
            "--out-dir) and run again: downloaded files stay in staging and are not fetched twice"
        ) from err
    return Conversion(source, target, len(rows), dict(Counter(r["data_source"] for r in rows)), repeated)
