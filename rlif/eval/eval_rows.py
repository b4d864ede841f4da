"""The rows an evaluation scores against: verl parquet files as rlif builds them (IF, LogicIF, graph, math).

Only the fields scoring needs are read (``data_source``, the last user message, ``reward_model.ground_truth``,
``extra_info``), so any verl file whose sources a reward family serves can be evaluated, whatever other columns it
has. Rows are named by ``extra_info.item_id``, which rlif's builders make unique and stable; every error names the
file, the row and the field.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from rewards import check_row
from rewards.registry import find_family


@dataclass(frozen=True)
class EvalRow:
    """One evaluation prompt.

    Attributes:
        item_id: ``extra_info.item_id``, the name response files use.
        data_source: the source a reward family serves (``rewards.registry``).
        prompt: the content of the last user message (the text response files may name the row by).
        ground_truth: ``reward_model.ground_truth``.
        extra_info: the row's ``extra_info`` without null fields (what the reward router is given in training).
        where: ``"<file>: row <i>"``.
        messages: the whole prompt (``role``/``content`` pairs, system messages included), what generation
            renders with the model's chat template.
    """

    item_id: str
    data_source: str
    prompt: str
    ground_truth: str
    extra_info: Mapping[str, Any]
    where: str
    messages: tuple[Mapping[str, str], ...] = ()

    def groups(self) -> dict[str, Any]:
        """The fields of ``extra_info`` its family's metrics read (``Evaluation.record_fields``) that this row has
        (a null field, as parquet stores a field other rows have, counts as absent)."""
        family = find_family(self.data_source)
        fields = () if family is None else family.evaluation.record_fields
        return {name: self.extra_info[name] for name in fields if self.extra_info.get(name) is not None}


def load_eval_rows(paths: Sequence[Path]) -> list[EvalRow]:
    """Read every row of the evaluation files, in order.

    Each row's source and ground truth are checked by the reward router (``rewards.check_row``), so a row no
    family can score fails here, before any response is read.

    Raises:
        ValueError: a file is missing or unreadable, a column or field is missing or of the wrong type, no reward
            family serves the row or can score its ground truth, or an ``item_id`` repeats
            (within or across files); the message names the file, the row and the field.
    """
    rows: list[EvalRow] = []
    first: dict[str, str] = {}
    for path in paths:
        for row in _read_file(Path(path)):
            if row.item_id in first:
                raise ValueError(f"{row.where}: field extra_info.item_id: {row.item_id!r} repeats {first[row.item_id]}")
            first[row.item_id] = row.where
            rows.append(row)
    return rows


def _read_file(path: Path) -> list[EvalRow]:
    if not path.is_file():
        raise ValueError(f"{path}: evaluation file not found")
    try:
        parquet = pq.ParquetFile(path)
    except (OSError, pa.ArrowException) as err:
        raise ValueError(f"{path}: not a readable parquet file ({err})") from err
    missing = [
        name
        for name in ("data_source", "prompt", "reward_model", "extra_info")
        if name not in parquet.schema_arrow.names
    ]
    if missing:
        raise ValueError(f"{path}: column {missing[0]} missing (found {parquet.schema_arrow.names})")
    out = []
    index = 0
    for batch in parquet.iter_batches(batch_size=1024):
        for raw in batch.to_pylist():
            out.append(_row(raw, f"{path}: row {index}"))
            index += 1
    return out


def _row(raw: Mapping[str, Any], where: str) -> EvalRow:
    source = raw.get("data_source")
    if not isinstance(source, str) or not source:
        raise ValueError(f"{where}: field data_source: must be a non-empty string, got {source!r}")
    extra = raw.get("extra_info")
    if not isinstance(extra, Mapping):
        raise ValueError(f"{where}: field extra_info: must be a mapping")
    present = {name: value for name, value in extra.items() if value is not None}
    item_id = present.get("item_id")
    if not isinstance(item_id, str) or not item_id:
        raise ValueError(f"{where}: field extra_info.item_id: must be a non-empty string, got {item_id!r}")
    reward_model = raw.get("reward_model")
    ground_truth = reward_model.get("ground_truth") if isinstance(reward_model, Mapping) else None
    if not isinstance(ground_truth, str):
        raise ValueError(f"{where}: field reward_model.ground_truth: must be a string")
    prompt = raw.get("prompt")
    messages = []
    for number, message in enumerate(prompt or []):
        fields = (message.get("role"), message.get("content")) if isinstance(message, Mapping) else (None, None)
        if not all(isinstance(value, str) for value in fields):
            raise ValueError(f"{where}: field prompt[{number}]: must have string role and content")
        messages.append({"role": message["role"], "content": message["content"]})
    users = [m for m in messages if m["role"] == "user"]
    if not users:
        raise ValueError(f"{where}: field prompt: needs a user message with string content")
    try:
        check_row(source, ground_truth, present)
    except ValueError as err:
        field = "" if str(err).startswith("reward_model.ground_truth") else "field reward_model.ground_truth: "
        raise ValueError(f"{where}: {field}{err}") from err
    return EvalRow(item_id, source, users[-1]["content"], ground_truth, present, where, tuple(messages))
