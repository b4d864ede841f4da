"""Convert rows of the upstream IF and LogicIF formats into rlif's verl rows.

Accepted inputs, recognised by their fields (so one file list can mix formats):

* open-instruct IF training rows (``allenai/IF_multi_constraints_upto5``): ``messages`` + ``ground_truth`` (a
  Python-literal list of ``{instruction_id, kwargs}``), optional ``key``; become ``iftrain``.
* IFEval / IFBench benchmark rows: ``key``, ``prompt`` (str), ``instruction_id_list``, ``kwargs``; become
  ``ifeval`` or ``ifbench`` (the caller says which, since the rows look alike).
* LogicIFEval rows: ``task_id``, ``test_case_id``, ``instruction``, ``code_output``, ``function``; become
  ``logicif`` with the function's complexity fields (``complexity_score``, ``difficulty``, ``difficulty_level``)
  in ``extra_info``.
* RLIF verl rows (``prompt`` as chat messages + ``reward_model``); their ground truth decides IF or LogicIF.

Ground truth is always rewritten into the canonical JSON of the reward family that scores it (the families own
those formats: each declares its normaliser, ``rewards.normalize_ground_truth`` calls it), so training never
re-parses Python literals. Rows are made by ``rlif.data.rows.verl_row``, which takes ``ability`` from the family.
Each row gets a stable ``item_id`` derived from the upstream ids, or from the content when a format has none, so
the same row keeps its id across rebuilds.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from rewards import family_named, normalize_ground_truth
from rlif.data.rows import verl_row
from rlif.data.schema import DIFFICULTY_LEVELS

IF_SOURCES = frozenset(family_named("if").prefixes)
"""rlif ``data_source`` values scored by the instruction-following family (as it declares them)."""

(LOGICIF_SOURCE,) = family_named("logicif").prefixes
"""The one ``data_source`` of LogicIF rows."""


def convert_row(raw: Mapping[str, Any], *, where: str, benchmark: str | None = None) -> dict[str, Any]:
    """Convert one upstream row into an rlif verl row (``split="train"``, ``index=0``; builders set both).

    Args:
        raw: the upstream row.
        where: ``"<file>: row <i>"`` for error messages.
        benchmark: ``"ifeval"`` or ``"ifbench"`` for benchmark-format rows, which cannot be told apart by their
            fields; ignored for the other formats.

    Returns:
        The verl row.

    Raises:
        ValueError: the row's format is not recognised, or a field is missing or malformed (names file, row
            and field).
    """
    if "messages" in raw and "ground_truth" in raw:
        return _from_open_instruct(raw, where)
    if "instruction_id_list" in raw:
        if benchmark not in {"ifeval", "ifbench"}:
            raise ValueError(f"{where}: IFEval/IFBench-format row but the file was not given as ifeval or ifbench")
        return _from_if_benchmark(raw, where, benchmark)
    if "task_id" in raw and "code_output" in raw:
        return _from_logicif_eval(raw, where)
    if isinstance(raw.get("prompt"), list) and isinstance(raw.get("reward_model"), Mapping):
        return _from_rlif(raw, where)
    raise ValueError(
        f"{where}: unrecognised row format (fields {sorted(raw)}); expected open-instruct IF, IFEval/IFBench, "
        "LogicIFEval or RLIF verl rows"
    )


def prompt_key(prompt: list[Mapping[str, str]]) -> str:
    """Identity of a prompt for dedupe and overlap checks: its messages with whitespace runs collapsed."""
    text = "\n".join(f"{m['role']}:{' '.join(str(m['content']).split())}" for m in prompt)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _content_id(prefix: str, *parts: str) -> str:
    digest = hashlib.sha256("\x00".join(parts).encode("utf-8")).hexdigest()[:16]
    return f"{prefix}:{digest}"


def _require(raw: Mapping[str, Any], field: str, where: str) -> Any:
    value = raw.get(field)
    if value is None:
        raise ValueError(f"{where}: field {field}: missing")
    return value


def _row(source: str, prompt: list[dict[str, str]], ground_truth: str, extra: dict[str, Any]) -> dict[str, Any]:
    return verl_row(source, prompt, ground_truth, {"split": "train", "index": 0, **extra})


def _user_prompt(text: Any, where: str, field: str) -> list[dict[str, str]]:
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"{where}: field {field}: must be a non-empty string")
    return [{"role": "user", "content": text}]


def _normalize_if(raw_truth: Any, where: str) -> str:
    return normalize_ground_truth("iftrain", raw_truth, where=where)


def _normalize_logicif(raw_truth: Any, where: str) -> str:
    return normalize_ground_truth(LOGICIF_SOURCE, raw_truth, where=where)


def _complexity(source_code: Any, where: str, field: str) -> dict[str, Any]:
    """The curriculum fields of a LogicIF function: ``complexity_score``, ``difficulty`` and ``difficulty_level``.

    Computed from the source with ``ast`` (``rlif.data.logicif_complexity``, which reproduces the reference values),
    so samplers can rank rows and evaluations can break results down by level without a second pass.
    """
    if not isinstance(source_code, str) or not source_code.strip():
        raise ValueError(f"{where}: field {field}: must be the function's Python source")
    from rlif.data.logicif_complexity import complexity_extra_info

    info = complexity_extra_info(source_code, where=f"{where}: field {field}")
    return {**info, "complexity_score": float(info["complexity_score"]), "difficulty": float(info["difficulty"])}


def _from_open_instruct(raw: Mapping[str, Any], where: str) -> dict[str, Any]:
    messages = raw["messages"]
    if not isinstance(messages, list) or not messages:
        raise ValueError(f"{where}: field messages: must be a non-empty list of chat messages")
    prompt: list[dict[str, str]] = []
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping) or message.get("role") not in {"system", "user", "assistant"}:
            raise ValueError(f"{where}: field messages[{i}]: must be a {{role, content}} chat message")
        prompt.append({"role": str(message["role"]), "content": str(message.get("content") or "")})
    while prompt and prompt[-1]["role"] == "assistant":
        prompt.pop()  # a reference answer is not part of the RL prompt
    if not prompt or prompt[-1]["role"] != "user":
        raise ValueError(f"{where}: field messages: no user message to use as the prompt")
    ground_truth = _normalize_if(raw["ground_truth"], f"{where}: field ground_truth")
    key = raw.get("key")
    item_id = f"iftrain:{key}" if key not in (None, "") else _content_id("iftrain", prompt[-1]["content"], ground_truth)
    extra = {"item_id": item_id, "difficulty": 0.0, "key": None if key is None else str(key)}
    return _row("iftrain", prompt, ground_truth, extra)


def _from_if_benchmark(raw: Mapping[str, Any], where: str, benchmark: str) -> dict[str, Any]:
    key = _require(raw, "key", where)
    prompt = _user_prompt(raw.get("prompt"), where, "prompt")
    truth = {
        "instruction_id_list": _require(raw, "instruction_id_list", where),
        "kwargs": _require(raw, "kwargs", where),
    }
    ground_truth = _normalize_if(truth, f"{where}: field instruction_id_list/kwargs")
    extra = {"item_id": f"{benchmark}:{key}", "difficulty": 0.0, "key": str(key)}
    return _row(benchmark, prompt, ground_truth, extra)


def _from_logicif_eval(raw: Mapping[str, Any], where: str) -> dict[str, Any]:
    task_id = _require(raw, "task_id", where)
    test_case_id = _require(raw, "test_case_id", where)
    prompt = _user_prompt(raw.get("instruction"), where, "instruction")
    ground_truth = _normalize_logicif(dict(raw), f"{where}: field code_output")
    extra = {
        "item_id": f"logicif:{task_id}:{test_case_id}",
        **_complexity(raw.get("function"), where, "function"),
        "task_id": str(task_id),
        "test_case_id": str(test_case_id),
    }
    return _row(LOGICIF_SOURCE, prompt, ground_truth, extra)


def _from_rlif(raw: Mapping[str, Any], where: str) -> dict[str, Any]:
    prompt = []
    for i, message in enumerate(raw["prompt"]):
        if not isinstance(message, Mapping) or not isinstance(message.get("content"), str):
            raise ValueError(f"{where}: field prompt[{i}]: must be a {{role, content}} chat message")
        prompt.append({"role": str(message.get("role")), "content": message["content"]})
    if not prompt:
        raise ValueError(f"{where}: field prompt: must be a non-empty list of chat messages")
    truth = raw["reward_model"].get("ground_truth")
    if truth is None:
        raise ValueError(f"{where}: field reward_model.ground_truth: missing")
    parsed = _parse_json_if_str(truth)
    extra_in = raw.get("extra_info") if isinstance(raw.get("extra_info"), Mapping) else {}
    if isinstance(parsed, Mapping) and "code_output" in parsed:
        ground_truth = _normalize_logicif(truth, f"{where}: field reward_model.ground_truth")
        task_id = parsed.get("task_id")
        extra = {
            "item_id": _content_id(LOGICIF_SOURCE, prompt[-1]["content"], ground_truth),
            **_rlif_complexity(raw, extra_in, where),
            "task_id": None if task_id is None else str(task_id),
        }
        return _row(LOGICIF_SOURCE, prompt, ground_truth, extra)
    if isinstance(parsed, Mapping) and "instruction_ids" in parsed and "prompt" in parsed:
        # RLIF's IF reward reads an optional copy of the prompt next to the instructions; rlif's checkers take
        # what they need from the kwargs (``prompt_to_repeat``), and the prompt itself is the row's ``prompt``.
        truth = {k: v for k, v in parsed.items() if k != "prompt"}
    ground_truth = _normalize_if(truth, f"{where}: field reward_model.ground_truth")
    source = raw.get("data_source") if raw.get("data_source") in IF_SOURCES else "iftrain"
    extra = {"item_id": _content_id(source, prompt[-1]["content"], ground_truth), "difficulty": 0.0}
    return _row(source, prompt, ground_truth, extra)


def _rlif_complexity(raw: Mapping[str, Any], extra_in: Mapping[str, Any], where: str) -> dict[str, Any]:
    """Curriculum fields of an RLIF LogicIF row.

    With the function source (``extra_info.function`` or a top-level ``function``) all three fields are computed
    from it, like for LogicIFEval rows. Without it the stored score is kept as both ``complexity_score`` and
    ``difficulty`` (a stored ``difficulty_level`` is kept when it is a known label, otherwise it stays null), since
    the level cannot be derived from the score alone; with neither the row is rejected.
    """
    for holder, name in ((extra_in, "extra_info.function"), (raw, "function")):
        code = holder.get("function")
        if code is not None:
            return _complexity(code, where, name)
    for holder, field in ((extra_in, "complexity_score"), (raw, "complexity_score"), (extra_in, "difficulty")):
        value = holder.get(field)
        if isinstance(value, int | float) and not isinstance(value, bool):
            level = extra_in.get("difficulty_level", raw.get("difficulty_level"))
            return {
                "complexity_score": float(value),
                "difficulty": float(value),
                "difficulty_level": level if level in DIFFICULTY_LEVELS else None,
            }
    raise ValueError(
        f"{where}: field extra_info.complexity_score: missing (a LogicIF row needs a complexity score or its "
        "function source to rank difficulty)"
    )


def _parse_json_if_str(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value
