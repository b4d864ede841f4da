"""The verl parquet row schema rlif trains and evaluates on, and its validation.

Every file in ``verl_data/`` holds rows with the five columns verl 0.9.1 reads (``data_source``, ``prompt``,
``ability``, ``reward_model``, ``extra_info``). A malformed row would only show up hours into a GPU run, as a zero
reward or a crash inside a Ray worker, so each file is checked once when it is built or downloaded. Structural
checks live here; whether a ground truth can be scored is asked of the reward router (``rewards.check_row``), the
same code that scores it during training. Every error names the file, the row and the field.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

COLUMNS = ("data_source", "prompt", "ability", "reward_model", "extra_info")
"""The columns verl reads, in the order rlif writes them."""

ROLES = frozenset({"system", "user", "assistant"})
"""Chat roles a prompt message may have."""

EXTRA_INFO_REQUIRED = ("split", "index", "item_id", "difficulty")
"""``extra_info`` fields every row carries; samplers and feedback rely on them."""

DIFFICULTY_LEVELS = frozenset({"easy", "medium", "hard"})
"""``extra_info.difficulty_level`` labels, as ``rlif.data.logicif_complexity.difficulty_level`` assigns them. LogicIF
rows also carry ``complexity_score`` (``complexity_extra_info``); both are null on other rows. LogicIF rows of an
evaluation file built against a training file carry ``training_interval`` (``rlif.data.logicif_intervals``)."""

SPLITS = frozenset({"train", "val", "test"})
"""``val`` is what the graph builder and the CPU demo write; ``test`` is what the eval-file builder writes."""

PROMPT_TYPE = pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))
REWARD_MODEL_TYPE = pa.struct([("style", pa.string()), ("ground_truth", pa.string())])
EXTRA_INFO_TYPE = pa.struct(
    [
        ("split", pa.string()),
        ("index", pa.int64()),
        ("item_id", pa.string()),
        ("difficulty", pa.float64()),
        ("key", pa.string()),
        ("task_id", pa.string()),
        ("test_case_id", pa.string()),
        ("complexity_score", pa.float64()),
        ("difficulty_level", pa.string()),
        ("training_interval", pa.int64()),
    ]
)
SCHEMA = pa.schema(
    [
        ("data_source", pa.string()),
        ("prompt", PROMPT_TYPE),
        ("ability", pa.string()),
        ("reward_model", REWARD_MODEL_TYPE),
        ("extra_info", EXTRA_INFO_TYPE),
    ]
)
"""The exact arrow schema rlif writes, so that every file, whatever its sources, has the same column types."""

RowChecker = Callable[[str, str, Mapping[str, Any] | None], None]
"""``check(data_source, ground_truth, extra_info)`` raising ``ValueError``: ``rewards.check_row``'s signature."""


@dataclass(frozen=True)
class FileSummary:
    """What a validated file holds, for the download and build tables.

    Attributes:
        path: the file.
        rows: number of rows.
        sources: rows per ``data_source``.
        splits: rows per ``extra_info.split``.
    """

    path: Path
    rows: int
    sources: Mapping[str, int]
    splits: Mapping[str, int]


def row_error(where: str, field: str, message: str) -> ValueError:
    """Build the one error shape every data check raises: ``<file>: row <i>: field <name>: <what is wrong>``."""
    return ValueError(f"{where}: field {field}: {message}")


def default_row_checker() -> RowChecker:
    """Return ``rewards.check_row``; imported late so that structural checks work without the reward stack."""
    from rewards import check_row

    return check_row


def validate_row(row: Mapping[str, Any], *, where: str, check_ground_truth: RowChecker | None = None) -> None:
    """Check one row's structure, then ask the reward router whether its ground truth can be scored.

    Args:
        row: the row as plain Python values (``pyarrow``'s ``to_pylist`` form).
        where: ``"<file>: row <i>"``, put at the front of every error.
        check_ground_truth: the router's ``check_row``; ``None`` uses ``rewards.check_row``.

    Raises:
        ValueError: a field is missing, has the wrong type or value, or the router rejects the ground truth.
    """
    missing = [c for c in COLUMNS if c not in row]
    if missing:
        raise row_error(where, missing[0], "column missing")
    source = row["data_source"]
    if not isinstance(source, str) or not source:
        raise row_error(where, "data_source", f"must be a non-empty string, got {source!r}")
    _validate_prompt(row["prompt"], where)
    if not isinstance(row["ability"], str) or not row["ability"]:
        raise row_error(where, "ability", f"must be a non-empty string, got {row['ability']!r}")
    ground_truth = _validate_reward_model(row["reward_model"], where)
    extra_info = row["extra_info"]
    _validate_extra_info(extra_info, where)
    if check_ground_truth is None:
        _check_source_known(source, where)
        check_ground_truth = default_row_checker()
    # Arrow stores an optional field a row does not have as null; the router sees only the fields with a value.
    present = {k: v for k, v in extra_info.items() if v is not None}
    try:
        check_ground_truth(source, ground_truth, present)
    except ValueError as err:
        raise row_error(where, "reward_model.ground_truth", str(err)) from err


def _check_source_known(source: str, where: str) -> None:
    import rewards  # noqa: F401  (importing the package registers every task family)
    from rewards.registry import family_for

    try:
        family_for(source)
    except ValueError as err:
        raise row_error(where, "data_source", str(err)) from err


def _validate_prompt(prompt: Any, where: str) -> None:
    if not isinstance(prompt, list) or not prompt:
        raise row_error(where, "prompt", "must be a non-empty list of {role, content} messages")
    for i, message in enumerate(prompt):
        field = f"prompt[{i}]"
        if not isinstance(message, Mapping):
            raise row_error(where, field, f"must be a {{role, content}} mapping, got {type(message).__name__}")
        if message.get("role") not in ROLES:
            raise row_error(where, f"{field}.role", f"must be one of {sorted(ROLES)}, got {message.get('role')!r}")
        content = message.get("content")
        if not isinstance(content, str) or not content.strip():
            raise row_error(where, f"{field}.content", "must be a non-empty string")
    if prompt[-1]["role"] != "user":
        raise row_error(where, f"prompt[{len(prompt) - 1}].role", "the last message must be the user's")


def _validate_reward_model(reward_model: Any, where: str) -> str:
    if not isinstance(reward_model, Mapping):
        raise row_error(where, "reward_model", "must be a {style, ground_truth} mapping")
    if reward_model.get("style") != "rule":
        raise row_error(where, "reward_model.style", f"must be 'rule', got {reward_model.get('style')!r}")
    ground_truth = reward_model.get("ground_truth")
    if not isinstance(ground_truth, str):
        raise row_error(where, "reward_model.ground_truth", "must be a JSON string")
    try:
        json.loads(ground_truth)
    except json.JSONDecodeError as err:
        raise row_error(where, "reward_model.ground_truth", f"is not valid JSON ({err.msg})") from err
    return ground_truth


def _validate_extra_info(extra_info: Any, where: str) -> None:
    if not isinstance(extra_info, Mapping):
        raise row_error(where, "extra_info", "must be a mapping")
    for name in EXTRA_INFO_REQUIRED:
        if extra_info.get(name) is None:
            raise row_error(where, f"extra_info.{name}", "missing")
    if extra_info["split"] not in SPLITS:
        raise row_error(where, "extra_info.split", f"must be one of {sorted(SPLITS)}, got {extra_info['split']!r}")
    index = extra_info["index"]
    if isinstance(index, bool) or not isinstance(index, int) or index < 0:
        raise row_error(where, "extra_info.index", f"must be a non-negative integer, got {index!r}")
    item_id = extra_info["item_id"]
    if not isinstance(item_id, str) or not item_id:
        raise row_error(where, "extra_info.item_id", f"must be a non-empty string, got {item_id!r}")
    difficulty = extra_info["difficulty"]
    if isinstance(difficulty, bool) or not isinstance(difficulty, int | float) or not math.isfinite(difficulty):
        raise row_error(where, "extra_info.difficulty", f"must be a finite number, got {difficulty!r}")
    if difficulty < 0:
        raise row_error(where, "extra_info.difficulty", f"must be >= 0, got {difficulty!r}")
    score = extra_info.get("complexity_score")
    if score is not None and not _finite_number(score):
        raise row_error(where, "extra_info.complexity_score", f"must be a finite number, got {score!r}")
    interval = extra_info.get("training_interval")
    if interval is not None and (isinstance(interval, bool) or not isinstance(interval, int) or interval < 0):
        raise row_error(where, "extra_info.training_interval", f"must be a non-negative integer, got {interval!r}")
    level = extra_info.get("difficulty_level")
    if level is not None and level not in DIFFICULTY_LEVELS:
        raise row_error(
            where, "extra_info.difficulty_level", f"must be one of {sorted(DIFFICULTY_LEVELS)}, got {level!r}"
        )


def _finite_number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, int | float) and math.isfinite(value)


def validate_table_schema(schema: pa.Schema, *, where: str) -> None:
    """Check the arrow types of the five verl columns before any row is read.

    Raises:
        ValueError: a column is missing or its type cannot hold the rlif row shape (names the file and column).
    """
    for name in COLUMNS:
        if name not in schema.names:
            raise ValueError(f"{where}: column {name} missing (found {schema.names})")
    _expect_type(schema.field("data_source").type, pa.string(), where, "data_source")
    _expect_type(schema.field("ability").type, pa.string(), where, "ability")
    prompt_type = schema.field("prompt").type
    if not (pa.types.is_list(prompt_type) or pa.types.is_large_list(prompt_type)) or not _struct_has(
        prompt_type.value_type, ("role", "content")
    ):
        raise ValueError(f"{where}: column prompt has type {prompt_type}, expected list<struct<role, content>>")
    if not _struct_has(schema.field("reward_model").type, ("style", "ground_truth")):
        raise ValueError(
            f"{where}: column reward_model has type {schema.field('reward_model').type}, "
            "expected struct<style, ground_truth>"
        )
    if not _struct_has(schema.field("extra_info").type, EXTRA_INFO_REQUIRED):
        raise ValueError(
            f"{where}: column extra_info has type {schema.field('extra_info').type}, "
            f"expected a struct with at least {list(EXTRA_INFO_REQUIRED)}"
        )


def _expect_type(actual: pa.DataType, expected: pa.DataType, where: str, column: str) -> None:
    if actual != expected and not (pa.types.is_large_string(actual) and pa.types.is_string(expected)):
        raise ValueError(f"{where}: column {column} has type {actual}, expected {expected}")


def _struct_has(data_type: pa.DataType, names: tuple[str, ...]) -> bool:
    return pa.types.is_struct(data_type) and all(data_type.get_field_index(n) >= 0 for n in names)


def one_line(err: BaseException) -> str:
    """An exception's message on one line (arrow's messages can span several), for one-line error reports."""
    return " ".join(str(err).split()) or type(err).__name__


def iter_parquet_rows(path: Path, batch_size: int = 1024) -> Iterator[dict[str, Any]]:
    """Yield a parquet file's rows as plain dicts, a batch at a time, so large mixtures need little memory.

    Raises:
        ValueError: the file is missing or unreadable, not parquet, or a page is corrupt; one line naming the file
            (arrow's own errors name neither the file nor, for a bad page, anything a user can act on).
    """
    try:
        parquet = pq.ParquetFile(path)
        for batch in parquet.iter_batches(batch_size=batch_size):
            yield from batch.to_pylist()
    except (OSError, pa.ArrowException) as err:
        raise ValueError(f"{path}: not a readable parquet file ({one_line(err)})") from err


def validate_parquet(path: Path, *, check_ground_truth: RowChecker | None = None) -> FileSummary:
    """Validate every row of one verl parquet file and summarise it.

    Besides each row's own checks, ``extra_info.item_id`` must be unique within the file (samplers key their
    per-item statistics by it).

    Args:
        path: the parquet file.
        check_ground_truth: the router's ``check_row``; ``None`` uses ``rewards.check_row``.

    Returns:
        Row count and per-source and per-split counts.

    Raises:
        ValueError: the file cannot be read as parquet (missing, unreadable, corrupt page), a column has the wrong
            type, a row is invalid, or the file has no rows; one line naming the file (and the row and field).
    """
    path = Path(path)
    try:
        schema = pq.read_schema(path)
    except (OSError, pa.ArrowException) as err:
        raise ValueError(f"{path}: not a readable parquet file ({one_line(err)})") from err
    validate_table_schema(schema, where=str(path))
    sources: Counter[str] = Counter()
    splits: Counter[str] = Counter()
    first_row_of: dict[str, int] = {}
    rows = 0
    for i, row in enumerate(iter_parquet_rows(path)):
        where = f"{path}: row {i}"
        validate_row(row, where=where, check_ground_truth=check_ground_truth)
        item_id = row["extra_info"]["item_id"]
        if item_id in first_row_of:
            raise row_error(where, "extra_info.item_id", f"{item_id!r} repeats row {first_row_of[item_id]}")
        first_row_of[item_id] = i
        sources[row["data_source"]] += 1
        splits[row["extra_info"]["split"]] += 1
        rows += 1
    if rows == 0:
        raise ValueError(f"{path}: 0 rows (an empty data file; a training or validation set needs at least one row)")
    return FileSummary(path=path, rows=rows, sources=dict(sources), splits=dict(splits))
